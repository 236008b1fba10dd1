//! Copies stdin to stdout line by line and writes one stderr line per input
//! line, tagged with its first argument, so several of them in a pipeline
//! write stderr at once.
use std::io::{BufRead, Write};

fn main() {
    let tag = test_programs::args().into_iter().next().unwrap_or_default();
    let stdin = std::io::stdin().lock();
    let mut stdout = std::io::stdout().lock();
    let mut stderr = std::io::stderr().lock();
    for (n, line) in stdin.lines().enumerate() {
        let line = line.expect("stdin");
        writeln!(stdout, "{line}").expect("stdout");
        writeln!(stderr, "{tag} {n}").expect("stderr");
    }
}
