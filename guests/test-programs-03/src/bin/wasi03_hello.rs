//! Prints `hello` through a WASI 0.3 stream: the 0.3 twin of `cli_hello`,
//! for the benchmark of instantiate and call at either version.

use wasip3::exports::cli::run::Guest;

struct Probe;

wasip3::cli::command::export!(Probe);

impl Guest for Probe {
    async fn run() -> Result<(), ()> {
        if test_programs_03::out(b"hello\n").await {
            Ok(())
        } else {
            Err(())
        }
    }
}

fn main() {
    unreachable!("a WASI 0.3 command runs through wasi:cli/run@0.3.0");
}
