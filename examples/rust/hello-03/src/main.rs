//! A WASI 0.3 command. `run` is an async export: it awaits a host timer
//! and writes through a 0.3 stream, the way a `wasi:cli/command@0.3.0`
//! component does. Built for `wasm32-wasip2` like any Rust component; the
//! standard library's own imports stay at 0.2 beside the 0.3 ones.

use wasip3::clocks::monotonic_clock;
use wasip3::exports::cli::run::Guest;

struct Hello;

wasip3::cli::command::export!(Hello);

impl Guest for Hello {
    async fn run() -> Result<(), ()> {
        let names: Vec<String> = wasip3::cli::environment::get_arguments()
            .into_iter()
            .skip(1)
            .collect();
        let before = monotonic_clock::now();
        monotonic_clock::wait_for(10_000_000).await; // 10 ms
        let waited_ms = (monotonic_clock::now() - before) / 1_000_000;
        let who = if names.is_empty() {
            "world".to_string()
        } else {
            names.join(" and ")
        };
        let line = format!(
            "hello, {who}, from WASI 0.3 (waited {}+ ms)\n",
            waited_ms.min(10)
        );
        let (mut tx, rx) = wasip3::wit_stream::new::<u8>();
        let written = wasip3::cli::stdout::write_via_stream(rx);
        tx.write_all(line.into_bytes()).await;
        drop(tx);
        written.await.map_err(|_| ())
    }
}

fn main() {
    unreachable!("run through wasi:cli/run@0.3.0");
}
