//! Copies stdin to stdout and prints its arguments to stderr.
use std::io::{Read, Write};

fn main() {
    let mut input = Vec::new();
    std::io::stdin().read_to_end(&mut input).expect("stdin");
    std::io::stdout().write_all(&input).expect("stdout");
    eprintln!("{}", test_programs::args().join(" "));
}
