//! The CLI's layering, checked: every top-level module is placed in
//! [`LAYERS`], and each may import only from the modules before it.

/// Lowest first: the process's plumbing (and `wb`, a binary of its own,
/// which only sits in this folder),
/// the options every verb reads, the verbs, then the verbs built on verbs.
const LAYERS: &[&str] = &[
    "exit",
    "out",
    "log",
    "wb",
    "options",
    "profiles",
    "audit",
    "ledger",
    "secret",
    "grant",
    "agent",
    "oci",
    "cache",
    "call",
    "catalog",
    "command",
    "conformance",
    "env",
    "examples",
    "exec",
    "inspect",
    "kernel",
    "mcp",
    "net",
    "precompile",
    "run",
    "serve",
    "serve_api",
    "toolkit",
    "vfs",
    "warm",
    "bundle",
    "compose",
    "daemon",
    "fabric",
    "provenance",
    "worker",
    "reference",
    "layers",
];

#[test]
fn every_module_is_placed_and_none_imports_from_a_layer_above_it() {
    // `wbr` compiles this source too, from another package.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .find(|p| p.join("host/cli/src/main.rs").is_file())
        .expect("the repository root");
    let src = root.join("host/cli/src");
    let checked = layers::check(&src, LAYERS, &[]).unwrap_or_else(|e| panic!("{e}"));
    assert!(checked > 30, "checked only {checked} files");
}
