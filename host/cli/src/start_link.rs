// The link side of `start.rs`, included by `host/cli/build.rs` (for `wbx`) and
// `runner/build.rs` (for `wbr`): one place says which targets are linked
// for a fast static start, and this condition matches the `cfg` on
// `mod start` in `main.rs`.

/// Links `bin` for a fast start when the target is x86_64 Linux with musl,
/// the one target the stub is built for.
///
/// It enters through `workbooks_populate_then_start`, and its segments
/// start on 2 MiB boundaries, in the file as in memory
/// (`-z max-page-size`, as GNU ld lays it out): a 2 MiB folio of the page
/// cache can then be mapped whole, which the stub asks for. Even without
/// the stub's requests, it takes fewer faults: the large folios a freshly
/// written binary is cached in no longer straddle a segment's start, and
/// `wbr run true` took about 170 page faults instead of 240. The padding
/// costs no disk, as the linker leaves holes. (A glibc build, linked by
/// lld, keeps its layout: there the same flag only moved its addresses,
/// and its faults did not drop.)
fn link_for_a_fast_static_start(bin: &str) {
    let cfg = |key: &str| std::env::var(key).unwrap_or_default();
    if cfg("CARGO_CFG_TARGET_ENV") == "musl"
        && cfg("CARGO_CFG_TARGET_ARCH") == "x86_64"
        && cfg("CARGO_CFG_TARGET_OS") == "linux"
    {
        println!("cargo:rustc-link-arg-bin={bin}=-Wl,-e,workbooks_populate_then_start");
        println!("cargo:rustc-link-arg-bin={bin}=-Wl,-z,max-page-size=0x200000");
    }
}
