//! Imports only the exec interface and calls it once.
use test_programs::workbooks::engine::exec;

fn main() {
    let _ = exec::spawn("no-such-command", &[], b"");
    println!("exec answers");
}
