//! Imports the kv interface: stores a value and reads it back.
use test_programs::workbooks::engine::kv;

fn main() {
    kv::set("probe", b"kv works").expect("set");
    let back = kv::get("probe").expect("get").expect("present");
    println!("{}", String::from_utf8_lossy(&back));
}
