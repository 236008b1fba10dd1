//! Build script shared by the engine's command guests and the shell:
//! starts their wasm builds with room for a typical run's heap, so a pooled
//! instance rarely grows its memory (each growth is a protection change in
//! the host) and a reused pool slot keeps its pages mapped. Untouched pages
//! cost nothing: the host maps them lazily and resets only dirty ones.

/// Initial linear memory of the wasm build: the 1 MiB stack, the data and
/// the first heap, within one 2 MiB page-table span. Each reset of a pooled
/// slot scans every accessible page of it, so a larger start costs every
/// stage, while a run that needs more grows once or twice.
const INITIAL_MEMORY: u64 = 2 << 20;

fn main() {
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo:rustc-link-arg=--initial-memory={INITIAL_MEMORY}");
    }
}
