//! The core-module lane (WASI preview 1) docks like a component: every
//! import checked against the grant call by call, preopens only under
//! `vfs`, the exec calls under `commands` or `exec`, no symlink out of a
//! preopen.

use crate::common::own_builder;
use guest_artifacts::*;
use workbooks::commands::{ArgMode, Tier};
use workbooks::{
    Artifact, Cap, CapSet, CommandError, DockError, Engine, Grant, LineError, LineOptions, Preopen,
    Profile,
};

fn fresh() -> (tempfile::TempDir, Engine) {
    let home = tempfile::tempdir().unwrap();
    let e = own_builder(home.path()).build().unwrap();
    (home, e)
}

fn register_kat(e: &Engine) {
    e.registry()
        .register(
            "kat",
            std::fs::read(CLI_CAT).unwrap(),
            ArgMode::Argv,
            Tier::Instance,
        )
        .unwrap();
}

fn register_wat(e: &Engine, name: &str, wat: &str) {
    e.registry()
        .register(
            name,
            wat::parse_str(wat).unwrap(),
            ArgMode::Argv,
            Tier::Instance,
        )
        .unwrap();
}

/// Stage options under `profile`, narrowed to `caps` when given, with
/// `dirs` preopened.
fn opts(profile: &str, caps: Option<&[Cap]>, dirs: Vec<Preopen>) -> LineOptions {
    LineOptions {
        profile: profile.into(),
        caps: caps.map(CapSet::of),
        dirs,
        ..LineOptions::default()
    }
}

async fn run(e: &Engine, name: &str, o: LineOptions) -> Result<String, CommandError> {
    match e.commands().run(name, vec![], o).await {
        Ok(out) => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
        Err(LineError::Command { error, .. }) => Err(error),
        Err(other) => panic!("expected a command error, got {other}"),
    }
}

/// Reads `secret.txt` from the first preopen (fd 3) and prints it.
const P1_READ_PREOPEN: &str = r#"(module
  (import "wasi_snapshot_preview1" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 100) "secret.txt")
  (func (export "_start")
    (if (call $path_open (i32.const 3) (i32.const 0) (i32.const 100) (i32.const 10) (i32.const 0)
          (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 200))
      (then unreachable))
    (i32.store (i32.const 300) (i32.const 1024))
    (i32.store (i32.const 304) (i32.const 512))
    (drop (call $fd_read (i32.load (i32.const 200)) (i32.const 300) (i32.const 1) (i32.const 400)))
    (i32.store (i32.const 308) (i32.const 1024))
    (i32.store (i32.const 312) (i32.load (i32.const 400)))
    (drop (call $fd_write (i32.const 1) (i32.const 308) (i32.const 1) (i32.const 404)))))"#;

/// Prints a line; imports only what every guest has.
const P1_HELLO: &str = r#"(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 16) "core module\n")
  (func (export "_start")
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 12))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))"#;

fn secret_dir() -> (tempfile::TempDir, Vec<Preopen>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("secret.txt"), "the secret").unwrap();
    let preopen = vec![Preopen {
        host: dir.path().to_path_buf(),
        guest: "/".into(),
        read_only: true,
    }];
    (dir, preopen)
}

#[tokio::test]
async fn a_core_module_reads_a_preopen_only_under_vfs() {
    let (_home, e) = fresh();
    register_wat(&e, "peek", P1_READ_PREOPEN);
    let (_dir, preopen) = secret_dir();
    // Under vfs the preopen is the module's to read.
    assert_eq!(
        run(&e, "peek", opts("compute", None, preopen.clone())).await,
        Ok("the secret".into())
    );
    // Without vfs the file calls are absent, named by the refusal...
    let err = run(&e, "peek", opts("minimal", Some(&[Cap::Kv]), Vec::new()))
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("capability not granted: vfs (import wasi_snapshot_preview1.path_open)"),
        "{text}"
    );
    // ...and no directory is preopened for a module that has no file calls.
    register_wat(&e, "hello1", P1_HELLO);
    let err = run(&e, "hello1", opts("minimal", Some(&[Cap::Kv]), preopen))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("capability not granted: vfs (needed to preopen"),
        "{err}"
    );
}

#[tokio::test]
async fn core_module_imports_are_checked_call_by_call() {
    let (_home, e) = fresh();
    register_wat(
        &e,
        "opener",
        r#"(module (import "wasi_snapshot_preview1" "path_open" (func (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
             (memory (export "memory") 1) (func (export "_start")))"#,
    );
    register_wat(
        &e,
        "shell-out",
        r#"(module (import "env" "system" (func (param i32) (result i32)))
             (memory (export "memory") 1) (func (export "_start")))"#,
    );
    let err = run(&e, "opener", opts("posix", Some(&[Cap::Kv]), Vec::new()))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("capability not granted: vfs (import wasi_snapshot_preview1.path_open)"),
        "{err}"
    );
    let err = run(&e, "shell-out", opts("posix", None, Vec::new()))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("unknown imports refused: env.system"),
        "{err}"
    );
}

/// A core module that runs `kat x` through the packed request and prints
/// the child's stdout.
fn p1_exec() -> String {
    let request = workbooks::commands::packed::encode("kat", &["x"], b"wired\n");
    let data: String = request.iter().map(|b| format!("\\{b:02x}")).collect();
    format!(
        r#"(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "workbooks" "exec" (func $exec (param i32 i32) (result i64)))
  (import "workbooks" "exec_read" (func $exec_read (param i32 i32) (result i64)))
  (memory (export "memory") 1)
  (data (i32.const 1024) "{data}")
  (func (export "_start")
    (local $n i64)
    (local.set $n (call $exec (i32.const 1024) (i32.const {len})))
    (if (i64.lt_s (local.get $n) (i64.const 0)) (then unreachable))
    (drop (call $exec_read (i32.const 4096) (i32.const 4096)))
    (i32.store (i32.const 0) (i32.const 4104))
    (i32.store (i32.const 4) (i32.load (i32.const 4100)))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))"#,
        len = request.len()
    )
}

#[tokio::test]
async fn a_core_module_reaches_the_ladder_only_with_exec() {
    let (_home, e) = fresh();
    register_wat(&e, "wired", &p1_exec());
    register_kat(&e);
    for caps in [&[Cap::Exec][..], &[Cap::Commands, Cap::Exec]] {
        assert_eq!(
            run(&e, "wired", opts("minimal", Some(caps), Vec::new())).await,
            Ok("wired\n".into()),
            "{caps:?}"
        );
    }
    // workbooks.exec starts a command and collects it: the exec half of
    // the split, so commands alone does not link it.
    let err = run(
        &e,
        "wired",
        opts("minimal", Some(&[Cap::Commands]), Vec::new()),
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("capability not granted: exec (import workbooks.exec)"),
        "{err}"
    );
}

/// `path_symlink(target, fd 3, link)`; prints the errno as a byte.
fn planter(target: &str, link: &str) -> String {
    format!(
        r#"(module
  (import "wasi_snapshot_preview1" "path_symlink" (func $symlink (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 100) "{target}")
  (data (i32.const 200) "{link}")
  (func (export "_start")
    (i32.store8 (i32.const 300)
      (call $symlink (i32.const 100) (i32.const {}) (i32.const 3) (i32.const 200) (i32.const {})))
    (i32.store (i32.const 0) (i32.const 300))
    (i32.store (i32.const 4) (i32.const 1))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))"#,
        target.len(),
        link.len()
    )
}

#[tokio::test]
async fn a_core_module_cannot_plant_a_symlink_that_leads_out_of_a_preopen() {
    let (_home, e) = fresh();
    let dir = tempfile::tempdir().unwrap();
    let preopen = vec![Preopen {
        host: dir.path().to_path_buf(),
        guest: "/".into(),
        read_only: false,
    }];
    for (i, target) in ["../outside", "a/../../x", "/etc/passwd"]
        .iter()
        .enumerate()
    {
        let name = format!("planter{i}");
        register_wat(&e, &name, &planter(target, "escape"));
        let out = run(&e, &name, opts("compute", None, preopen.clone()))
            .await
            .unwrap();
        assert_eq!(out.as_bytes(), [63], "errno perm for {target}");
        assert!(
            std::fs::symlink_metadata(dir.path().join("escape")).is_err(),
            "the link to {target} was made"
        );
    }
    // A link that stays inside is made, as in the component lane.
    register_wat(&e, "inside", &planter("sub/file", "ok"));
    let out = run(&e, "inside", opts("compute", None, preopen))
        .await
        .unwrap();
    assert_eq!(out.as_bytes(), [0], "errno success");
    assert_eq!(
        std::fs::read_link(dir.path().join("ok")).unwrap(),
        std::path::Path::new("sub/file")
    );
}

#[tokio::test]
async fn core_modules_run_as_wasi_p1_commands_and_reach_the_broker_by_wire() {
    let (_home, e) = fresh();
    register_wat(&e, "hello1", P1_HELLO);
    register_wat(&e, "wired", &p1_exec());
    register_kat(&e);
    assert_eq!(
        run(&e, "hello1", opts("compute", None, Vec::new())).await,
        Ok("core module\n".into())
    );
    assert_eq!(
        run(&e, "wired", opts("minimal", None, Vec::new())).await,
        Ok("wired\n".into())
    );
    let err = run(&e, "wired", opts("compute", None, Vec::new()))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("capability not granted: exec (import workbooks.exec) under profile compute"),
        "{err}"
    );
}

/// A module importing one call of `module`.`call`, with an empty `_start`.
fn importing(module: &str, call: &str, params: &str, result: &str) -> String {
    format!(
        r#"(module (import "{module}" "{call}" (func (param {params}) (result {result})))
             (memory (export "memory") 1) (func (export "_start")))"#
    )
}

#[tokio::test]
async fn every_profile_and_core_module_import_class_docks_iff_granted() {
    let (_home, e) = fresh();
    /// (name, module, call, params, result, the cap that grants it)
    type ImportClass = (
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static [Cap],
    );
    let classes: &[ImportClass] = &[
        (
            "p1-vfs",
            "wasi_snapshot_preview1",
            "path_open",
            "i32 i32 i32 i32 i32 i64 i64 i32 i32",
            "i32",
            &[Cap::Vfs],
        ),
        (
            "p1-exec",
            "workbooks",
            "exec",
            "i32 i32",
            "i64",
            &[Cap::Exec],
        ),
    ];
    for (name, module, call, params, result, _) in classes {
        register_wat(&e, name, &importing(module, call, params, result));
    }
    register_wat(&e, "p1-base", P1_HELLO);
    let hello = Artifact::from_bytes(wat::parse_str(P1_HELLO).unwrap()).unwrap();
    for profile in Profile::ALL {
        let grant = Grant::profile(profile.name());
        assert_eq!(
            run(&e, "p1-base", opts(profile.name(), None, Vec::new())).await,
            Ok("core module\n".into()),
            "{profile}"
        );
        // The receipt lists exactly what was linked, here the one base call.
        let receipt = e.receipt(&hello, &grant).unwrap();
        assert_eq!(receipt.linked, ["wasi_snapshot_preview1.fd_write"]);
        assert_eq!(receipt.imports.len(), 1);
        assert_eq!(receipt.imports[0].cap, "base");
        assert!(receipt.brokers.is_empty() && receipt.composed_sha256.is_none());
        assert_eq!(receipt.caps, profile.caps());
        for (_, module, call, params, result, caps) in classes {
            let bytes = wat::parse_str(importing(module, call, params, result)).unwrap();
            let artifact = Artifact::from_bytes(bytes).unwrap();
            let granted = caps.iter().any(|c| profile.caps().contains(*c));
            let import = format!("{module}.{call}");
            match e.receipt(&artifact, &grant) {
                Ok(receipt) => {
                    assert!(granted, "{import} docked under {profile}");
                    assert_eq!(receipt.linked, std::slice::from_ref(&import), "{profile}");
                    assert_eq!(receipt.imports[0].name, import);
                    assert_eq!(receipt.imports[0].cap, caps.last().unwrap().word());
                    assert_eq!(receipt.artifact_sha256, artifact.sha256_hex());
                }
                Err(DockError::NotGranted { cap, interface, .. }) => {
                    assert!(!granted, "{import} refused under {profile}");
                    assert_eq!(cap, *caps.last().unwrap());
                    assert_eq!(interface, import);
                }
                Err(other) => panic!("{import} under {profile}: {other}"),
            }
        }
        for (name, module, call, _, _, caps) in classes {
            let granted = caps.iter().any(|c| profile.caps().contains(*c));
            let got = run(&e, name, opts(profile.name(), None, Vec::new())).await;
            if granted || call.starts_with("sock_") {
                assert_eq!(got, Ok(String::new()), "{name} under {profile}");
            } else {
                let err = got.unwrap_err().to_string();
                let cap = caps.last().unwrap().word();
                assert!(
                    err.contains(&format!(
                        "capability not granted: {cap} (import {module}.{call})"
                    )),
                    "{name} under {profile}: {err}"
                );
            }
        }
    }
}
