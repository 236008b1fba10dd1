//! WASI 0.3 filesystem through the first preopen: writes `note.txt`,
//! reads it back, then tries what the sandbox forbids (a symlink that
//! climbs out, a path that climbs out) and prints each outcome as a line.

use test_programs_03::out;
use wasip3::exports::cli::run::Guest;
use wasip3::filesystem::preopens::get_directories;
use wasip3::filesystem::types::{DescriptorFlags, OpenFlags, PathFlags};
use wasip3::wit_bindgen::StreamResult;

struct Probe;

wasip3::cli::command::export!(Probe);

impl Guest for Probe {
    async fn run() -> Result<(), ()> {
        let mut report = String::new();
        let dirs = get_directories();
        let Some((dir, name)) = dirs.first() else {
            out(b"no preopen\n").await;
            return Err(());
        };
        report.push_str(&format!("preopen {name}\n"));
        let file = dir
            .open_at(
                PathFlags::empty(),
                "note.txt".into(),
                OpenFlags::CREATE | OpenFlags::TRUNCATE,
                DescriptorFlags::READ | DescriptorFlags::WRITE,
            )
            .await;
        match file {
            Ok(file) => {
                let (mut tx, rx) = wasip3::wit_stream::new::<u8>();
                let done = file.write_via_stream(rx, 0);
                tx.write_all(b"written at 0.3".to_vec()).await;
                drop(tx);
                report.push_str(&format!("write {:?}\n", done.await.is_ok()));
                let (mut rx, done) = file.read_via_stream(0);
                let mut back = Vec::new();
                while let (StreamResult::Complete(_), bytes) = rx.read(Vec::with_capacity(64)).await
                {
                    back.extend(bytes);
                }
                drop(rx);
                let _ = done.await;
                report.push_str(&format!("read {}\n", String::from_utf8_lossy(&back)));
            }
            Err(e) => report.push_str(&format!("open {e:?}\n")),
        }
        let escape = dir.symlink_at("../../etc".into(), "escape".into()).await;
        report.push_str(&format!("symlink out {escape:?}\n"));
        let inside = dir.symlink_at("note.txt".into(), "alias".into()).await;
        report.push_str(&format!("symlink in {inside:?}\n"));
        let climb = dir
            .open_at(
                PathFlags::empty(),
                "../outside.txt".into(),
                OpenFlags::CREATE,
                DescriptorFlags::WRITE,
            )
            .await
            .map(|_| ());
        report.push_str(&format!("climb {climb:?}\n"));
        out(report.as_bytes()).await;
        Ok(())
    }
}

fn main() {
    unreachable!("a WASI 0.3 command runs through wasi:cli/run@0.3.0");
}
