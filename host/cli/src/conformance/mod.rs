//! `wbx conformance <suites-dir>`: third-party test suites run through the
//! sandboxed built-ins.
//!
//! `jq/*.test` (jq's own format) run through the built-in `jq`; the
//! `toybox/*.test` and `busybox/*.tests` cases (the `testing`/`testcmd`
//! format) run through the pipe shell, each in a scratch directory
//! preopened as `.` with the case's `input` file. A case that needs shell
//! syntax outside the subset (or a command the engine does not have) is
//! counted as skipped, not failed. `wasi-testsuite/<folder>/` (the official
//! WASI test suite's prebuilt wasip1 binaries and its JSON format) run
//! through `wbx exec`'s path ([`wasi`]), and so do the WASI 0.3 cases of
//! `wasi-testsuite-p3/<folder>/`, in the suite's operation format
//! ([`operations`]).

mod jq;
mod operations;
mod service;
mod shtest;
mod wasi;

use crate::fail;
use crate::options::{engine, runtime};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The directory holding jq/, toybox/, busybox/, wasi-testsuite/ and
    /// wasi-testsuite-p3/.
    dir: PathBuf,
    /// Only suites whose name contains this (jq, toybox, busybox, sort, ...).
    #[arg(long)]
    only: Option<String>,
    /// Print every failing case.
    #[arg(long, short)]
    verbose: bool,
    /// Exit 1 unless at least N cases passed over the suites run (for CI).
    #[arg(long, value_name = "N")]
    require_pass: Option<u32>,
}

/// Counts for one suite file.
#[derive(Debug, Default, Clone, Serialize)]
pub(crate) struct Tally {
    pub(crate) pass: u32,
    pub(crate) fail: u32,
    pub(crate) skipped: u32,
    /// Blocks expected to fail (jq's %%FAIL): how many did.
    pub(crate) expected_failures_ok: u32,
    pub(crate) expected_failures_total: u32,
    #[serde(skip)]
    pub(crate) failures: Vec<String>,
}

pub(crate) fn run(args: Args, home: PathBuf) -> u8 {
    if !args.dir.is_dir() {
        return fail(
            "conformance",
            format!("{}: no such folder", args.dir.display()),
            crate::exit::USAGE,
        );
    }
    let body = || -> Result<u8, u8> {
        let engine = engine(home)?;
        let rt = runtime()?;
        let mut results: BTreeMap<String, Tally> = BTreeMap::new();
        let wanted = |name: &str| args.only.as_deref().is_none_or(|o| name.contains(o));
        for file in ["jq/jq.test", "jq/man.test"] {
            let path = args.dir.join(file);
            if path.is_file() && wanted(file) {
                let tally = rt.block_on(jq::run_file(&engine, &path));
                results.insert(file.to_string(), tally);
            }
        }
        for suite in ["toybox", "busybox"] {
            let Ok(entries) = std::fs::read_dir(args.dir.join(suite)) else {
                continue;
            };
            let mut files: Vec<PathBuf> =
                entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
            files.sort();
            for path in files {
                let name = format!(
                    "{suite}/{}",
                    path.file_name().unwrap_or_default().to_string_lossy()
                );
                if wanted(&name) {
                    let tally = rt.block_on(shtest::run_file(&engine, &path));
                    results.insert(name, tally);
                }
            }
        }
        for suite in [wasi::SUITE, operations::SUITE] {
            let mut folders: Vec<PathBuf> = std::fs::read_dir(args.dir.join(suite))
                .into_iter()
                .flatten()
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_dir() && !wasi::cases(p).is_empty())
                .collect();
            folders.sort();
            for folder in folders {
                let name = format!(
                    "{suite}/{}",
                    folder.file_name().unwrap_or_default().to_string_lossy()
                );
                if !wanted(&name) {
                    continue;
                }
                if args.verbose && !crate::out::json() {
                    outln!("{name}");
                }
                let verbose = args.verbose && !crate::out::json();
                let tally = if suite == operations::SUITE {
                    rt.block_on(operations::run_dir(&engine, &folder, verbose))
                } else {
                    rt.block_on(wasi::run_dir(&engine, &folder, verbose))
                };
                results.insert(name, tally);
            }
        }
        if results.is_empty() {
            let only = args
                .only
                .as_deref()
                .map(|o| format!(" whose name contains `{o}`"))
                .unwrap_or_default();
            return Err(fail(
                "conformance",
                format!(
                    "{}: no suite{only} here (it holds jq/, toybox/, busybox/, wasi-testsuite/ or wasi-testsuite-p3/)",
                    args.dir.display()
                ),
                crate::exit::USAGE,
            ));
        }
        let passed: u32 = results.values().map(|t| t.pass).sum();
        let short = args
            .require_pass
            .filter(|needed| passed < *needed)
            .map(|needed| {
                format!("conformance: {passed} cases passed, fewer than the {needed} required")
            });
        let code = if short.is_some() {
            crate::exit::FAILED
        } else {
            0
        };
        if crate::out::json() {
            let value = serde_json::to_value(&results).unwrap_or_default();
            let why = short.clone().unwrap_or_default();
            outln!("{}", crate::out::verdict(value, code, &why));
            return Ok(code);
        } else {
            outln!(
                "{:<32} {:>5} {:>5} {:>8}",
                "suite",
                "pass",
                "fail",
                "skipped"
            );
            for (name, t) in &results {
                let extra = if t.expected_failures_total > 0 {
                    format!(
                        "  (%%FAIL blocks: {}/{} failed as expected)",
                        t.expected_failures_ok, t.expected_failures_total
                    )
                } else {
                    String::new()
                };
                outln!(
                    "{name:<32} {:>5} {:>5} {:>8}{extra}",
                    t.pass,
                    t.fail,
                    t.skipped
                );
                if args.verbose {
                    for f in &t.failures {
                        outln!("    {f}");
                    }
                }
            }
        }
        match short {
            Some(why) => Err(fail("", why, code)),
            None => Ok(0),
        }
    };
    body().unwrap_or_else(|code| code)
}
