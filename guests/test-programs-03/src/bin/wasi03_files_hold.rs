//! Opens the file `f` of the first preopen again and again through WASI
//! 0.3 and holds every descriptor: argv[1] is how many; prints `opened N`,
//! then the first error if one stopped it.

use test_programs_03::{args, out};
use wasip3::exports::cli::run::Guest;
use wasip3::filesystem::preopens::get_directories;
use wasip3::filesystem::types::{DescriptorFlags, OpenFlags, PathFlags};

struct Probe;

wasip3::cli::command::export!(Probe);

impl Guest for Probe {
    async fn run() -> Result<(), ()> {
        let want: usize = args().first().and_then(|a| a.parse().ok()).unwrap_or(100);
        let dirs = get_directories();
        let Some((dir, _)) = dirs.first() else {
            out(b"no preopen\n").await;
            return Err(());
        };
        let mut held = Vec::with_capacity(want);
        let mut stopped = None;
        for _ in 0..want {
            let opened = dir
                .open_at(
                    PathFlags::empty(),
                    "f".into(),
                    OpenFlags::empty(),
                    DescriptorFlags::READ,
                )
                .await;
            match opened {
                Ok(file) => held.push(file),
                Err(e) => {
                    stopped = Some(e);
                    break;
                }
            }
        }
        let mut report = format!("opened {}\n", held.len());
        if let Some(e) = stopped {
            report.push_str(&format!("error {e:?}\n"));
        }
        out(report.as_bytes()).await;
        Ok(())
    }
}

fn main() {
    unreachable!("a WASI 0.3 command runs through wasi:cli/run@0.3.0");
}
