//! Writes argv[1] MiB of `x` to stdout, a MiB at a time, and stops quietly
//! (exit 3) at the first write the host refuses.
use std::io::Write;

fn main() {
    let mib: usize = test_programs::args()
        .first()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    let chunk = vec![b'x'; 1 << 20];
    let mut out = std::io::stdout().lock();
    for _ in 0..mib {
        if out.write_all(&chunk).is_err() {
            test_programs::exit(3);
        }
    }
    let _ = out.flush();
}
