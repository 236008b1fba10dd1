//! What the WASI 0.3 probes share: writing to stdout and stderr through
//! 0.3 streams, reading all of stdin, and the arguments.

use wasip3::cli::types::ErrorCode;
use wasip3::cli::{stderr, stdin, stdout};
use wasip3::wit_bindgen::{FutureReader, StreamReader};
use wasip3::wit_stream;

/// Writes `bytes` to stdout through a `stream<u8>`; false when the host
/// refused part of it (a closed or capped output).
pub async fn out(bytes: &[u8]) -> bool {
    write(stdout::write_via_stream, bytes).await
}

/// The same for stderr.
pub async fn err(bytes: &[u8]) -> bool {
    write(stderr::write_via_stream, bytes).await
}

/// Writes `bytes` through the stream `open` hands the host.
async fn write(
    open: fn(StreamReader<u8>) -> FutureReader<Result<(), ErrorCode>>,
    bytes: &[u8],
) -> bool {
    let (mut tx, rx) = wit_stream::new::<u8>();
    let done = open(rx);
    let left = tx.write_all(bytes.to_vec()).await;
    drop(tx);
    left.is_empty() && done.await.is_ok()
}

/// All of stdin.
pub async fn read_stdin() -> Vec<u8> {
    let (mut rx, done) = stdin::read_via_stream();
    let mut all = Vec::new();
    loop {
        let chunk = rx.read(Vec::with_capacity(8192)).await;
        match chunk {
            (wasip3::wit_bindgen::StreamResult::Complete(_), bytes) => all.extend(bytes),
            _ => break,
        }
    }
    drop(rx);
    let _ = done.await;
    all
}

/// The arguments after the program's name.
pub fn args() -> Vec<String> {
    wasip3::cli::environment::get_arguments()
        .into_iter()
        .skip(1)
        .collect()
}

/// The component model's built-ins for a `stream` of no payload, which
/// wit-component recognises by these names in the `$root` module: enough
/// to lead wasmtime 48.0.8 into its wrong-end defect (a stream's write
/// end cancelled and dropped as a read end) from any 0.3 guest.
pub mod unit_stream {
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

    /// What a unit stream's calls are given to write from or read into:
    /// one element, never touched, alive as long as the program.
    static mut BUFFER: [u8; 1] = [0];

    /// A new unit stream: its read end and its write end.
    pub fn new() -> (u32, u32) {
        // SAFETY: the built-in takes no argument.
        let handles = unsafe { unit_new() };
        (handles as u32, (handles >> 32) as u32)
    }

    /// Starts writing one unit to `end`: the call's return code.
    pub fn write(end: u32) -> u32 {
        // SAFETY: a unit stream never reads the buffer, which is static.
        unsafe { unit_write(end, (&raw const BUFFER).cast(), 1) }
    }

    /// Starts reading one unit from `end`: the call's return code.
    pub fn read(end: u32) -> u32 {
        // SAFETY: a unit stream never writes the buffer, which is static.
        unsafe { unit_read(end, (&raw mut BUFFER).cast(), 1) }
    }

    /// Cancels a read on `end`, whichever end it is: the return code.
    pub fn cancel_read(end: u32) -> u32 {
        // SAFETY: the built-in checks the handle; a bad one traps.
        unsafe { unit_cancel_read(end) }
    }

    /// Drops `end` as a read end, whichever end it is.
    pub fn drop_readable(end: u32) {
        // SAFETY: the built-in checks the handle; a bad one traps.
        unsafe { unit_drop_readable(end) }
    }
}
