//! Fills `wasi:http` 0.3 header maps until the host refuses (seven values
//! of 16 KiB each per map, every map kept), prints what it holds and the
//! refusal, then reads stdin to its end, holding them while the host is
//! measured.

use test_programs_03::{out, read_stdin};
use wasip3::exports::cli::run::Guest;
use wasip3::http::types::Fields;

struct Probe;

wasip3::cli::command::export!(Probe);

impl Guest for Probe {
    async fn run() -> Result<(), ()> {
        let value = vec![b'a'; 16 << 10];
        let mut maps = Vec::new();
        let mut bytes = 0usize;
        let mut refused = None;
        'fill: for _ in 0..10_000 {
            let map = Fields::new();
            for i in 0..7 {
                match map.append(&format!("x-fill-{i}"), &value) {
                    Ok(()) => bytes += value.len(),
                    Err(e) => {
                        refused = Some(e);
                        break 'fill;
                    }
                }
            }
            maps.push(map);
        }
        let line = match refused {
            Some(e) => format!(
                "held {} maps, {bytes} value bytes; refused: {e:?}\n",
                maps.len()
            ),
            None => format!(
                "held {} maps, {bytes} value bytes; never refused\n",
                maps.len()
            ),
        };
        out(line.as_bytes()).await;
        read_stdin().await;
        drop(maps);
        Ok(())
    }
}

fn main() {
    unreachable!("a WASI 0.3 command runs through wasi:cli/run@0.3.0");
}
