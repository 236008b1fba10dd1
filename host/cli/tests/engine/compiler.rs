//! An engine that does not compile in process (as the compiler-less `wbr`
//! is built) hands a compile-cache miss to a helper `wbx`, then loads the
//! entry the helper sealed; a helper that fails, or leaves nothing the
//! engine can load, is a named compile error and nothing runs.

use crate::common::{artifact, locked_wasmtime, own_builder, text, wbx};
use guest_artifacts::*;
use std::path::{Path, PathBuf};
use workbooks::commands::{ArgMode, Tier};
use workbooks::{Compiler, DockError, Engine, Grant, LineOptions, SessionOptions};

/// An engine homed in `home` whose compiler is the helper `program`.
fn helped_by(home: &Path, program: impl Into<PathBuf>) -> Engine {
    own_builder(home)
        .compiler(Compiler::Helper(program.into()))
        .build()
        .unwrap()
}

/// The compile-cache files in `home`.
fn entries(home: &Path) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(home.join("cache/compiled")) else {
        return Vec::new();
    };
    let mut names: Vec<String> = dir
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".cwasm"))
        .collect();
    names.sort();
    names
}

async fn hello(e: &Engine) -> Result<String, DockError> {
    let docked = e.dock(&artifact(CLI_HELLO), &Grant::profile("compute"))?;
    let out = e
        .run(&docked, SessionOptions::new("hello", "default"))
        .await
        .unwrap();
    Ok(text(&out.stdout))
}

#[tokio::test]
async fn a_cold_artifact_is_compiled_by_the_helper_and_then_loads_without_it() {
    let home = tempfile::tempdir().unwrap();
    let e = helped_by(home.path(), env!("CARGO_BIN_EXE_wbx"));
    assert_eq!(hello(&e).await.unwrap(), "hello\n");
    let sha = artifact(CLI_HELLO).sha256_hex();
    let written = entries(home.path());
    assert_eq!(written.len(), 1, "{written:?}");
    assert!(written[0].starts_with(&sha), "{written:?}");

    // A second engine on the same home whose helper cannot even start
    // runs it from the entry the first helper sealed.
    let lonely = helped_by(home.path(), home.path().join("no-such-wbx"));
    assert_eq!(hello(&lonely).await.unwrap(), "hello\n");
    assert_eq!(entries(home.path()), written);
}

#[tokio::test]
async fn a_shell_line_through_the_helper_composes_and_compiles_every_stage() {
    let home = tempfile::tempdir().unwrap();
    let e = helped_by(home.path(), env!("CARGO_BIN_EXE_wbx"));
    let out = e
        .commands()
        .run_line("echo hi there | upper | wc -w", LineOptions::default())
        .await
        .unwrap();
    assert_eq!(text(&out.stdout).trim(), "2");
    let out = e
        .commands()
        .run_line("echo hi | upper", LineOptions::default())
        .await
        .unwrap();
    assert_eq!(text(&out.stdout), "HI\n");
    // The shell composed with its broker, and each built-in that ran.
    assert!(
        entries(home.path()).len() >= 3,
        "{:?}",
        entries(home.path())
    );
}

#[tokio::test]
async fn a_cold_wasip1_core_module_is_compiled_by_the_helper_too() {
    let home = tempfile::tempdir().unwrap();
    let e = helped_by(home.path(), env!("CARGO_BIN_EXE_wbx"));
    let module = wat::parse_str(
        r#"(module
            (import "wasi_snapshot_preview1" "fd_write"
                (func $fd_write (param i32 i32 i32 i32) (result i32)))
            (memory (export "memory") 1)
            (data (i32.const 16) "core\n")
            (func (export "_start")
                (i32.store (i32.const 0) (i32.const 16))
                (i32.store (i32.const 4) (i32.const 5))
                (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))"#,
    )
    .unwrap();
    let sha = workbooks::Artifact::from_bytes(module.clone())
        .unwrap()
        .sha256_hex();
    e.registry()
        .register("core", module, ArgMode::Argv, Tier::Instance)
        .unwrap();
    let out = e
        .commands()
        .run("core", vec![], LineOptions::default())
        .await
        .unwrap();
    assert_eq!(text(&out.stdout), "core\n");
    assert!(
        entries(home.path()).iter().any(|n| n.starts_with(&sha)),
        "{:?}",
        entries(home.path())
    );
}

#[tokio::test]
async fn a_helper_that_cannot_start_or_fails_is_a_named_compile_error_and_nothing_is_cached() {
    let home = tempfile::tempdir().unwrap();
    let missing = home.path().join("no-such-wbx");
    let err = hello(&helped_by(home.path(), &missing)).await.unwrap_err();
    assert!(matches!(err, DockError::Compile(_)), "{err:?}");
    assert!(
        err.to_string().contains(&format!(
            "cannot start the compile helper {}",
            missing.display()
        )),
        "{err}"
    );

    let err = hello(&helped_by(home.path(), "/bin/false"))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("compile helper /bin/false failed on the component"),
        "{err}"
    );
    assert_eq!(entries(home.path()), Vec::<String>::new());
}

#[tokio::test]
async fn a_helper_that_succeeds_without_writing_a_sealed_entry_runs_nothing() {
    let home = tempfile::tempdir().unwrap();
    // Reads the bytes and exits 0 having written nothing.
    let idle = home.path().join("idle.sh");
    std::fs::write(&idle, "#!/bin/sh\ncat > /dev/null\n").unwrap();
    set_executable(&idle);
    let err = hello(&helped_by(home.path(), &idle)).await.unwrap_err();
    let expected = format!(
        "the compile helper {} left no entry this engine can load",
        idle.display()
    );
    assert!(err.to_string().contains(&expected), "{err}");

    // A helper that plants an unsealed file under the very name the entry
    // has (learnt from another home) is no better: the file is discarded.
    let other = tempfile::tempdir().unwrap();
    let full = helped_by(other.path(), env!("CARGO_BIN_EXE_wbx"));
    assert_eq!(hello(&full).await.unwrap(), "hello\n");
    let name = entries(other.path()).remove(0);
    let compiled = home.path().join("cache/compiled");
    let planter = home.path().join("planter.sh");
    std::fs::write(
        &planter,
        format!(
            "#!/bin/sh\ncat > /dev/null\nmkdir -p '{dir}'\nprintf 'not native code' > '{dir}/{name}'\n",
            dir = compiled.display(),
        ),
    )
    .unwrap();
    set_executable(&planter);
    let err = hello(&helped_by(home.path(), &planter)).await.unwrap_err();
    assert!(err.to_string().contains("left no entry"), "{err}");
    assert!(
        !compiled.join(&name).exists(),
        "the planted file is discarded"
    );
}

#[tokio::test]
async fn the_helper_runs_marked_so_that_it_never_hands_on_a_miss_itself() {
    let home = tempfile::tempdir().unwrap();
    // A helper that compiles only when it was started marked as a helper.
    let marked = home.path().join("marked.sh");
    std::fs::write(
        &marked,
        format!(
            "#!/bin/sh\n[ \"$WB_NO_HELPER\" = 1 ] || {{ echo unmarked >&2; exit 3; }}\nexec '{}' \"$@\"\n",
            env!("CARGO_BIN_EXE_wbx")
        ),
    )
    .unwrap();
    set_executable(&marked);
    assert_eq!(
        hello(&helped_by(home.path(), &marked)).await.unwrap(),
        "hello\n"
    );
}

#[test]
fn precompile_fills_the_cache_that_a_helped_engine_reads() {
    let home = tempfile::tempdir().unwrap();
    let out = wbx(home.path(), &["precompile", "--json", CLI_HELLO], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let sha = artifact(CLI_HELLO).sha256_hex();
    assert_eq!(json["sha256"], sha);
    assert_eq!(json["kind"], "component");
    let written = entries(home.path());
    assert_eq!(written.len(), 1);
    assert!(written[0].starts_with(&sha));

    let out = wbx(home.path(), &["precompile", "-"], b"#!/bin/sh\necho hi\n");
    assert_eq!(out.status.code(), Some(126));
    assert!(
        text(&out.stderr).starts_with("wbx: load: "),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(entries(home.path()), written);
}

/// The wasmtime version Cargo.lock pins, read independently of the build.
#[test]
fn version_says_how_this_binary_compiles_and_on_which_wasmtime() {
    let home = tempfile::tempdir().unwrap();
    let out = wbx(home.path(), &["--version"], b"");
    let wasmtime = locked_wasmtime();
    assert!(wasmtime.starts_with("48."), "{wasmtime}");
    assert_eq!(
        text(&out.stdout).trim(),
        format!(
            "wbx {} (wasmtime {wasmtime}; compiles in process: cranelift)",
            env!("CARGO_PKG_VERSION")
        )
    );
    let short = wbx(home.path(), &["-V"], b"");
    assert_eq!(
        text(&short.stdout).trim(),
        format!("wbx {} (wasmtime {wasmtime})", env!("CARGO_PKG_VERSION"))
    );
}

fn set_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}
