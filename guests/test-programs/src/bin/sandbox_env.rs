//! Prints every environment variable and argument it can see.
fn main() {
    for (k, v) in std::env::vars() {
        println!("env {k}={v}");
    }
    for a in std::env::args() {
        println!("arg {a}");
    }
}
