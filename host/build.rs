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
    "secrets-broker",
    "queue-broker",
    "tcp-broker",
    "udp-broker",
    "tls-broker",
    "commands-broker",
    "exec-broker",
    "vfs-broker",
    "net-broker",
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
    // Each component's sha256, computed here once instead of at every
    // engine start: `embedded_sha256.rs` holds one constant per component.
    let mut hashes = String::new();
    for pkg in SHIPPED {
        let file = format!("{}.wasm", pkg.replace('-', "_"));
        let bytes =
            std::fs::read(dir.join(&file)).unwrap_or_else(|e| panic!("reading {file}: {e}"));
        std::fs::write(out.join(&file), &bytes).unwrap_or_else(|e| panic!("writing {file}: {e}"));
        use sha2::Digest;
        let digest = sha2::Sha256::digest(&bytes);
        hashes.push_str(&format!(
            "pub(crate) const {}: [u8; 32] = {:?};\n",
            pkg.replace('-', "_").to_uppercase(),
            digest.as_slice()
        ));
    }
    std::fs::write(out.join("embedded_sha256.rs"), hashes).expect("writing embedded_sha256.rs");
    let lock = root.join("Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    println!(
        "cargo:rustc-env=WAC_GRAPH_VERSION={}",
        locked_version(&lock, "wac-graph")
    );
}

/// The version of `package` in a Cargo.lock, so the composer's version can
/// key the composition cache.
fn locked_version(lock: &std::path::Path, package: &str) -> String {
    let text = std::fs::read_to_string(lock).expect("reading Cargo.lock");
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() == format!("name = \"{package}\"") {
            let version = lines
                .next()
                .and_then(|l| l.trim().strip_prefix("version = "));
            if let Some(v) = version {
                return v.trim_matches('"').to_string();
            }
        }
    }
    panic!("{package} is not in {}", lock.display())
}
