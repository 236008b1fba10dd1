//! Imports only the tls interface and calls it once (a destination the
//! floor refuses).
use test_programs::workbooks::engine::tls;

fn main() {
    let _ = tls::request("127.0.0.1", 9, b"");
    println!("tls answers");
}
