//! Builds the engine's shipped components (brokers, built-in commands) to
//! wasm32-wasip2 and copies them into OUT_DIR, where `src/embedded.rs`
//! embeds them with `include_bytes!`.

#[path = "../../guests/build_support.rs"]
mod build_support;

/// The engine's own reader of a component's outermost imports.
#[path = "src/dock/imports/surface.rs"]
mod surface;

/// Guest crates embedded in `wbx` besides the brokers, by package name;
/// the artifact is the package name with `-` turned into `_`.
const BUILT_INS: &[&str] = &[
    "shell",
    "wbox",
    "jq",
    "grep",
    "upper",
    "search",
    "fetch",
    "wat-lane",
    "deny-sockets",
    "deny-http",
];

/// The cap word of every `guests/<word>-broker` crate, sorted: each is
/// shipped as the broker of `workbooks:engine/<word>@0.1.0`.
fn broker_words(guests: &std::path::Path) -> Vec<String> {
    let mut words: Vec<String> = std::fs::read_dir(guests)
        .expect("reading guests/")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("Cargo.toml").is_file())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_suffix("-broker").map(str::to_string)
        })
        .collect();
    words.sort();
    words
}

/// `embedded_brokers.rs`: one `BROKERS` entry per broker crate.
fn broker_table(words: &[String]) -> String {
    let mut table = String::from(
        "/// The shipped broker of every cap served by one, with the guest-facing\n\
         /// interface it exports; generated from the `guests/<word>-broker` crates.\n\
         pub(crate) const BROKERS: &[(Cap, &str, Embedded)] = &[\n",
    );
    for word in words {
        let variant: String = word[..1].to_uppercase() + &word[1..];
        let stem = format!("{word}_broker");
        table.push_str(&format!(
            "    (Cap::{variant}, \"workbooks:engine/{word}@0.1.0\", Embedded {{ name: \"workbooks:{word}-broker\", \
             bytes: include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{stem}.wasm\")), sha256: sha256::{} }}),\n",
            stem.to_uppercase()
        ));
    }
    table.push_str("];\n");
    table
}

/// `BROKER_IMPORTS`: what each shipped broker imports, read from its
/// binary here once, so an engine start does not parse every broker to
/// learn which host primitives serve which cap.
fn broker_imports(words: &[String], out: &std::path::Path) -> String {
    let mut table = String::from(
        "/// The top-level imports of every shipped broker, without versions,\n\
         /// in binary order; read from the built brokers.\n\
         pub(crate) const BROKER_IMPORTS: &[(Cap, &[&str])] = &[\n",
    );
    for word in words {
        let variant: String = word[..1].to_uppercase() + &word[1..];
        let file = out.join(format!("{word}_broker.wasm"));
        let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("reading {file:?}: {e}"));
        let imports = surface::surface(&bytes)
            .unwrap_or_else(|e| panic!("reading {file:?}: {e}"))
            .unwrap_or_else(|| panic!("{file:?} is a core module, not a component"))
            .imports;
        let names: Vec<String> = imports
            .iter()
            .map(|n| format!("{:?}", n.split_once('@').map_or(n.as_str(), |(p, _)| p)))
            .collect();
        table.push_str(&format!("    (Cap::{variant}, &[{}]),\n", names.join(", ")));
    }
    table.push_str("];\n");
    table
}

fn main() {
    let manifest =
        std::path::PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
    let root = build_support::repo_root(&manifest);
    let words = broker_words(&root.join("guests"));
    let brokers: Vec<String> = words.iter().map(|w| format!("{w}-broker")).collect();
    let shipped: Vec<&str> = brokers
        .iter()
        .map(String::as_str)
        .chain(BUILT_INS.iter().copied())
        .collect();
    let dir = build_support::build_guests(&root, &shipped);
    // Each component's sha256, computed here once instead of at every
    // engine start: `embedded_sha256.rs` holds one constant per component.
    let mut hashes = String::new();
    for pkg in &shipped {
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
    let mut table = broker_table(&words);
    table.push_str(&broker_imports(&words, &out));
    std::fs::write(out.join("embedded_brokers.rs"), table).expect("writing embedded_brokers.rs");
    let lock = root.join("Cargo.lock");
    println!("cargo:rerun-if-changed={}", lock.display());
    println!(
        "cargo:rustc-env=WAC_GRAPH_VERSION={}",
        locked_version(&lock, "wac-graph")
    );
    // The compile cache's engine key: a build with the compiler and one
    // without must name their entries alike (`src/artifact.rs`).
    println!(
        "cargo:rustc-env=WASMTIME_VERSION={}",
        locked_version(&lock, "wasmtime")
    );
    // The target as wasmtime checks a loaded artifact against it: the
    // architecture and the operating system. Generated code does not depend
    // on the C library, so a static musl runner loads what a glibc `wbx`
    // compiled.
    let cfg = |key: &str| std::env::var(key).expect("set by cargo");
    println!(
        "cargo:rustc-env=WB_TARGET={}-{}",
        cfg("CARGO_CFG_TARGET_ARCH"),
        cfg("CARGO_CFG_TARGET_OS")
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
