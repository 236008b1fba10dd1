//! The build lanes through the build broker: WAT text becomes the same
//! bytes the `wat` crate makes natively, bad text and text past the cap
//! are refused by name, a language with no lane names the compiler it
//! lacks; and the `js` lane packages a toolkit's script with the catalog's
//! QuickJS (only its pinned bytes) after compiling it in the sandbox, so a
//! syntax error registers nothing.

use crate::catalog::real_wheel;
use crate::common::{own_builder, text, wbx};
use std::path::Path;
use workbooks::{LineOptions, Stdin};
use workbooks_toolkit::{BuildError, Toolkits};

/// A toolkits root holding the shipped js-wordfreq, its script replaced
/// by `script` when given.
fn root_with(script: Option<&str>) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../toolkits/js-wordfreq");
    let dir = root.path().join("js-wordfreq");
    for sub in ["src", "skills"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    for f in ["manifest.org", "skills/overview.org", "src/wordfreq.js"] {
        std::fs::copy(shipped.join(f), dir.join(f)).unwrap();
    }
    if let Some(script) = script {
        std::fs::write(dir.join("src/wordfreq.js"), script).unwrap();
    }
    root
}

#[tokio::test]
async fn the_js_lane_needs_the_catalogs_own_quickjs() {
    let home = tempfile::tempdir().unwrap();
    let engine = own_builder(home.path()).build().unwrap();
    let root = root_with(None);
    let tk = Toolkits::new(Some(root.path().into()))
        .get("js-wordfreq")
        .unwrap();
    let err = workbooks_toolkit::Builds::new(engine.clone())
        .toolkit(&tk, false)
        .await
        .unwrap_err();
    assert!(matches!(err, BuildError::LaneUnavailable(_)), "{err}");
    assert!(err.to_string().contains("wbx catalog install qjs"), "{err}");
    // A command named qjs that is not the pinned QuickJS cannot even be
    // registered: the catalog's names hold only their pins.
    let impostor = std::fs::read(guest_artifacts::CLI_HELLO).unwrap();
    let refused = engine
        .registry()
        .register("qjs", impostor, Default::default(), Default::default())
        .unwrap_err();
    assert!(
        matches!(refused, workbooks::commands::RegistryError::Pinned { .. }),
        "{refused}"
    );
    let err = workbooks_toolkit::Builds::new(engine.clone())
        .toolkit(&tk, false)
        .await
        .unwrap_err();
    assert!(matches!(err, BuildError::LaneUnavailable(_)), "{err}");
    assert!(engine.registry().get("wordfreq").unwrap().is_none());
}

#[tokio::test]
async fn a_script_packaged_with_quickjs_runs_and_a_syntax_error_registers_nothing() {
    let wheel = real_wheel();
    let home = tempfile::tempdir().unwrap();
    let engine = own_builder(home.path()).build().unwrap();
    let mut row = workbooks_toolkit::catalog::row("qjs").unwrap().clone();
    row.url = format!("file://{}", wheel.display());
    workbooks_toolkit::catalog::Catalog::new(engine.clone())
        .install(&row)
        .await
        .unwrap();

    let broken = root_with(Some("let counts = ;\n"));
    let tk = Toolkits::new(Some(broken.path().into()))
        .get("js-wordfreq")
        .unwrap();
    let err = workbooks_toolkit::Builds::new(engine.clone())
        .toolkit(&tk, false)
        .await
        .unwrap_err();
    assert!(matches!(err, BuildError::Lane { lane: "js", .. }), "{err}");
    assert!(err.to_string().contains("SyntaxError"), "{err}");
    assert!(engine.registry().get("wordfreq").unwrap().is_none());

    // The operator's own root: first-party, so it runs in process.
    let root = root_with(None);
    let tk = Toolkits::new(Some(root.path().into()))
        .vouched(workbooks_toolkit::Vouch {
            roots: vec![root.path().into()],
            signers: Vec::new(),
        })
        .get("js-wordfreq")
        .unwrap();
    let entry = workbooks_toolkit::Builds::new(engine.clone())
        .toolkit(&tk, false)
        .await
        .unwrap();
    assert_eq!(entry.sha256, row.sha256, "the engine is QuickJS itself");
    assert_eq!(entry.tier, workbooks::commands::Tier::Instance);
    let out = engine
        .commands()
        .run_line(
            "wordfreq 2",
            LineOptions {
                stdin: Stdin::Bytes("The cat and the hat and THE bat".into()),
                ..LineOptions::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(out.exit, 0, "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "3 the\n2 and\n");
}

#[tokio::test]
async fn the_build_broker_compiles_wat_as_the_native_crate_does_and_refuses_by_name() {
    let home = tempfile::tempdir().unwrap();
    let engine = own_builder(home.path()).build().unwrap();
    let text = "(module (func (export \"f\") (result i32) i32.const 7))";
    let built = workbooks_toolkit::build_in_sandbox(&engine, "wat", text.as_bytes().to_vec())
        .await
        .unwrap();
    assert_eq!(built, wat::parse_str(text).unwrap());

    let err = workbooks_toolkit::build_in_sandbox(
        &engine,
        "wat",
        b"(module (func (result i32)))".to_vec(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(
            err,
            workbooks_toolkit::LaneError::Refused { lane: "wat", .. }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("type mismatch"), "{err}");

    let huge = vec![b' '; (32 << 20) + 1];
    let err = workbooks_toolkit::build_in_sandbox(&engine, "wat", huge)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("source_too_large"), "{err}");

    let err = workbooks_toolkit::build_in_sandbox(&engine, "rust", b"fn main() {}".to_vec())
        .await
        .unwrap_err();
    assert!(
        matches!(err, workbooks_toolkit::LaneError::Unavailable(_)),
        "{err}"
    );
    assert!(err.to_string().contains("rust compiler component"), "{err}");
}

#[test]
fn a_third_party_script_builds_only_while_it_hashes_to_its_signed_pin() {
    let wheel = real_wheel();
    let quickjs = wheel
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("quickjs.wasm");
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../toolkits/rot13");
    let dir = root.path().join("rot13");
    for sub in ["src", "skills"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    for f in ["manifest.org", "skills/overview.org", "src/rot13.js"] {
        std::fs::copy(shipped.join(f), dir.join(f)).unwrap();
    }
    let r = root.path().to_str().unwrap();
    let o = wbx(
        home.path(),
        &["command", "register", "qjs", quickjs.to_str().unwrap()],
        b"",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = wbx(
        home.path(),
        &["toolkit", "--root", r, "build", "rot13", "--json"],
        b"",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let entry: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        entry["tier"], "os_process",
        "third-party runs one rung stronger"
    );
    let o = wbx(home.path(), &["run", "rot13"], b"Hello, World\n");
    assert_eq!(text(&o.stdout), "Uryyb, Jbeyq\n", "{}", text(&o.stderr));

    let build = || {
        wbx(
            home.path(),
            &["toolkit", "--root", r, "build", "rot13"],
            b"",
        )
    };
    let refused = |o: &std::process::Output, what: &str| {
        assert!(!o.status.success(), "built despite: {what}");
        assert!(text(&o.stderr).contains(what), "{}", text(&o.stderr));
    };
    // The script edited after signing: the pin no longer holds.
    let script = dir.join("src/rot13.js");
    let mut edited = std::fs::read_to_string(&script).unwrap();
    edited.push_str("std.out.puts('pwned');\n");
    std::fs::write(&script, edited).unwrap();
    refused(&build(), "artifact_integrity");
    // ... and re-pinning it in the manifest breaks the signature instead.
    let manifest = dir.join("manifest.org");
    let sha = workbooks_toolkit::bundle::sha256_hex(&std::fs::read(&script).unwrap());
    let text_ = std::fs::read_to_string(&manifest).unwrap();
    let line = text_
        .lines()
        .find(|l| l.starts_with("#+SHA256:"))
        .unwrap()
        .to_string();
    std::fs::write(&manifest, text_.replace(&line, &format!("#+SHA256: {sha}"))).unwrap();
    refused(&build(), "not trusted");
    let o = wbx(home.path(), &["run", "rot13"], b"abc");
    assert_eq!(text(&o.stdout), "nop", "the first build stays registered");
}

#[tokio::test]
async fn a_script_past_the_brokers_cap_or_packaged_arguments_past_argv_are_refused() {
    let home = tempfile::tempdir().unwrap();
    let engine = own_builder(home.path()).build().unwrap();
    let big = vec![b'1'; (128 << 10) + 1];
    let err = workbooks_toolkit::build_in_sandbox(&engine, "js", big)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("source_too_large"), "{err}");
    let err = workbooks_toolkit::build_in_sandbox(&engine, "js", vec![0xff, 0xfe])
        .await
        .unwrap_err();
    assert!(err.to_string().contains("not UTF-8"), "{err}");

    let hello = std::fs::read(guest_artifacts::CLI_HELLO).unwrap();
    let err = engine
        .registry()
        .register_with_prefix(
            "packed",
            hello,
            Default::default(),
            Default::default(),
            vec!["x".repeat(workbooks::limits::MAX_ARGV_BYTES)],
        )
        .unwrap_err();
    assert!(
        matches!(err, workbooks::commands::RegistryError::PrefixTooLarge(_)),
        "{err}"
    );
    assert!(engine.registry().get("packed").unwrap().is_none());
}
