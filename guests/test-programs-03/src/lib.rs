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
