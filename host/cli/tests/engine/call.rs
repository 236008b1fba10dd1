//! `wbx call` and the `tally` example toolkit (a typed `plugin`-world
//! component importing `kv`): its counts outlive each instance, stay the
//! tenant's own, and a profile without `kv` refuses it before it starts.

use crate::common::{text, wbx};
use std::path::Path;

fn tally_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../toolkits/tally");
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

/// The children (`wbx exec --framed`, reading a request) under process
/// `ancestor`.
fn framed_calls_under(ancestor: u32) -> usize {
    let parent_of = |pid: u32| -> Option<u32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.rsplit_once(')')?
            .1
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    };
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| parent_of(*pid) == Some(ancestor))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.windows(14).any(|w| w == b"exec\0--framed\0"))
        })
        .count()
}

#[tokio::test]
async fn a_plugin_registered_at_os_process_is_called_in_a_child_on_every_lane() {
    use std::time::Duration;
    let home = tempfile::tempdir().unwrap();
    let o = wbx(
        home.path(),
        &[
            "command",
            "register",
            "plug",
            guest_artifacts::INSTANCE_PLUGIN,
            "--tier",
            "os_process",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    // `wbx call NAME`: the plugin runs in a child while it sleeps.
    let call = std::process::Command::new(env!("CARGO_BIN_EXE_wbx"))
        .args([
            "call",
            "plug",
            "--profile",
            "minimal",
            "--input",
            "sleep:3000",
        ])
        .env("WB_HOME", home.path())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut seen = 0;
    for _ in 0..200 {
        seen = framed_calls_under(call.id());
        if seen > 0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = call.wait_with_output().unwrap();
    assert_eq!(seen, 1, "no child ran the plugin");
    assert_eq!(text(&out.stdout), "slept\n");
    let call = |input: &str, extra: &[&str]| {
        let mut args = vec!["call", "plug", "--profile", "minimal", "--input", input];
        args.extend_from_slice(extra);
        wbx(home.path(), &args, b"")
    };
    let o = call("echo:hi", &["--json"]);
    assert_eq!(text(&o.stdout).trim(), r#"{"ok":true,"value":"hi"}"#);
    let o = call("sleep:x", &[]);
    assert_eq!(
        (o.status.code(), text(&o.stderr).trim()),
        (Some(1), "bad ms")
    );
    // The tool lane (MCP's plugin tools): the same, under this process.
    let engine = crate::common::own_builder(home.path())
        .child_binary(env!("CARGO_BIN_EXE_wbx"))
        .build()
        .unwrap();
    let kind = workbooks_toolkit::tools::ToolKind::Plugin("plug".into());
    let args = serde_json::json!({"input": "sleep:2000"});
    let opts = workbooks::LineOptions {
        profile: "minimal".into(),
        ..workbooks::LineOptions::default()
    };
    let tools = workbooks_toolkit::tools::Tools::new(engine.clone());
    let called = tools.call(&kind, args.as_object().unwrap(), opts);
    let look = async {
        for _ in 0..200 {
            if framed_calls_under(std::process::id()) > 0 {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        false
    };
    let (out, child_seen) = tokio::join!(called, look);
    assert!(!out.is_error, "{}", out.text);
    assert_eq!(out.text, "slept");
    assert!(child_seen, "the tool ran the plugin in this process");
}

/// Removes a planted file when the test ends, however it ends.
struct Planted(std::path::PathBuf);

impl Drop for Planted {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[tokio::test]
async fn a_plugins_child_calls_the_registered_bytes_never_a_file_of_its_name() {
    let home = tempfile::tempdir().unwrap();
    let engine = crate::common::own_builder(home.path())
        .child_binary(env!("CARGO_BIN_EXE_wbx"))
        .build()
        .unwrap();
    let name = "plug-planted-by-call-test";
    let entry = engine
        .registry()
        .register(
            name,
            std::fs::read(guest_artifacts::INSTANCE_PLUGIN).unwrap(),
            workbooks::commands::ArgMode::Argv,
            workbooks::commands::Tier::OsProcess,
        )
        .unwrap();
    // Another plugin, planted under the registered name where the caller
    // runs (a guest with a writable preopen of it could).
    let planted = Planted(std::env::current_dir().unwrap().join(name));
    std::fs::copy(guest_artifacts::TOOLKIT_TALLY, &planted.0).unwrap();
    let opts = workbooks::LineOptions {
        profile: "minimal".into(),
        ..workbooks::LineOptions::default()
    };
    let answer = engine
        .commands()
        .call_plugin_in_child(&entry, "echo:registered", "p", &opts)
        .await
        .unwrap();
    assert_eq!(answer, Ok("registered".to_string()));
    // Bytes swapped under the name after the caller looked it up are not
    // called either.
    let mut stale = entry.clone();
    stale.sha256 = "0".repeat(64);
    let answer = engine
        .commands()
        .call_plugin_in_child(&stale, "echo:registered", "p", &opts)
        .await;
    let refused = format!("{answer:?}");
    assert!(refused.contains("not the 0000"), "{refused}");
}
