//! Blocks in the host (a monotonic-clock sleep) instead of spinning in wasm.
fn main() {
    std::thread::sleep(std::time::Duration::from_secs(3600));
}
