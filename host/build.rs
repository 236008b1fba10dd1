//! Builds the engine's shipped components (brokers, built-in commands) to
//! wasm32-wasip2 and copies them into OUT_DIR, where `src/embedded.rs`
//! embeds them with `include_bytes!`.

#[path = "../guests/build_support.rs"]
mod build_support;

/// Guest crates embedded in `wbx`, by package name; the artifact is the
/// package name with `-` turned into `_`.
const SHIPPED: &[&str] = &[
    "kv-broker",
    "browse-broker",
    "shell",
    "wbox",
    "jq",
    "grep",
    "upper",
];

fn main() {
    let manifest =
        std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
    let root = build_support::repo_root(&manifest);
    let dir = build_support::build_guests(&root, SHIPPED);
    for pkg in SHIPPED {
        let file = format!("{}.wasm", pkg.replace('-', "_"));
        std::fs::copy(dir.join(&file), out.join(&file))
            .unwrap_or_else(|e| panic!("copying {file}: {e}"));
    }
}
