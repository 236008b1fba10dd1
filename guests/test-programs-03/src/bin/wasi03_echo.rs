//! A WASI 0.3 command: prints its arguments and `GREETING`, then copies
//! stdin to stdout upper-cased, and says so on stderr; `fail` as an
//! argument makes `run` return its error (exit 1).

use test_programs_03::{args, err, out, read_stdin};
use wasip3::exports::cli::run::Guest;

struct Probe;

wasip3::cli::command::export!(Probe);

impl Guest for Probe {
    async fn run() -> Result<(), ()> {
        let args = args();
        let greeting = wasip3::cli::environment::get_environment()
            .into_iter()
            .find(|(k, _)| k == "GREETING")
            .map(|(_, v)| v)
            .unwrap_or_default();
        let head = format!("0.3 args={args:?} greeting={greeting}\n");
        let input = read_stdin().await;
        let body = input.to_ascii_uppercase();
        if !(out(head.as_bytes()).await && out(&body).await) {
            return Err(());
        }
        err(format!("copied {} bytes\n", input.len()).as_bytes()).await;
        if args.iter().any(|a| a == "fail") {
            return Err(());
        }
        Ok(())
    }
}

fn main() {
    unreachable!("a WASI 0.3 command runs through wasi:cli/run@0.3.0");
}
