//! Imports only the net interface and calls it once (a destination the
//! floor refuses, so nothing leaves the machine).
use test_programs::workbooks::engine::net;

fn main() {
    let _ = net::fetch("http://127.0.0.1:9/");
    println!("net answers");
}
