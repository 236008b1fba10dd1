//! Imports only the secrets interface and calls it once.
use test_programs::workbooks::engine::secrets;

fn main() {
    let _ = secrets::ed25519_public_key("no-such-key");
    println!("secrets answers");
}
