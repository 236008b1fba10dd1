//! `wbx call` and the `tally` example toolkit (a typed `plugin`-world
//! component importing `kv`): its counts outlive each instance, stay the
//! tenant's own, and a profile without `kv` refuses it before it starts.

use crate::common::{text, wbx};
use std::path::Path;

fn tally_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../toolkits/tally");
    let dir = root.path().join("tally");
    std::fs::create_dir_all(dir.join("skills")).unwrap();
    std::fs::create_dir_all(dir.join("dist")).unwrap();
    for f in ["manifest.org", "skills/overview.org"] {
        std::fs::copy(shipped.join(f), dir.join(f)).unwrap();
    }
    std::fs::copy(guest_artifacts::TOOLKIT_TALLY, dir.join("dist/tally.wasm")).unwrap();
    root
}

#[test]
fn a_plugin_toolkit_is_called_by_name_and_its_counts_are_the_tenants_own() {
    let home = tempfile::tempdir().unwrap();
    let root = tally_root();
    let r = root.path().to_str().unwrap();
    let o = wbx(
        home.path(),
        &["toolkit", "--root", r, "verify", "tally"],
        b"",
    );
    assert!(o.status.success(), "{}", text(&o.stdout));
    assert!(
        text(&o.stdout).contains("grant: kv under minimal"),
        "{}",
        text(&o.stdout)
    );
    let o = wbx(
        home.path(),
        &["toolkit", "--root", r, "build", "tally"],
        b"",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));

    let call = |args: &[&str], stdin: &[u8]| {
        let mut all = vec!["call", "tally", "--profile", "minimal"];
        all.extend_from_slice(args);
        wbx(home.path(), &all, stdin)
    };
    let o = call(&["--input", "add red blue red"], b"");
    assert_eq!(
        text(&o.stdout),
        "red=1 blue=1 red=2\n",
        "{}",
        text(&o.stderr)
    );
    // A new instance reads what the last one stored.
    let o = call(&["--input", "-", "--json"], b"add blue");
    let answer: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(answer, serde_json::json!({"ok": true, "value": "blue=2"}));
    let o = call(&["--input", "top"], b"");
    assert_eq!(text(&o.stdout), "2 blue\n2 red\n");
    // Another tenant starts from nothing.
    let o = call(&["--input", "get red", "--tenant", "other"], b"");
    assert_eq!(text(&o.stdout), "0\n", "{}", text(&o.stderr));
    // The plugin's own err: exit 1 with its text.
    let o = call(&["--input", "nope"], b"");
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("unknown verb nope"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_plugin_importing_kv_is_refused_under_compute_before_it_runs() {
    let home = tempfile::tempdir().unwrap();
    let o = wbx(
        home.path(),
        &["call", guest_artifacts::TOOLKIT_TALLY, "--input", "add red"],
        b"",
    );
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("kv"), "{}", text(&o.stderr));
    // Nothing was stored: under minimal the count starts at one.
    let o = wbx(
        home.path(),
        &[
            "call",
            guest_artifacts::TOOLKIT_TALLY,
            "--profile",
            "minimal",
            "--input",
            "add red",
        ],
        b"",
    );
    assert_eq!(text(&o.stdout), "red=1\n", "{}", text(&o.stderr));
}

/// The Rust author guide's example, called as the guide calls it.
#[test]
fn the_rust_guide_example_counts_inputs_in_the_tenants_kv() {
    let home = tempfile::tempdir().unwrap();
    let call = |tenant: &str, input: &str| {
        let o = wbx(
            home.path(),
            &[
                "call",
                guest_artifacts::EXAMPLE_RUST_COUNTER,
                "--profile",
                "minimal",
                "--tenant",
                tenant,
                "--input",
                input,
            ],
            b"",
        );
        assert!(o.status.success(), "{}", text(&o.stderr));
        text(&o.stdout)
    };
    assert_eq!(call("a", "apple"), "apple seen 1 time(s)\n");
    assert_eq!(call("a", "apple"), "apple seen 2 time(s)\n");
    assert_eq!(call("b", "apple"), "apple seen 1 time(s)\n");
}
