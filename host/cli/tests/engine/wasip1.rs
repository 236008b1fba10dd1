//! The wasip1 binaries people already have, run the way `wbx exec` runs
//! components: docked under a profile, every limit on, `proc_exit(n)` as
//! exit code n, and an environment that is exactly what the operator
//! passed.

use crate::common::{own_builder, text, wbx};
use std::path::{Path, PathBuf};
use std::time::Duration;
use workbooks::commands::{ArgMode, Tier};
use workbooks::{
    Artifact, DockError, Engine, Grant, LineError, LineOptions, Output, RunError, SessionOptions,
    StartOptions, Supervisor,
};

fn fresh() -> (tempfile::TempDir, Engine) {
    let home = tempfile::tempdir().unwrap();
    let e = own_builder(home.path()).build().unwrap();
    (home, e)
}

/// Prints its whole environment block (`NAME=value\0` per variable).
const P1_PRINT_ENV: &str = r#"(module
  (import "wasi_snapshot_preview1" "environ_sizes_get" (func $sizes (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "environ_get" (func $get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 3)
  (func (export "_start")
    (drop (call $sizes (i32.const 0) (i32.const 4)))
    (drop (call $get (i32.const 1024) (i32.const 65536)))
    (i32.store (i32.const 16) (i32.const 65536))
    (i32.store (i32.const 20) (i32.load (i32.const 4)))
    (drop (call $fd_write (i32.const 1) (i32.const 16) (i32.const 1) (i32.const 24)))))"#;

/// Ends with `proc_exit(33)`.
const P1_EXIT_33: &str = r#"(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (call $exit (i32.const 33))))"#;

/// Spins for ever.
const P1_SPIN: &str = r#"(module
  (memory (export "memory") 1)
  (func (export "_start") (loop $l (br $l))))"#;

/// Grows its memory by 1024 pages (64 MiB) and exits 7 if refused.
const P1_GROW: &str = r#"(module
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (if (i32.eq (memory.grow (i32.const 1024)) (i32.const -1))
      (then (call $exit (i32.const 7))))))"#;

fn module(wat: &str) -> Artifact {
    Artifact::from_bytes(wat::parse_str(wat).unwrap()).unwrap()
}

/// Writes `wat` compiled to `dir/name.wasm`.
fn module_file(dir: &Path, name: &str, wat: &str) -> PathBuf {
    let path = dir.join(format!("{name}.wasm"));
    std::fs::write(&path, wat::parse_str(wat).unwrap()).unwrap();
    path
}

fn session(env: &[(&str, &str)]) -> SessionOptions {
    let mut opts = SessionOptions::new("p1", "default");
    opts.env = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    opts.stdout = Output::Capture;
    opts
}

#[tokio::test]
async fn a_core_module_docks_and_runs_through_the_same_run_as_a_component() {
    let (_home, e) = fresh();
    let docked = e
        .dock(&module(P1_EXIT_33), &Grant::profile("compute"))
        .unwrap();
    assert!(docked.is_command());
    assert_eq!(
        docked.receipt().linked,
        ["wasi_snapshot_preview1.proc_exit"]
    );
    let out = e.run(&docked, session(&[])).await.unwrap();
    assert_eq!(out.exit_code, 33, "proc_exit(33) is exit code 33");
}

#[tokio::test]
async fn a_guest_sees_exactly_the_environment_it_was_given_and_nothing_of_the_hosts() {
    let (_home, e) = fresh();
    let docked = e
        .dock(&module(P1_PRINT_ENV), &Grant::profile("compute"))
        .unwrap();
    let given = [("A", "1"), ("B", "x=y"), ("EMPTY", "")];
    let out = e.run(&docked, session(&given)).await.unwrap();
    assert_eq!(text(&out.stdout), "A=1\0B=x=y\0EMPTY=\0");
    assert!(std::env::var_os("PATH").is_some(), "the host has a PATH");
    let out = e.run(&docked, session(&[])).await.unwrap();
    assert_eq!(out.stdout.len(), 0, "{:?}", text(&out.stdout));
}

#[tokio::test]
async fn an_environment_that_cannot_be_passed_is_refused_before_the_guest_runs() {
    let (_home, e) = fresh();
    let docked = e
        .dock(&module(P1_PRINT_ENV), &Grant::profile("compute"))
        .unwrap();
    let err = e.run(&docked, session(&[("A=B", "1")])).await.unwrap_err();
    assert!(matches!(err, RunError::Session(_)), "{err}");
    assert!(err.to_string().contains("contains `=`"), "{err}");
    let big = "v".repeat(workbooks::limits::MAX_ENV_BYTES);
    let err = e.run(&docked, session(&[("K", &big)])).await.unwrap_err();
    assert!(
        err.to_string().contains("over the 65536-byte limit"),
        "{err}"
    );
}

#[tokio::test]
async fn a_core_module_keeps_every_limit_of_the_envelope() {
    let (_home, e) = fresh();
    let spin = e
        .dock(&module(P1_SPIN), &Grant::profile("compute"))
        .unwrap();
    let mut opts = session(&[]);
    opts.fuel = Some(1_000_000);
    let err = e.run(&spin, opts).await.unwrap_err();
    assert!(matches!(err, RunError::Fuel { budget: 1_000_000 }), "{err}");
    let mut opts = session(&[]);
    opts.timeout = Some(Duration::from_millis(200));
    let err = e.run(&spin, opts).await.unwrap_err();
    assert!(matches!(err, RunError::Timeout { .. }), "{err}");
    // compute caps memory at 64 MiB: one page plus 64 MiB is past it.
    let grow = e
        .dock(&module(P1_GROW), &Grant::profile("compute"))
        .unwrap();
    let out = e.run(&grow, session(&[])).await.unwrap();
    assert_eq!(out.exit_code, 7, "the growth past the cap was refused");
}

#[tokio::test]
async fn a_core_module_is_a_command_only_never_an_instance_or_a_handler() {
    let (_home, e) = fresh();
    let m = module(P1_EXIT_33);
    let err = Supervisor::new(e.clone())
        .start("p1", &m, StartOptions::default())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("runs only as a command"), "{err}");
    let err = workbooks::Server::new(&e, &m, workbooks::ServeOptions::default()).unwrap_err();
    assert!(err.to_string().contains("runs only as a command"), "{err}");
    let err = workbooks::TcpServer::new(&e, &m, workbooks::ServeOptions::default()).unwrap_err();
    assert!(
        matches!(err, workbooks::ServeError::NotATcpHandler),
        "{err}"
    );
    let reactor = module(r#"(module (memory (export "memory") 1))"#);
    let docked = e.dock(&reactor, &Grant::profile("compute")).unwrap();
    assert!(!docked.is_command());
    let err = e.run(&docked, session(&[])).await.unwrap_err();
    assert!(matches!(err, RunError::NotACommand), "{err}");
}

#[tokio::test]
async fn pipeline_stages_get_the_operators_environment_not_the_lines_variables() {
    let home = tempfile::tempdir().unwrap();
    let e = own_builder(home.path())
        .child_binary(env!("CARGO_BIN_EXE_wbx"))
        .build()
        .unwrap();
    for (name, tier) in [("penv", Tier::Instance), ("penvp", Tier::OsProcess)] {
        e.registry()
            .register(
                name,
                wat::parse_str(P1_PRINT_ENV).unwrap(),
                ArgMode::Argv,
                tier,
            )
            .unwrap();
        let opts = LineOptions {
            env: vec![("A".into(), "1".into())],
            ..LineOptions::default()
        };
        let out = e
            .commands()
            .run_line(&format!("B=2; C=3 {name}"), opts)
            .await
            .unwrap();
        assert_eq!(text(&out.stdout), "A=1\0", "tier {tier:?}");
    }
    let opts = LineOptions {
        env: vec![("".into(), "1".into())],
        ..LineOptions::default()
    };
    let err = e.commands().run_line("penv", opts).await.unwrap_err();
    assert!(matches!(err, LineError::Session(_)), "{err}");
}

#[test]
fn wbx_exec_runs_a_wasip1_module_with_its_exit_code_and_only_the_env_given() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let exit = module_file(dir.path(), "exit33", P1_EXIT_33);
    let out = wbx(home.path(), &["exec", exit.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(33), "{}", text(&out.stderr));
    let env = module_file(dir.path(), "penv", P1_PRINT_ENV);
    let env = env.to_str().unwrap();
    let out = wbx(
        home.path(),
        &["exec", "--env", "GREETING=hi there", "--env", "N=", env],
        b"",
    );
    assert_eq!(
        text(&out.stdout),
        "GREETING=hi there\0N=\0",
        "{}",
        text(&out.stderr)
    );
    let out = wbx(home.path(), &["exec", "--env", "NOEQUALS", env], b"");
    assert_eq!(out.status.code(), Some(64));
    assert!(
        text(&out.stderr).contains("\"NOEQUALS\" is not NAME=VALUE"),
        "{}",
        text(&out.stderr)
    );
    let out = wbx(
        home.path(),
        &["run", "--env", "A=1", "--env", "B=2", "true"],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn a_module_refused_for_its_imports_is_never_compiled() {
    // A browser build imports its host's ABI: it can dock under no
    // profile, so it is refused from its import section alone.
    let (_home, e) = fresh();
    let browser = module(
        r#"(module
  (import "rb-js-abi-host" "js-value-to-string" (func (param i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")))"#,
    );
    let err = e.dock(&browser, &Grant::profile("posix")).unwrap_err();
    assert!(
        matches!(&err, DockError::UnknownImports { names } if names == &["rb-js-abi-host.js-value-to-string"]),
        "{err}"
    );
    assert!(
        !e.is_compiled(&browser),
        "it was compiled before its refusal"
    );
    // The check would see it: a module that docks is compiled.
    let fine = module(P1_EXIT_33);
    assert!(e.dock(&fine, &Grant::profile("compute")).is_ok());
    assert!(e.is_compiled(&fine), "a docked module is compiled");
}

#[test]
fn wbx_exec_refuses_a_module_whose_calls_its_grant_does_not_cover() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let open = module_file(
        dir.path(),
        "open",
        r#"(module
  (import "wasi_snapshot_preview1" "path_open" (func (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")))"#,
    );
    let out = wbx(
        home.path(),
        &[
            "exec",
            "--profile",
            "minimal",
            "--caps",
            "kv",
            open.to_str().unwrap(),
        ],
        b"",
    );
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(120), "{err}");
    assert!(
        err.contains("capability not granted: vfs (import wasi_snapshot_preview1.path_open)"),
        "{err}"
    );
    let unknown = module_file(
        dir.path(),
        "unknown",
        r#"(module
  (import "env" "system" (func (param i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")))"#,
    );
    let out = wbx(
        home.path(),
        &["exec", "--profile", "posix", unknown.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(120));
    assert!(
        text(&out.stderr).contains("unknown imports refused: env.system"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_socket_call_answers_badf_or_notsock_for_its_descriptor_under_every_profile() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    // sock_shutdown(fd, both) on stdin (open, not a socket) or on 9 (not
    // open), exiting with the errno it got.
    let probe = |name: &str, fd: u32| {
        module_file(
            dir.path(),
            name,
            &format!(
                r#"(module
  (import "wasi_snapshot_preview1" "sock_shutdown" (func $shut (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start") (call $exit (call $shut (i32.const {fd}) (i32.const 3)))))"#
            ),
        )
    };
    let (file, bad) = (probe("on_stdin", 0), probe("on_nothing", 9));
    const BADF: i32 = 8;
    const NOTSOCK: i32 = 57;
    for profile in ["compute", "minimal", "network", "posix"] {
        for (probe, errno) in [(&file, NOTSOCK), (&bad, BADF)] {
            let out = wbx(
                home.path(),
                &["exec", "--profile", profile, probe.to_str().unwrap()],
                b"",
            );
            assert_eq!(
                out.status.code(),
                Some(errno),
                "{} under {profile}: {}",
                probe.display(),
                text(&out.stderr)
            );
            // Nothing on the host's stderr: a guest calling in a loop
            // would otherwise write a warning per call.
            assert_eq!(text(&out.stderr), "", "{profile}");
        }
    }
    let out = wbx(
        home.path(),
        &["inspect", "--json", file.to_str().unwrap()],
        b"",
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["profile"], "compute", "{v}");
    assert_eq!(
        v["receipt"]["imports"][0]["served_by"],
        "host (no socket exists: badf or notsock)"
    );
}

#[tokio::test]
async fn a_docked_module_under_one_grant_is_not_reused_under_another() {
    let (_home, e) = fresh();
    let m = module(
        r#"(module
  (import "wasi_snapshot_preview1" "path_open" (func (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")))"#,
    );
    e.dock(&m, &Grant::profile("compute")).unwrap();
    let none = Grant::narrowed("compute", workbooks::CapSet::EMPTY).unwrap();
    let err = e.dock(&m, &none).unwrap_err();
    assert!(matches!(err, DockError::NotGranted { .. }), "{err}");
}

/// A program of the catalog, by file name, checked against its sha256 pin:
/// `cargo xtask test` fetches them into the catalog folder; a missing or
/// altered file fails the test, naming what fetches it.
fn catalog(file: &str, sha256: &str) -> PathBuf {
    let path = crate::common::catalog_dir().join(file);
    assert!(
        path.is_file(),
        "{} is missing: `cargo xtask test` fetches it (or set WB_CATALOG_DIR)",
        path.display()
    );
    let artifact = Artifact::from_file(&path).unwrap();
    assert_eq!(
        artifact.sha256_hex(),
        sha256,
        "{} is not the pinned build",
        path.display()
    );
    path
}

/// CPython 3.12, WASI core module.
const PYTHON_SHA256: &str = "e5dc5a398b07b54ea8fdb503bf68fb583d533f10ec3f930963e02b9505f7a763";

/// QuickJS, WASI core module.
const QUICKJS_SHA256: &str = "f9742952f9989b1558c4a79bedfb351d6ca33ff22a41e886517cae5196e6d783";

#[test]
fn the_catalogs_cpython_and_quickjs_run_with_wbx_exec_under_compute() {
    let python = catalog("python.wasm", PYTHON_SHA256);
    let quickjs = catalog("quickjs.wasm", QUICKJS_SHA256);
    let home = tempfile::tempdir().unwrap();
    let out = wbx(
        home.path(),
        &[
            "exec",
            python.to_str().unwrap(),
            "--",
            "-c",
            "print(2**100)",
        ],
        b"",
    );
    assert_eq!(
        text(&out.stdout),
        "1267650600228229401496703205376\n",
        "{}",
        text(&out.stderr)
    );
    let out = wbx(
        home.path(),
        &[
            "exec",
            "--env",
            "WHO=wasip1",
            python.to_str().unwrap(),
            "--",
            "-c",
            "import os, sys; print(sorted(os.environ.items())); sys.exit(5)",
        ],
        b"",
    );
    assert_eq!(
        text(&out.stdout),
        "[('WHO', 'wasip1')]\n",
        "{}",
        text(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(5));
    let scripts = tempfile::tempdir().unwrap();
    std::fs::write(
        scripts.path().join("sum.js"),
        "console.log([1, 2, 3].reduce((a, b) => a + b))\n",
    )
    .unwrap();
    let dir = format!("{}::/", scripts.path().display());
    let out = wbx(
        home.path(),
        &[
            "exec",
            "--dir",
            &dir,
            quickjs.to_str().unwrap(),
            "--",
            "/sum.js",
        ],
        b"",
    );
    assert_eq!(text(&out.stdout), "6\n", "{}", text(&out.stderr));
}

#[tokio::test]
async fn every_entry_that_takes_an_environment_refuses_a_bad_one_before_any_guest_runs() {
    let (_home, e) = fresh();
    let bad = || vec![("NO=PE".to_string(), "1".to_string())];
    let hello = Artifact::from_file(guest_artifacts::CLI_HELLO).unwrap();
    let err = workbooks::Server::new(
        &e,
        &hello,
        workbooks::ServeOptions {
            env: bad(),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(matches!(err, workbooks::ServeError::Env(_)), "{err}");
    let err = Supervisor::new(e.clone())
        .start(
            "bad-env",
            &hello,
            StartOptions {
                env: bad(),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(err, workbooks::InstanceError::Session(_)), "{err}");
    e.registry()
        .register(
            "penv",
            wat::parse_str(P1_PRINT_ENV).unwrap(),
            ArgMode::Argv,
            Tier::Instance,
        )
        .unwrap();
    let opts = LineOptions {
        env: bad(),
        ..LineOptions::default()
    };
    let err = e.commands().run("penv", vec![], opts).await.unwrap_err();
    assert!(matches!(err, LineError::Session(_)), "{err}");
}

/// `path_symlink` with a target at `ptr` (length 4), the link `l`;
/// exits with the errno.
fn symlink_at(ptr: &str, memory: bool) -> String {
    let memory = if memory {
        r#"(memory (export "memory") 1)"#
    } else {
        "(memory 1)"
    };
    format!(
        r#"(module
  (import "wasi_snapshot_preview1" "path_symlink" (func $symlink (param i32 i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  {memory}
  (data (i32.const 200) "l")
  (func (export "_start")
    (call $exit (call $symlink (i32.const {ptr}) (i32.const 4) (i32.const 3) (i32.const 200) (i32.const 1)))))"#
    )
}

#[tokio::test]
async fn a_symlink_target_outside_the_guests_memory_is_a_fault_and_makes_no_link() {
    let (_home, e) = fresh();
    let dir = tempfile::tempdir().unwrap();
    let mut opts = session(&[]);
    opts.dirs.push(workbooks::Preopen {
        host: dir.path().to_path_buf(),
        guest: "/".into(),
        read_only: false,
    });
    let grant = Grant::profile("compute");
    // The last three bytes of the page and one past it; then a pointer
    // at the top of the 32-bit address space.
    for ptr in ["65533", "-2"] {
        let docked = e.dock(&module(&symlink_at(ptr, true)), &grant).unwrap();
        let out = e.run(&docked, opts.clone()).await.unwrap();
        assert_eq!(out.exit_code, 21, "errno fault for target at {ptr}");
        assert!(std::fs::symlink_metadata(dir.path().join("l")).is_err());
    }
    // A module with no exported memory cannot have its target read: the
    // call traps, naming why, and nothing is made.
    let docked = e.dock(&module(&symlink_at("0", false)), &grant).unwrap();
    let err = e.run(&docked, opts).await.unwrap_err();
    assert!(err.to_string().contains("exports no memory"), "{err}");
    assert!(std::fs::symlink_metadata(dir.path().join("l")).is_err());
}

/// Opens `name` under the first preopen with `oflags` and exits with the
/// errno.
fn opener(name: &str, oflags: u32) -> String {
    format!(
        r#"(module
  (import "wasi_snapshot_preview1" "path_open" (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 100) "{name}")
  (func (export "_start")
    (call $exit (call $open (i32.const 3) (i32.const 0) (i32.const 100) (i32.const {}) (i32.const {oflags})
      (i64.const 66) (i64.const 0) (i32.const 0) (i32.const 400)))))"#,
        name.len()
    )
}

#[test]
fn wbx_conformance_reads_the_wasi_suite_format_and_fails_below_the_required_passes() {
    let home = tempfile::tempdir().unwrap();
    let suites = tempfile::tempdir().unwrap();
    let dir = suites.path().join("wasi-testsuite/mini");
    std::fs::create_dir_all(dir.join("root")).unwrap();
    std::fs::write(dir.join("root/stale.cleanup"), "left by an earlier run").unwrap();
    let case = |name: &str, wat: &str, json: &str| {
        module_file(&dir, name, wat);
        if !json.is_empty() {
            std::fs::write(dir.join(format!("{name}.json")), json).unwrap();
        }
    };
    case(
        "env",
        P1_PRINT_ENV,
        r#"{"env": {"A": "1", "B": "x y"}, "stdout": "A=1\u0000B=x y\u0000"}"#,
    );
    case("exit", P1_EXIT_33, r#"{"exit_code": 33}"#);
    // The `*.cleanup` artefact is not in the copy the guest sees (noent).
    case(
        "stale",
        &opener("stale.cleanup", 0),
        r#"{"root": "root", "exit_code": 44}"#,
    );
    // What a case creates lands in the copy, never in the suite.
    case("creates", &opener("made", 1), r#"{"root": "root"}"#);
    // Expected 0, exits 33: the one failure.
    case("wrong", P1_EXIT_33, "");
    let dir_arg = suites.path().to_str().unwrap();
    let run = |need: &str| {
        wbx(
            home.path(),
            &[
                "conformance",
                dir_arg,
                "--only",
                "wasi-testsuite",
                "--json",
                "--require-pass",
                need,
            ],
            b"",
        )
    };
    let out = run("4");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mini = &v["wasi-testsuite/mini"];
    assert_eq!(
        (mini["pass"].as_u64(), mini["fail"].as_u64()),
        (Some(4), Some(1)),
        "{v}"
    );
    assert!(
        !dir.join("root/made").exists(),
        "a case wrote into the suite"
    );
    assert!(dir.join("root/stale.cleanup").exists());
    let out = run("5");
    assert_eq!(out.status.code(), Some(1));
    // Under --json the failure is the JSON error on stdout.
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"]["kind"], "failed", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("4 cases passed, fewer than the 5 required"),
        "{v}"
    );
}

/// Opens `f` under the first preopen up to 1 000 times, keeping every
/// descriptor; exits 0 if all opened, else with the number opened less
/// 400 when the refusal was `mfile` (so 111 for 511), else 250.
const P1_FILES_HOLD: &str = r#"(module
  (import "wasi_snapshot_preview1" "path_open" (func $open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $exit (param i32)))
  (memory (export "memory") 1)
  (data (i32.const 100) "f")
  (func (export "_start")
    (local $n i32) (local $errno i32)
    (block $done
      (loop $again
        (br_if $done (i32.eq (local.get $n) (i32.const 1000)))
        (local.set $errno (call $open (i32.const 3) (i32.const 0) (i32.const 100) (i32.const 1)
          (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 400)))
        (if (i32.ne (local.get $errno) (i32.const 0))
          (then
            (if (i32.eq (local.get $errno) (i32.const 33))
              (then (call $exit (i32.sub (local.get $n) (i32.const 400)))))
            (call $exit (i32.const 250))))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $again)))
    (call $exit (i32.const 0))))"#;

/// The descriptor attack in the core-module lane: a preview 1 module
/// opens one file a thousand times and keeps every descriptor; it gets the
/// store's 512 (its preopen is one), then `mfile`.
#[test]
fn a_core_module_holds_no_more_open_files_than_a_component() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "x").unwrap();
    let hold = module_file(dir.path(), "hold", P1_FILES_HOLD);
    let preopen = format!("{}::/data::ro", dir.path().display());
    let out = wbx(
        home.path(),
        &["exec", "--dir", &preopen, hold.to_str().unwrap()],
        b"",
    );
    assert_eq!(
        out.status.code(),
        Some(111),
        "0 is all 1 000 opened: {}",
        text(&out.stderr)
    );
}
