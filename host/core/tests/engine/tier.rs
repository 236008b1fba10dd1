//! The os_process tier under attack: output past the cap, from a guest and
//! from a child that is no workbooks child at all, and guest text posing as the
//! engine's verdict.

use crate::common::own_builder;
use guest_artifacts::*;
use std::path::Path;
use workbooks::commands::{ArgMode, Tier};
use workbooks::{CommandError, CommandOutput, Engine, LineError, LineOptions};

guest_artifacts::foreach_tier!(assert_test_exists);

const CAP: u64 = 8 << 20;

pub(crate) fn engine_running(home: &Path, child: &Path) -> Engine {
    own_builder(home).child_binary(child).build().unwrap()
}

pub(crate) fn register(e: &Engine, name: &str, probe: &str, tier: Tier) {
    e.registry()
        .register(name, std::fs::read(probe).unwrap(), ArgMode::Argv, tier)
        .unwrap();
}

async fn run(e: &Engine, name: &str, args: &[&str]) -> Result<CommandOutput, CommandError> {
    let argv = args.iter().map(|a| a.to_string()).collect();
    e.commands()
        .run(name, argv, LineOptions::default())
        .await
        .map_err(|e| match e {
            LineError::Command { error, .. } => error,
            other => panic!("expected a command error, got {other}"),
        })
}

/// Options under `posix` with `host` preopened read-only at `/data`.
pub(crate) fn reading(host: std::path::PathBuf) -> LineOptions {
    LineOptions {
        profile: "posix".into(),
        dirs: vec![workbooks::Preopen {
            host,
            guest: "/data".into(),
            read_only: true,
        }],
        ..LineOptions::default()
    }
}

/// A stand-in for the child binary: a shell script with `body`.
fn fake_child(dir: &Path, body: &str) -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("fake-wbx");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

#[tokio::test]
async fn tier_flood() {
    let home = tempfile::tempdir().unwrap();
    let e = engine_running(home.path(), Path::new(crate::CHILD));
    register(&e, "flood", TIER_FLOOD, Tier::Instance);
    register(&e, "flood-proc", TIER_FLOOD, Tier::OsProcess);
    // A gigabyte asked for: each tier stops it at the cap and says so.
    for name in ["flood", "flood-proc"] {
        let err = run(&e, name, &["1024"]).await.unwrap_err();
        assert_eq!(err, CommandError::OutputTooLarge(CAP), "{name}");
    }
    // Under the cap the output arrives whole.
    let out = run(&e, "flood-proc", &["2"]).await.unwrap();
    assert_eq!((out.exit_code, out.stdout.len()), (0, 2 << 20));
}

#[tokio::test]
async fn a_child_that_floods_its_parent_is_cut_off_at_the_cap() {
    let dir = tempfile::tempdir().unwrap();
    // Well-formed frames of 1 MiB each, without end.
    let child = fake_child(
        dir.path(),
        "while :; do printf '\\001\\000\\000\\020\\000'; head -c 1048576 /dev/zero; done",
    );
    let e = engine_running(dir.path(), &child);
    register(&e, "kat", CLI_CAT, Tier::OsProcess);
    let err = run(&e, "kat", &[]).await.unwrap_err();
    assert_eq!(err, CommandError::OutputTooLarge(CAP));
}

#[tokio::test]
async fn tier_forge_verdict() {
    let home = tempfile::tempdir().unwrap();
    let e = engine_running(home.path(), Path::new(crate::CHILD));
    register(&e, "forge", TIER_FORGE_VERDICT, Tier::Instance);
    register(&e, "forge-proc", TIER_FORGE_VERDICT, Tier::OsProcess);
    for name in ["forge", "forge-proc"] {
        for code in ["120", "121", "124", "126"] {
            let out = run(&e, name, &[code]).await.unwrap_or_else(|err| {
                panic!("{name} {code}: the guest's text was taken as a verdict: {err}")
            });
            assert_eq!(out.exit_code.to_string(), code, "{name}");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                stderr.contains("wbx: refused: capability not granted: everything"),
                "{name}: {stderr}"
            );
        }
    }
}

#[tokio::test]
async fn a_child_that_ends_without_a_verdict_is_a_named_failure() {
    let dir = tempfile::tempdir().unwrap();
    let child = fake_child(dir.path(), "echo 'wbx: trap: looks official' >&2; exit 121");
    let e = engine_running(dir.path(), &child);
    register(&e, "kat", CLI_CAT, Tier::OsProcess);
    let err = run(&e, "kat", &[]).await.unwrap_err();
    match err {
        CommandError::Refused(why) => {
            assert!(why.contains("ended without a verdict"), "{why}");
        }
        other => panic!("expected a refusal naming the missing verdict, got {other}"),
    }
}

#[tokio::test]
async fn a_preopen_reaches_the_child_as_it_is_and_one_the_request_cannot_carry_is_refused() {
    use std::os::unix::ffi::OsStrExt as _;
    let home = tempfile::tempdir().unwrap();
    let e = engine_running(home.path(), Path::new(crate::CHILD));
    register(&e, "kat", CLI_CAT, Tier::OsProcess);
    let data = tempfile::tempdir().unwrap();
    let with = reading;
    // A host path a command line would split (`x::y` read as `x`, mounted
    // at `y`) is carried exactly: the child opens the directory named.
    let tricky = data.path().join("x::y");
    std::fs::create_dir(&tricky).unwrap();
    let out = e.commands().run("kat", vec![], with(tricky)).await.unwrap();
    assert_eq!(out.exit_code, 0, "{}", String::from_utf8_lossy(&out.stderr));
    // One the request cannot carry (not UTF-8) is refused here, by name,
    // never reinterpreted there.
    let odd = data.path().join(std::ffi::OsStr::from_bytes(b"odd-\xff"));
    std::fs::create_dir(&odd).unwrap();
    let err = e
        .commands()
        .run("kat", vec![], with(odd))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("cannot pass the request to a child"),
        "{err}"
    );
}

#[tokio::test]
async fn an_os_process_stage_takes_its_place_in_a_streaming_pipeline() {
    let home = tempfile::tempdir().unwrap();
    let e = engine_running(home.path(), Path::new(crate::CHILD));
    register(&e, "kat-proc", CLI_CAT, Tier::OsProcess);
    // Its input is read whole from the pipe before it and its output
    // written on into the pipe after it.
    let o = e
        .commands()
        .run_line("seq 1 20000 | kat-proc | wc -l", LineOptions::default())
        .await
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "20000");
    assert_eq!(o.stages[1].exit, 0);
    assert_eq!(o.stages[1].stdout_bytes, o.stages[0].stdout_bytes);
    // Ahead of a reader that leaves early, it ends as a broken pipe too.
    let o = e
        .commands()
        .run_line(
            "seq 1 200000 | kat-proc | head -n 1",
            LineOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(&o.stdout[..], b"1\n");
    assert_eq!(o.exit, 0);
    // Last, it writes the line's own stdout when it ends.
    let o = e
        .commands()
        .run_line("seq 1 3 | kat-proc", LineOptions::default())
        .await
        .unwrap();
    assert_eq!(&o.stdout[..], b"1\n2\n3\n");
    assert_eq!(o.stages[1].stdout_bytes, 6);
}

/// The compiled entries of `sha256` in `home`'s cache: each file's inode
/// and modification time.
fn compiled_entries(home: &Path, sha256: &str) -> Vec<(u64, std::time::SystemTime)> {
    use std::os::unix::fs::MetadataExt;
    let Ok(dir) = std::fs::read_dir(home.join("cache/compiled")) else {
        return Vec::new();
    };
    dir.flatten()
        .filter(|f| {
            let name = f.file_name().to_string_lossy().into_owned();
            name.starts_with(sha256) && name.ends_with(".cwasm")
        })
        .map(|f| {
            let meta = f.metadata().unwrap();
            (meta.ino(), meta.modified().unwrap())
        })
        .collect()
}

#[tokio::test]
async fn an_os_process_child_maps_the_code_its_parent_sealed_rather_than_compiling_it_again() {
    let home = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let e = own_builder(home.path())
        .state_dir(state.path().join("workbooks"))
        .child_binary(crate::CHILD)
        .build()
        .unwrap();
    let entry = e
        .registry()
        .register(
            "kat",
            std::fs::read(CLI_CAT).unwrap(),
            ArgMode::Argv,
            Tier::OsProcess,
        )
        .unwrap();
    assert_eq!(run(&e, "kat", &["one"]).await.unwrap().exit_code, 0);
    let first = compiled_entries(home.path(), &entry.sha256);
    assert_eq!(
        first.len(),
        1,
        "the parent's sealed entry survived its child (a child without the sealing key discards it)"
    );
    assert_eq!(run(&e, "kat", &["two"]).await.unwrap().exit_code, 0);
    assert_eq!(
        compiled_entries(home.path(), &entry.sha256),
        first,
        "the second child mapped the same entry, neither discarding nor rewriting it"
    );
}
