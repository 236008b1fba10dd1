//! Imports only the browse interface and calls it once (a destination
//! the floor refuses).
use test_programs::workbooks::engine::browse;

fn main() {
    let _ = browse::fetch_text("http://127.0.0.1:9/");
    println!("browse answers");
}
