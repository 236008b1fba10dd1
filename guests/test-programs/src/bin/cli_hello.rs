//! The smallest useful command: prints one line.
fn main() {
    println!("hello");
}
