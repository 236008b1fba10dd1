//! Imports only wasi:http/types (no outbound reach) and makes a value.
use test_programs::wasi::http::types::Fields;

fn main() {
    let _fields = Fields::new();
    println!("http-types answers");
}
