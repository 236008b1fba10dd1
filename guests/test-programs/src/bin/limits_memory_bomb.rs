//! Allocates and touches memory until growth is refused.
fn main() {
    let mut hoard: Vec<Vec<u8>> = Vec::new();
    loop {
        hoard.push(vec![0xA5; 1 << 20]);
        std::hint::black_box(&hoard);
    }
}
