// Shared by the build scripts that turn guest crates into wasm32-wasip2
// components (host/core/build.rs for the engine's shipped components,
// tests/artifacts/build.rs for the test probes). Included with `#[path]`.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The target every guest is built for.
pub const WASM_TARGET: &str = "wasm32-wasip2";

/// The repository root, found from a build script's manifest dir.
pub fn repo_root(manifest_dir: &Path) -> PathBuf {
    manifest_dir
        .ancestors()
        .find(|p| p.join("guests").join("Cargo.toml").is_file() && p.join("wit").is_dir())
        .expect("build script must live inside the workbooks repository")
        .to_path_buf()
}

/// Makes sure the wasm32-wasip2 standard library is installed, adding it
/// through rustup when it is missing (auto-install may be switched off).
pub fn ensure_wasm_target() {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let libdir = Command::new(&rustc)
        .args(["--print", "target-libdir", "--target", WASM_TARGET])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| PathBuf::from(String::from_utf8_lossy(&o.stdout).trim()));
    if libdir.as_ref().is_some_and(|d| d.is_dir()) {
        return;
    }
    let added = Command::new("rustup")
        .args(["target", "add", WASM_TARGET])
        .status()
        .is_ok_and(|s| s.success());
    if !added {
        panic!(
            "the {WASM_TARGET} target is missing and could not be added; run `rustup target add {WASM_TARGET}`"
        );
    }
}

/// Builds `packages` of the guests workspace in release mode and returns the
/// directory holding their `.wasm` files. The guests get their own target
/// directory and none of the host's compiler flags or wrappers.
pub fn build_guests(root: &Path, packages: &[&str]) -> PathBuf {
    ensure_wasm_target();
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"))
        .join("wasm-guests");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.arg("build")
        .arg("--release")
        .arg("--target")
        .arg(WASM_TARGET)
        .arg("--manifest-path")
        .arg(root.join("guests").join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &target_dir);
    for p in packages {
        cmd.arg("-p").arg(p);
    }
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_MANIFEST_DIR",
    ] {
        cmd.env_remove(var);
    }
    let status = cmd.status().expect("failed to run cargo for the guests");
    assert!(status.success(), "building guests {packages:?} failed");

    println!("cargo:rerun-if-changed={}", root.join("wit").display());
    println!(
        "cargo:rerun-if-changed={}",
        root.join("guests").join("Cargo.toml").display()
    );
    println!(
        "cargo:rerun-if-changed={}",
        root.join("guests").join("Cargo.lock").display()
    );
    // The guests' shared parts: the exit helper, and every `guests/*.rs`
    // (this script, and the pieces brokers include).
    println!(
        "cargo:rerun-if-changed={}",
        root.join("guests").join("wb-cmd").display()
    );
    let shared = std::fs::read_dir(root.join("guests")).expect("reading guests/");
    for entry in shared.filter_map(|e| e.ok()) {
        if entry.path().extension().is_some_and(|x| x == "rs") {
            println!("cargo:rerun-if-changed={}", entry.path().display());
        }
    }
    // A package is a guest, an example toolkit's crate or an example (a
    // path that does not exist would rerun the script on every build).
    for p in packages {
        let dir = [
            root.join("guests").join(p),
            root.join("toolkits").join(p),
            root.join("examples").join("rust").join(p),
        ]
        .into_iter()
        .find(|d| d.is_dir())
        .unwrap_or_else(|| panic!("no crate folder for the guest package {p}"));
        println!("cargo:rerun-if-changed={}", dir.display());
    }
    target_dir.join(WASM_TARGET).join("release")
}
