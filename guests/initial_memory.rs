//! Build script shared by the engine's command guests and the shell:
//! starts their wasm builds with room for a typical run's heap, so a pooled
//! instance rarely grows its memory (each growth is a protection change in
//! the host) and a reused pool slot keeps its pages mapped. Untouched pages
//! cost nothing: the host maps them lazily and resets only dirty ones.

/// Initial linear memory of the wasm build: the 1 MiB stack plus heap.
const INITIAL_MEMORY: u64 = 4 << 20;

fn main() {
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo:rustc-link-arg=--initial-memory={INITIAL_MEMORY}");
    }
}
