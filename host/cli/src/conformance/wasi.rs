//! The WASI test suite's format (WebAssembly/wasi-testsuite): in each
//! folder, `NAME.wasm` and an optional `NAME.json` with `args`, `env`,
//! `root` (a directory beside the test, preopened as `/`), the expected
//! `exit_code` (default 0), `stdout` and `stderr`.
//!
//! Every case runs through the path `wbx exec` takes: the engine docks the
//! file (a wasip1 core module here) under the narrowest profile that grants
//! its imports, and runs it with exactly the case's args and environment.
//! The suite's files are never written: `root` is copied to a scratch
//! directory first, leaving out the `*.cleanup` artefacts a run leaves
//! behind, and the copy is what the guest sees as `/`.

use super::Tally;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;
use workbooks::{Artifact, Engine, Grant, Output, Preopen, SessionOptions};

/// The suite's folder under the suites directory.
pub(crate) const SUITE: &str = "wasi-testsuite";

/// A case's `NAME.json`.
#[derive(Debug, Default, Deserialize)]
struct Spec {
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    root: Option<String>,
    #[serde(default)]
    exit_code: i32,
    stdout: Option<String>,
    stderr: Option<String>,
}

/// Runs every case of one folder (`assemblyscript`, `c`, `rust`, ...).
pub(crate) async fn run_dir(engine: &Engine, dir: &Path, verbose: bool) -> Tally {
    tally_dir(
        dir,
        verbose,
        |wasm| async move { run_case(engine, &wasm).await },
    )
    .await
}

/// Runs every case of a folder with `run` (the profile a case ran under,
/// or why it failed) and counts them.
pub(super) async fn tally_dir<F, Fut>(dir: &Path, verbose: bool, run: F) -> Tally
where
    F: Fn(std::path::PathBuf) -> Fut,
    Fut: std::future::Future<Output = Result<String, String>>,
{
    let mut tally = Tally::default();
    for wasm in cases(dir) {
        let name = wasm
            .file_stem()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let start = Instant::now();
        let result = run(wasm).await;
        let ms = start.elapsed().as_millis();
        match result {
            Ok(profile) => {
                tally.pass += 1;
                if verbose {
                    outln!("    ok   {name} ({profile}, {ms} ms)");
                }
            }
            Err(why) => {
                tally.fail += 1;
                tally.failures.push(format!("{name}: {why}"));
            }
        }
    }
    tally
}

/// The cases of a folder: its `*.wasm` files, in name order.
pub(super) fn cases(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut cases: Vec<_> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "wasm"))
        .collect();
    cases.sort();
    cases
}

/// A case's file docked under the narrowest profile that grants its
/// imports, and that profile; or why not.
pub(super) fn dock_narrowest(
    engine: &Engine,
    wasm: &Path,
) -> Result<(std::sync::Arc<workbooks::Docked>, workbooks::Profile), String> {
    let artifact = Artifact::from_file(wasm).map_err(|e| format!("load: {e}"))?;
    let analysis = workbooks::dock::analyse(&artifact).map_err(|e| format!("inspect: {e}"))?;
    let profile = *analysis
        .granted_by
        .first()
        .ok_or_else(|| format!("no profile grants its imports ({})", analysis.caps))?;
    let docked = engine
        .dock(&artifact, &Grant::profile(profile.name()))
        .map_err(|e| format!("refused under {profile}: {e}"))?;
    Ok((docked, profile))
}

/// Runs one case; the profile it ran under, or why it failed.
async fn run_case(engine: &Engine, wasm: &Path) -> Result<String, String> {
    let spec: Spec = match std::fs::read_to_string(wasm.with_extension("json")) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| format!("bad json: {e}"))?,
        Err(_) => Spec::default(),
    };
    let (docked, profile) = dock_narrowest(engine, wasm)?;
    let stem = wasm.file_stem().unwrap_or_default().to_string_lossy();
    let mut opts = SessionOptions::new(id_of(&stem), "conformance");
    // The program name `wbx exec NAME.wasm` gives, run where it lies.
    opts.program = wasm.file_name().map(|n| n.to_string_lossy().into_owned());
    opts.args = spec.args;
    opts.env = spec.env.into_iter().collect();
    opts.stdout = Output::Capture;
    opts.stderr = Output::Capture;
    opts.inline_file_io = true;
    let scratch = match &spec.root {
        None => None,
        Some(root) => {
            let copy = tempfile::tempdir().map_err(|e| format!("scratch: {e}"))?;
            let from = wasm.parent().unwrap_or(Path::new(".")).join(root);
            copy_tree(&from, copy.path()).map_err(|e| format!("copying {root}: {e}"))?;
            opts.dirs.push(Preopen {
                host: copy.path().to_path_buf(),
                guest: "/".into(),
                read_only: false,
            });
            Some(copy)
        }
    };
    let out = engine.run(&docked, opts).await;
    drop(scratch);
    let out = out.map_err(|e| format!("{e} (under {profile})"))?;
    let mut wrong = Vec::new();
    if out.exit_code != spec.exit_code {
        wrong.push(format!(
            "exit {} (expected {})",
            out.exit_code, spec.exit_code
        ));
    }
    for (stream, got, want) in [
        ("stdout", &out.stdout, &spec.stdout),
        ("stderr", &out.stderr, &spec.stderr),
    ] {
        if let Some(want) = want
            && got.as_ref() != want.as_bytes()
        {
            wrong.push(format!(
                "{stream} {:?} (expected {want:?})",
                String::from_utf8_lossy(got)
            ));
        }
    }
    if wrong.is_empty() {
        Ok(profile.to_string())
    } else {
        Err(format!("{} under {profile}", wrong.join("; ")))
    }
}

/// A session id from a test name (ids are `[A-Za-z0-9._-]`).
pub(super) fn id_of(stem: &str) -> String {
    stem.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// Copies `from` into `to` (which exists): files made writable, links kept
/// as links, `*.cleanup` left out.
pub(super) fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        if name.to_string_lossy().ends_with(".cleanup") {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        let kind = entry.file_type()?;
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&src)?, &dst)?;
        } else if kind.is_dir() {
            std::fs::create_dir(&dst)?;
            copy_tree(&src, &dst)?;
        } else {
            std::fs::copy(&src, &dst)?;
            let mut perms = std::fs::metadata(&dst)?.permissions();
            #[expect(
                clippy::permissions_set_readonly_false,
                reason = "the scratch copy is the guest's to write, as the suite expects"
            )]
            perms.set_readonly(false);
            std::fs::set_permissions(&dst, perms)?;
        }
    }
    Ok(())
}
