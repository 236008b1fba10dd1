//! Imports only the udp interface and calls it once (a destination the
//! floor refuses).
use test_programs::workbooks::engine::udp;

fn main() {
    let _ = udp::request("127.0.0.1", 9, b"");
    println!("udp answers");
}
