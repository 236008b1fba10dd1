//! Tries to reach host files: each argument is a path to read; prints what
//! happened to each.
fn main() {
    for path in test_programs::args() {
        match std::fs::read(&path) {
            Ok(bytes) => println!("{path}: read {} bytes", bytes.len()),
            Err(e) => println!("{path}: denied: {e}"),
        }
    }
}
