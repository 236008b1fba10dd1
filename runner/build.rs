//! The static x86_64 musl runner enters through the CLI's
//! `src/cli/start.rs`, which populates its writable segment before it
//! relocates itself (the host crate's build script does the same for
//! `wbx`).

fn main() {
    let cfg = |key: &str| std::env::var(key).unwrap_or_default();
    if cfg("CARGO_CFG_TARGET_ENV") == "musl"
        && cfg("CARGO_CFG_TARGET_ARCH") == "x86_64"
        && cfg("CARGO_CFG_TARGET_OS") == "linux"
    {
        println!("cargo:rustc-link-arg-bin=wbr=-Wl,-e,workbooks_populate_then_start");
    }
}
