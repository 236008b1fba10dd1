//! What every benchmark binary here shares: the median, the quiet-errors
//! setting, and whether this is a full `cargo bench` run.

use std::time::Duration;

/// The median of `xs`.
pub fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

/// Call first in `main`. Wasmtime errors capture a Rust backtrace whenever
/// `RUST_BACKTRACE` is set, and every dropped store makes one: that is
/// cost a benchmark must not measure. Returns whether this is a full run
/// (`cargo bench` passes `--bench`; `cargo test --benches` does not).
pub fn start() -> bool {
    // SAFETY: nothing else runs yet; the variable is read once, later.
    #[expect(unsafe_code, reason = "setting an env var before any thread starts")]
    unsafe {
        std::env::set_var("RUST_LIB_BACKTRACE", "0");
    }
    std::env::args().any(|a| a == "--bench")
}
