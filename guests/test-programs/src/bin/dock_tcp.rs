//! Imports only the tcp interface and calls it once (a destination the
//! floor refuses).
use test_programs::workbooks::engine::tcp;

fn main() {
    let _ = tcp::request("127.0.0.1", 9, b"");
    println!("tcp answers");
}
