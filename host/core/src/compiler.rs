//! Who turns an artifact's bytes into native code for the compile cache.
//!
//! A build with the `compile` feature (the default) carries Cranelift and
//! compiles in process. A build without it, such as the `wbr` runner,
//! carries only wasmtime's runtime: it loads sealed entries from the home's
//! compile cache and, on a miss, hands the bytes to a full `wbx` (by default
//! the one beside its own executable), which compiles them into the same
//! home's cache. The entry is then loaded like any other, its seal checked.
//! A runner therefore starts without paying to load a compiler, and pays
//! for one only when the cache is cold.
//!
//! Invariant: native code is only ever read from an entry sealed with the
//! home's key (`seal.rs`), whoever compiled it. The helper is named by the
//! embedder or found beside the running executable, never looked up on
//! `PATH` and never chosen by a guest; it runs with `WB_NO_HELPER` set, so
//! a helper that has no compiler either fails, never recursing.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// What `-V` says of this build: the engine's version and the wasmtime
/// it runs on.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (wasmtime ",
    env!("WASMTIME_VERSION"),
    ")"
);

/// What `--version` says of this build: the versions and how it compiles.
pub const BUILD: &str = if cfg!(feature = "compile") {
    concat!(
        env!("CARGO_PKG_VERSION"),
        " (wasmtime ",
        env!("WASMTIME_VERSION"),
        "; compiles in process: cranelift)"
    )
} else {
    concat!(
        env!("CARGO_PKG_VERSION"),
        " (wasmtime ",
        env!("WASMTIME_VERSION"),
        "; runtime only: compiles through the wbx beside it)"
    )
};

/// Told when the engine starts compiling an artifact its cache lacks,
/// with the artifact's size in bytes; what it returns is dropped when the
/// compile ends. How the CLI shows a spinner for every first compile.
pub type CompileWatch = std::sync::Arc<dyn Fn(usize) -> Box<dyn std::any::Any> + Send + Sync>;

/// Set in a helper's environment: it must compile itself or fail.
const NO_HELPER_ENV: &str = "WB_NO_HELPER";

/// How the engine compiles an artifact that is not in its cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compiler {
    /// Compile in this process (builds with the `compile` feature).
    InProcess,
    /// Run `wbx --home <home> precompile -` with this binary, the bytes on
    /// its stdin, then load what it wrote to the cache.
    Helper(PathBuf),
}

impl Default for Compiler {
    /// In process when this build has a compiler; otherwise the `wbx`
    /// beside this executable.
    fn default() -> Self {
        if cfg!(feature = "compile") {
            return Compiler::InProcess;
        }
        let beside = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(|dir| dir.join("wbx")))
            .unwrap_or_else(|| PathBuf::from("wbx"));
        Compiler::Helper(beside)
    }
}

impl Compiler {
    /// Whether this build can compile in process.
    pub(crate) const fn in_process_available() -> bool {
        cfg!(feature = "compile")
    }
}

/// Has the helper at `program` compile `bytes` (a `kind`, for messages)
/// into `home`'s cache, the directory `cache` when given.
pub(crate) fn compile_with_helper(
    program: &Path,
    home: &Path,
    cache: Option<&Path>,
    bytes: &[u8],
    kind: &str,
) -> Result<(), String> {
    if std::env::var_os(NO_HELPER_ENV).is_some() {
        return Err("this binary has no compiler, and it is itself a compile helper".into());
    }
    let mut helper = Command::new(program);
    if let Some(cache) = cache {
        helper.env(workbooks_wire::home::CACHE_DIR_ENV, cache);
    }
    let mut child = helper
        .arg("--home")
        .arg(home)
        .args(["precompile", "--quiet", "-"])
        .env(NO_HELPER_ENV, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| {
            format!(
                "cannot start the compile helper {} ({e}): this binary has no compiler; \
                 put wbx beside it, or compile ahead with `wbx precompile`",
                program.display()
            )
        })?;
    let wrote = child.stdin.take().map(|mut stdin| stdin.write_all(bytes));
    let out = child
        .wait_with_output()
        .map_err(|e| format!("compile helper {}: {e}", program.display()))?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr);
        let why = why
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("");
        return Err(format!(
            "compile helper {} failed on the {kind} ({}): {why}",
            program.display(),
            out.status
        ));
    }
    if let Some(Err(e)) = wrote {
        return Err(format!("writing to the compile helper: {e}"));
    }
    Ok(())
}
