//! Passes on its first line of stdin, says so on stderr, then traps while
//! its writer is still writing.
use std::io::{BufRead, Write};

fn main() {
    let mut first = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut first)
        .expect("stdin");
    std::io::stdout()
        .write_all(first.as_bytes())
        .expect("stdout");
    std::io::stdout().flush().expect("flush");
    eprintln!("pipe_trap_midstream: trapping after one line");
    std::process::abort();
}
