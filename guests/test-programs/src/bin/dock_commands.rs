//! Imports only the commands interface and calls it once.
use test_programs::workbooks::engine::commands;

fn main() {
    let _ = commands::run_command("no-such-command", &[], b"");
    println!("commands answers");
}
