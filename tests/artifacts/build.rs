//! Builds `guests/test-programs` (one bin per test case) and writes
//! `gen.rs`: a path constant per probe and one `foreach_<suite>!` macro per
//! suite, so a host test can assert that every probe has a test.

#[path = "../../guests/build_support.rs"]
mod build_support;

use std::fmt::Write as _;

/// Every probe's name starts with one of these suites and an underscore.
const SUITES: &[&str] = &[
    "dock", "limits", "sandbox", "cli", "kv", "vfs", "instance", "commands", "exec", "net",
    "queue", "secrets", "serve", "tier", "pipe", "parallel", "stub", "wasi03",
];

fn main() {
    let manifest =
        std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
    let root = build_support::repo_root(&manifest);
    let dir = build_support::build_guests(
        &root,
        &[
            "test-programs",
            "test-programs-03",
            "test-broker-kv",
            "test-kernel",
            "math-cli",
            "tally",
            "counter",
        ],
    );

    // The probes at WASI 0.2 (the standard library's) and at 0.3 (async).
    let mut names: Vec<String> = ["test-programs", "test-programs-03"]
        .iter()
        .flat_map(|krate| {
            let bins = root.join("guests").join(krate).join("src/bin");
            std::fs::read_dir(&bins).unwrap_or_else(|e| panic!("reading {}: {e}", bins.display()))
        })
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix(".rs").map(str::to_string)
        })
        .collect();
    names.sort();

    let mut src = String::new();
    for name in &names {
        let suite = name.split('_').next().unwrap_or_default();
        assert!(
            SUITES.contains(&suite),
            "probe `{name}` does not start with a known suite ({SUITES:?})"
        );
        let path = dir.join(format!("{name}.wasm"));
        assert!(path.is_file(), "probe `{name}` was not built");
        writeln!(
            src,
            "/// The `{name}` probe.\npub const {}: &str = {:?};",
            name.to_uppercase(),
            path.display().to_string()
        )
        .unwrap();
    }
    // Components that are not probes: replacement brokers.
    let broker = dir.join("test_broker_kv.wasm");
    assert!(broker.is_file(), "test-broker-kv was not built");
    writeln!(
        src,
        "/// A replacement kv broker that namespaces keys and tries to reach past the host's limits.\npub const TEST_KV_BROKER: &str = {:?};",
        broker.display().to_string()
    )
    .unwrap();
    let kernel = dir.join("test_kernel.wasm");
    assert!(kernel.is_file(), "test-kernel was not built");
    writeln!(
        src,
        "/// A component kernel: answers `<calls>:<input reversed>`, traps on `trap`.\npub const TEST_KERNEL: &str = {:?};",
        kernel.display().to_string()
    )
    .unwrap();
    // The example toolkits' Rust components, built where their authors
    // would build them; the tests place them in the toolkit's `dist/`.
    for kit in ["math-cli", "tally"] {
        let built = dir.join(format!("{kit}.wasm"));
        assert!(built.is_file(), "toolkits/{kit} was not built");
        writeln!(
            src,
            "/// The `{kit}` example toolkit's component.\npub const TOOLKIT_{}: &str = {:?};",
            kit.replace('-', "_").to_uppercase(),
            built.display().to_string()
        )
        .unwrap();
    }
    // The Rust author guide's example (`docs/authors/rust.md`).
    let counter = dir.join("counter.wasm");
    assert!(counter.is_file(), "examples/rust/counter was not built");
    writeln!(
        src,
        "/// The Rust author guide's `plugin` example: counts inputs in kv.\npub const EXAMPLE_RUST_COUNTER: &str = {:?};",
        counter.display().to_string()
    )
    .unwrap();
    for suite in SUITES {
        writeln!(
            src,
            "/// Calls `$mac!(probe)` for every `{suite}_*` probe.\n#[macro_export]\nmacro_rules! foreach_{suite} {{\n    ($mac:ident) => {{"
        )
        .unwrap();
        for name in names.iter().filter(|n| n.starts_with(&format!("{suite}_"))) {
            writeln!(src, "        $mac!({name});").unwrap();
        }
        writeln!(src, "    }};\n}}").unwrap();
    }
    std::fs::write(out.join("gen.rs"), src).unwrap();
}
