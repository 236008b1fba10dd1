//! Imports only the queue interface and calls it once.
use test_programs::workbooks::engine::queue;

fn main() {
    let _ = queue::len("probe");
    println!("queue answers");
}
