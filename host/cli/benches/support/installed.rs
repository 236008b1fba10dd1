//! The engine's binaries as a user runs them: copied out of `target/`
//! (as `cargo install` does) into one directory, so `wbr` finds its
//! `wbx` beside it. A binary straight from the linker pages in measurably
//! slower than a copy of the same bytes (about 0.4 ms per start here), a
//! cost no installed binary pays.

use std::path::{Path, PathBuf};

/// Where the static musl build docs/operating.md documents lands, from the
/// project's root.
const MUSL_WBX: &str = "target/x86_64-unknown-linux-musl/release/wbx";

/// The builds to measure, each named (empty for this one) by its `wbx`:
/// this bench's, and the static musl build's when it is built (as it was
/// last built: no bench rebuilds it).
pub fn builds() -> Vec<(&'static str, PathBuf)> {
    let mut builds = vec![("", PathBuf::from(env!("CARGO_BIN_EXE_wbx")))];
    let musl = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(MUSL_WBX);
    if musl.is_file() {
        builds.push((" (static musl)", musl));
    } else {
        println!(
            "(no {}: build it as docs/operating.md's runner section says to measure it)",
            musl.display()
        );
    }
    builds
}

/// Copies of `wbx`, the thin client `wb` and, when it is built, `wbr`
/// (from beside `wbx`), in a directory that lives as long as the returned
/// guard.
pub fn runners(wbx: &Path) -> (tempfile::TempDir, Vec<(&'static str, PathBuf)>) {
    let dir = tempfile::tempdir().expect("install dir");
    let mut runners = Vec::new();
    for name in ["wbx", "wbr", "wb"] {
        let built = wbx.with_file_name(name);
        if !built.is_file() {
            // `wbr` is only slim when built on its own, so no bench builds
            // it; `wb` is built with `wbx`.
            println!(
                "(no {}: `cargo build --release -p {name}` to measure it)",
                built.display()
            );
            continue;
        }
        let copy = dir.path().join(name);
        std::fs::copy(&built, &copy).expect("copying a runner");
        runners.push((name, copy));
    }
    (dir, runners)
}
