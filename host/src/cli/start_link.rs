// The link side of `start.rs`, included by `host/build.rs` (for `wbx`) and
// `runner/build.rs` (for `wbr`): one place says which targets enter
// through the stub, and this condition matches the `cfg` on `mod start` in
// `main.rs`.

/// Makes `bin` enter through `workbooks_populate_then_start` when the
/// target is x86_64 Linux with musl, the one target the stub is built for.
fn enter_through_populate_stub(bin: &str) {
    let cfg = |key: &str| std::env::var(key).unwrap_or_default();
    if cfg("CARGO_CFG_TARGET_ENV") == "musl"
        && cfg("CARGO_CFG_TARGET_ARCH") == "x86_64"
        && cfg("CARGO_CFG_TARGET_OS") == "linux"
    {
        println!("cargo:rustc-link-arg-bin={bin}=-Wl,-e,workbooks_populate_then_start");
    }
}
