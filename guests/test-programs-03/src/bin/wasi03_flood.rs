//! Writes to stdout through a 0.3 stream without end, ignoring refusals:
//! the output cap must end it.

use wasip3::exports::cli::run::Guest;

struct Probe;

wasip3::cli::command::export!(Probe);

impl Guest for Probe {
    async fn run() -> Result<(), ()> {
        let line = vec![b'x'; 64 * 1024];
        loop {
            test_programs_03::out(&line).await;
        }
    }
}

fn main() {
    unreachable!("a WASI 0.3 command runs through wasi:cli/run@0.3.0");
}
