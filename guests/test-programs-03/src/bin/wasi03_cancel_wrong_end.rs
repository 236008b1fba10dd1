//! A WASI 0.3 guest that leads wasmtime 48.0.8 into one of its own defects
//! through the component model's stream built-ins alone: it makes a unit
//! stream, starts a write nobody reads, cancels a *read* on the write end
//! (48.0.8 takes it and records that end as a read end), drops that end
//! as a read end, then reads from the real read end. Prints each step's
//! return code; the last call ends the store.

use test_programs_03::{out, unit_stream};
use wasip3::exports::cli::run::Guest;

struct Probe;

wasip3::cli::command::export!(Probe);

impl Guest for Probe {
    async fn run() -> Result<(), ()> {
        let (read_end, write_end) = unit_stream::new();
        let wrote = unit_stream::write(write_end);
        out(format!("write {wrote:#x}\n").as_bytes()).await;
        let cancelled = unit_stream::cancel_read(write_end);
        out(format!("cancel-read on the write end {cancelled:#x}\n").as_bytes()).await;
        unit_stream::drop_readable(write_end);
        out(b"dropped the write end as a read end\n").await;
        let read = unit_stream::read(read_end);
        out(format!("read {read:#x}\n").as_bytes()).await;
        Ok(())
    }
}

fn main() {
    unreachable!("a WASI 0.3 command runs through wasi:cli/run@0.3.0");
}
