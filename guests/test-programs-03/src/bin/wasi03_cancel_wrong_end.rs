//! A WASI 0.3 guest that leads wasmtime 48.0.8 into one of its own defects
//! through the component model's stream built-ins alone: it makes a unit
//! stream, starts a write nobody reads, cancels a *read* on the write end
//! (48.0.8 takes it and records that end as a read end), drops that end
//! as a read end, then reads from the real read end. Prints each step's
//! return code; the last call ends the store.

use test_programs_03::out;
use wasip3::exports::cli::run::Guest;

// The canonical built-ins for a `stream` of no payload, which
// wit-component recognises by these names in the `$root` module.
#[link(wasm_import_module = "$root")]
unsafe extern "C" {
    #[link_name = "[stream-new-unit]"]
    fn unit_new() -> u64;
    #[link_name = "[async-lower][stream-write-unit]"]
    fn unit_write(stream: u32, val: *const u8, amt: usize) -> u32;
    #[link_name = "[async-lower][stream-read-unit]"]
    fn unit_read(stream: u32, val: *mut u8, amt: usize) -> u32;
    #[link_name = "[stream-cancel-read-unit]"]
    fn unit_cancel_read(stream: u32) -> u32;
    #[link_name = "[stream-drop-readable-unit]"]
    fn unit_drop_readable(stream: u32);
}

struct Probe;

wasip3::cli::command::export!(Probe);

impl Guest for Probe {
    async fn run() -> Result<(), ()> {
        // SAFETY: each built-in gets handles it made and a buffer that
        // outlives the call (a unit stream never writes into it).
        let handles = unsafe { unit_new() };
        let (read_end, write_end) = (handles as u32, (handles >> 32) as u32);
        let buffer = [0u8; 1];
        let wrote = unsafe { unit_write(write_end, buffer.as_ptr(), 1) };
        out(format!("write {wrote:#x}\n").as_bytes()).await;
        let cancelled = unsafe { unit_cancel_read(write_end) };
        out(format!("cancel-read on the write end {cancelled:#x}\n").as_bytes()).await;
        unsafe { unit_drop_readable(write_end) };
        out(b"dropped the write end as a read end\n").await;
        let mut into = [0u8; 1];
        let read = unsafe { unit_read(read_end, into.as_mut_ptr(), 1) };
        out(format!("read {read:#x}\n").as_bytes()).await;
        Ok(())
    }
}

fn main() {
    unreachable!("a WASI 0.3 command runs through wasi:cli/run@0.3.0");
}
