//! Composition with WAC: the shipped `math` toolkit composes two other
//! toolkits (`math-ops`, a component built in the sandbox from WAT, and
//! `math-cli`, a Rust command importing its interface) into a command that
//! runs; the parts must be built and validated first, a composition may
//! not leave its toolkit or name anything but built toolkits, and a
//! tampered part is refused.

use crate::common::{text, wbx};
use std::path::{Path, PathBuf};

fn shipped(id: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../toolkits")
        .join(id)
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// A toolkits root holding the three math toolkits, with math-cli's
/// component where its author puts it (`dist/`).
fn math_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    for id in ["math-ops", "math-cli", "math"] {
        copy_dir(&shipped(id), &root.path().join(id));
    }
    let dist = root.path().join("math-cli/dist");
    std::fs::create_dir_all(&dist).unwrap();
    std::fs::copy(
        guest_artifacts::TOOLKIT_MATH_CLI,
        dist.join("math-cli.wasm"),
    )
    .unwrap();
    root
}

/// A home where math-ops and math-cli are built, and their root.
fn parts_built() -> (tempfile::TempDir, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    let root = math_root();
    for id in ["math-ops", "math-cli"] {
        let o = toolkit(home.path(), root.path(), &["build", id]);
        assert!(o.status.success(), "{id}: {}", text(&o.stderr));
    }
    (home, root)
}

fn toolkit(home: &Path, root: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["toolkit", "--root", root.to_str().unwrap()];
    all.extend_from_slice(args);
    // The operator vouches for this root: its toolkits are first-party.
    let vouched = [("WB_FIRST_PARTY_TOOLKITS", root.to_str().unwrap())];
    crate::common::wbx_env(home, &all, b"", &vouched)
}

#[test]
fn two_toolkits_composed_by_a_wac_file_make_a_third_that_runs() {
    let home = tempfile::tempdir().unwrap();
    let root = math_root();
    // The parts are not built yet: nothing is composed.
    let o = toolkit(home.path(), root.path(), &["build", "math"]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("toolkit `math-ops` is not built yet"),
        "{}",
        text(&o.stderr)
    );
    for id in ["math-ops", "math-cli", "math"] {
        let o = toolkit(home.path(), root.path(), &["verify", id]);
        assert!(o.status.success(), "{id}: {}", text(&o.stdout));
        let o = toolkit(home.path(), root.path(), &["build", id, "--json"]);
        assert!(o.status.success(), "{id}: {}", text(&o.stderr));
        let entry: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(entry["name"], id);
        assert_eq!(entry["tier"], "instance");
    }
    let o = wbx(home.path(), &["run", "math 40 2 -5"], b"");
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "37\n");
    // The command alone does not dock: its import is served only composed.
    let o = wbx(home.path(), &["run", "math-cli 1 2"], b"");
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("example:math/ops"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn wbx_compose_writes_and_registers_the_same_component_from_the_shipped_wac_file() {
    let (home, root) = parts_built();
    let out = home.path().join("math.wasm");
    let wac = shipped("math").join("math.wac");
    let o = wbx(
        home.path(),
        &[
            "compose",
            wac.to_str().unwrap(),
            "--root",
            root.path().to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--register",
            "adder",
            "--json",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let parts: Vec<&str> = report["parts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["package"].as_str().unwrap())
        .collect();
    assert_eq!(parts, ["toolkit:math-ops", "toolkit:math-cli"]);
    let written = std::fs::read(&out).unwrap();
    assert_eq!(report["size"], written.len());
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(&written)
        .unwrap();
    let o = wbx(home.path(), &["run", "adder 5 6"], b"");
    assert_eq!(text(&o.stdout), "11\n", "{}", text(&o.stderr));
    // --dep takes a file for a package in place of the toolkit's.
    let o = wbx(
        home.path(),
        &[
            "compose",
            wac.to_str().unwrap(),
            "--root",
            root.path().to_str().unwrap(),
            "--dep",
            &format!("toolkit:math-cli={}", guest_artifacts::TOOLKIT_MATH_CLI),
            "--register",
            "adder2",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = wbx(home.path(), &["run", "adder2 1 1"], b"");
    assert_eq!(text(&o.stdout), "2\n", "{}", text(&o.stderr));
}

#[test]
fn a_composition_naming_anything_but_a_built_toolkit_or_leaving_its_folder_is_refused() {
    let (home, root) = parts_built();
    let manifest = root.path().join("math/manifest.org");
    let original = std::fs::read_to_string(&manifest).unwrap();
    let wac = root.path().join("math/math.wac");
    let wac_text = std::fs::read_to_string(&wac).unwrap();
    let cases: &[(&str, &str, &str)] = &[
        // A package that is not a toolkit is never looked for elsewhere.
        (
            "math.wac",
            &wac_text.replace("toolkit:math-ops {}", "wasi:evil {}"),
            "package `wasi:evil`: only built toolkits compose",
        ),
        // A toolkit that does not exist.
        (
            "math.wac",
            &wac_text.replace("toolkit:math-ops {}", "toolkit:nowhere {}"),
            "no toolkit `nowhere`",
        ),
        // Not WAC at all: the parser names the line.
        (
            "math.wac",
            "package toolkit:math;\nlet = ;\n",
            "math.wac:2:",
        ),
        // Out of the toolkit's folder.
        (
            "../math-ops/src/ops.wat",
            &wac_text,
            "must be a file inside the toolkit",
        ),
    ];
    for (file, text_, expect) in cases {
        std::fs::write(&wac, text_).unwrap();
        std::fs::write(
            &manifest,
            original.replace("#+COMPOSE: math.wac", &format!("#+COMPOSE: {file}")),
        )
        .unwrap();
        let o = toolkit(home.path(), root.path(), &["build", "math"]);
        assert!(!o.status.success(), "{file}: {expect}");
        assert!(text(&o.stderr).contains(expect), "{}", text(&o.stderr));
        let o = wbx(home.path(), &["command", "show", "math"], b"");
        assert!(!o.status.success(), "nothing registered for {expect}");
    }
}

#[test]
fn a_part_whose_stored_bytes_were_tampered_with_is_not_composed() {
    let (home, root) = parts_built();
    let o = wbx(home.path(), &["command", "list", "--json"], b"");
    let list: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let sha = list["registered"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "math-ops")
        .unwrap()["sha256"]
        .as_str()
        .unwrap()
        .to_string();
    let stored = home.path().join("store").join(format!("{sha}.wasm"));
    let mut bytes = std::fs::read(&stored).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&stored, bytes).unwrap();
    let o = toolkit(home.path(), root.path(), &["build", "math"]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("artifact_integrity"),
        "{}",
        text(&o.stderr)
    );
}
