//! Holds ever more in flight: without arguments it spawns tasks without
//! end, each awaiting a host timer for an hour (a host-side wait per
//! task); with `streams` it opens stream pairs without end and keeps them
//! (a few bytes of its own memory per pair, an entry per end in the
//! host's tables). The attack on the host's per-store tables rather than
//! on the guest's own memory.

use wasip3::exports::cli::run::Guest;

struct Probe;

wasip3::cli::command::export!(Probe);

impl Guest for Probe {
    async fn run() -> Result<(), ()> {
        if test_programs_03::args().iter().any(|a| a == "streams") {
            loop {
                let pair = wasip3::wit_stream::new::<u8>();
                std::mem::forget(pair);
            }
        }
        for i in 0u64.. {
            wasip3::spawn_local(async {
                wasip3::clocks::monotonic_clock::wait_for(3_600_000_000_000).await;
            });
            if i % 64 == 0 {
                // Let the spawned tasks start their waits.
                wasip3::clocks::monotonic_clock::wait_for(0).await;
            }
        }
        Ok(())
    }
}

fn main() {
    unreachable!("a WASI 0.3 command runs through wasi:cli/run@0.3.0");
}
