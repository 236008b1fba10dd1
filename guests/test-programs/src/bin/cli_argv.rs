//! Prints its whole argv, argv[0] first, one per line.
fn main() {
    for arg in std::env::args() {
        println!("{arg}");
    }
}
