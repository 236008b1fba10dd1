//! Builds the components `wbx examples` writes out (the tour's
//! `hello.wasm`, `counter.wasm` and `math-cli.wasm`) from `examples/` and
//! `toolkits/`, with the engine's guests, when the `examples` feature is
//! on; `src/examples.rs` embeds them.

#![expect(
    clippy::disallowed_macros,
    reason = "a build script speaks to cargo on stdout"
)]

#[path = "../../guests/build_support.rs"]
mod build_support;

/// Each example's package and the file its build makes.
const EXAMPLES: &[(&str, &str)] = &[
    ("hello", "hello.wasm"),
    ("counter", "counter.wasm"),
    ("math-cli", "math-cli.wasm"),
];

fn main() {
    if std::env::var_os("CARGO_FEATURE_EXAMPLES").is_none() {
        return;
    }
    let manifest =
        std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
    let root = build_support::repo_root(&manifest);
    let packages: Vec<&str> = EXAMPLES.iter().map(|(p, _)| *p).collect();
    let dir = build_support::build_guests(&root, &packages);
    for (_, file) in EXAMPLES {
        let from = dir.join(file);
        std::fs::copy(&from, out.join(file))
            .unwrap_or_else(|e| panic!("copying {}: {e}", from.display()));
    }
}
