//! A damaged registry manifest is refused by name from the CLI and the
//! engine alike. (The compile and composition caches and the home's
//! owner: the core's tests.)

use crate::common::{own_engine, text, wbx};
use guest_artifacts::*;
use workbooks::commands::{ArgMode, RegistryError, Tier};

#[test]
fn a_tampered_registry_is_refused_by_name_and_never_reaches_outside_the_store() {
    let home = tempfile::tempdir().unwrap();
    for (sha, shows) in [
        ("../../../../etc/passwd", "is not 64 lowercase hex digits"),
        ("abc", "is not 64 lowercase hex digits"),
        (&"A".repeat(64)[..], "is not 64 lowercase hex digits"),
    ] {
        let manifest = serde_json::json!([{
            "name": "tool", "sha256": sha, "arg_mode": "argv", "tier": "instance",
            "size": 1, "registered_ms": 0
        }]);
        std::fs::write(
            home.path().join("registry.json"),
            serde_json::to_vec(&manifest).unwrap(),
        )
        .unwrap();
        // Listing fails as the engine's own failure; running the entry
        // fails as artifact_integrity.
        for (args, code) in [
            (&["command", "list"][..], 125),
            (&["command", "run", "tool"], 126),
        ] {
            let out = wbx(home.path(), args, b"");
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
            assert!(err.contains("registry.json is damaged"), "{err}");
            assert!(err.contains("entry `tool`") && err.contains(shows), "{err}");
            assert!(!err.contains("panicked"), "{err}");
        }
    }
    // A manifest entry that names a command badly is refused the same way,
    // and nothing is rewritten while the manifest is damaged.
    let bad = r#"[{"name":"../x","sha256":"00","arg_mode":"argv","tier":"instance","size":1,"registered_ms":0}]"#;
    std::fs::write(home.path().join("registry.json"), bad).unwrap();
    let e = own_engine(home.path());
    let err = e
        .registry()
        .register(
            "new",
            std::fs::read(CLI_HELLO).unwrap(),
            ArgMode::Argv,
            Tier::Instance,
        )
        .unwrap_err();
    assert!(matches!(err, RegistryError::Corrupt { .. }), "{err}");
    assert_eq!(
        std::fs::read_to_string(home.path().join("registry.json")).unwrap(),
        bad
    );
}
