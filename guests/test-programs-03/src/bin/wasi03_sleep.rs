//! Awaits a host timer for an hour: no wasm runs while it waits, so only
//! the host's deadline can end it.

use wasip3::exports::cli::run::Guest;

struct Probe;

wasip3::cli::command::export!(Probe);

impl Guest for Probe {
    async fn run() -> Result<(), ()> {
        wasip3::clocks::monotonic_clock::wait_for(3_600_000_000_000).await;
        Ok(())
    }
}

fn main() {
    unreachable!("a WASI 0.3 command runs through wasi:cli/run@0.3.0");
}
