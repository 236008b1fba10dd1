//! A reader slower than any writer: takes stdin 512 bytes at a time,
//! sleeping a millisecond (in the host) every 64 KiB, then prints how many
//! bytes and lines it read and a checksum of them, so a test can tell that
//! back-pressure lost nothing.
use std::io::Read;

fn main() {
    let mut stdin = std::io::stdin().lock();
    let mut chunk = [0u8; 512];
    let (mut bytes, mut lines, mut sum) = (0u64, 0u64, 0u64);
    loop {
        let n = stdin.read(&mut chunk).expect("stdin");
        if n == 0 {
            break;
        }
        for b in &chunk[..n] {
            sum = sum.wrapping_mul(31).wrapping_add(u64::from(*b));
            lines += u64::from(*b == b'\n');
        }
        let before = bytes;
        bytes += n as u64;
        if before >> 16 != bytes >> 16 {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
    println!("{bytes} {lines} {sum}");
}
