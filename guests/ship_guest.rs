// For a service crate's build script (host/agent, host/toolkit): the
// service ships one guest of its own, embedded with `include_bytes!`.
// Included with `#[path]` beside `build_support.rs`.

use super::build_support;
use std::path::PathBuf;

/// Builds the guest `package` and copies its `.wasm` (the package name
/// with `-` turned into `_`) into OUT_DIR.
pub fn ship(package: &str) {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
    let dir = build_support::build_guests(&build_support::repo_root(&manifest), &[package]);
    let file = format!("{}.wasm", package.replace('-', "_"));
    std::fs::copy(dir.join(&file), out.join(&file))
        .unwrap_or_else(|e| panic!("copying {file}: {e}"));
}
