//! `cargo xtask`: the project's own tasks (the alias is in
//! `.cargo/config.toml`).
//!
//! - `cargo xtask test [ARGS…]` is the README's test command: it
//!   provisions what the tests start (Debian packages as root; otherwise
//!   it stops before building, printing the line that installs them),
//!   fetches the catalog's pinned programs and the MCP SDK from PyPI, then
//!   runs `cargo test --workspace --no-fail-fast ARGS…`.
//! - `cargo xtask provision [--check]` does only the provisioning;
//!   `--check` installs nothing and fails when anything is missing.
//!
//! It has no dependencies, so it starts in seconds on a fresh machine.

mod provision;
mod python;

use std::path::PathBuf;
use std::process::{Command, ExitCode};

/// The exit code when provisioning stops the run before anything is built.
const STOPPED: u8 = 2;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (task, rest) = match args.split_first() {
        Some((task, rest)) => (task.as_str(), rest),
        None => ("help", &[][..]),
    };
    let code = match task {
        "test" => test(rest),
        "provision" => match provide(rest.iter().any(|a| a == "--check")) {
            Ok(()) => 0,
            Err(code) => code,
        },
        "help" | "--help" | "-h" => {
            print!("{USAGE}");
            0
        }
        other => {
            eprint!("xtask: unknown task `{other}`\n\n{USAGE}");
            STOPPED
        }
    };
    ExitCode::from(code)
}

const USAGE: &str = "\
usage: cargo xtask <task>

  test [ARGS...]       provision what the tests start, then cargo test --workspace ARGS...
  provision [--check]  only provision (--check: install nothing, fail if anything is missing)
";

/// The repository's root (this crate is `tests/xtask`).
fn root() -> PathBuf {
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(2)
        .unwrap_or(manifest)
        .to_path_buf()
}

/// Where the catalog's programs are kept: `WB_CATALOG_DIR`, else
/// `target/catalog` (where the tests look when it is unset).
fn catalog_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("WB_CATALOG_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    std::env::var_os("CARGO_TARGET_DIR")
        .filter(|d| !d.is_empty())
        .map_or_else(|| root().join("target"), PathBuf::from)
        .join("catalog")
}

/// Provisions everything the tests use, or the exit code that stops the
/// run. With `check_only`, installs nothing.
fn provide(check_only: bool) -> Result<(), u8> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let missing = provision::missing(&path);
    if !missing.is_empty() {
        let root = provision::is_root();
        let can_install = root && !check_only && provision::find(&path, "apt-get").is_some();
        if !can_install {
            eprint!(
                "xtask: the tests start programs this machine lacks:\n{}\
                 install them, then run this again:\n\n    {}\n\n\
                 (nothing was built)\n",
                provision::report(&missing),
                provision::install_line(&missing, root)
            );
            return Err(STOPPED);
        }
        provision::install(&missing).map_err(|e| stop(&e))?;
        let still = provision::missing(&path);
        if !still.is_empty() {
            return Err(stop(&format!(
                "still missing after apt-get:\n{}",
                provision::report(&still)
            )));
        }
    }
    if check_only {
        eprintln!("xtask: every program the tests start is installed");
        return Ok(());
    }
    let pins = root().join(".ci/catalog.sha256");
    python::catalog(&catalog_dir(), &pins).map_err(|e| stop(&e))?;
    python::mcp_sdk().map_err(|e| stop(&e))?;
    Ok(())
}

/// Whether `name` is one of the variables `cargo run` sets for the
/// package it runs (this one). Left in the environment of the `cargo test`
/// started here, they differ from a plain shell's, and build scripts that
/// watch them (ring's watches `CARGO_PKG_NAME` and `CARGO_MANIFEST_DIR`)
/// run again, so the next plain `cargo build` rebuilds everything above
/// them: ring, rustls, reqwest and the engine, about 3 min on two cores.
fn set_by_cargo_run(name: &str) -> bool {
    name.starts_with("CARGO_PKG_")
        || matches!(
            name,
            "CARGO_MANIFEST_DIR"
                | "CARGO_MANIFEST_PATH"
                | "CARGO_MANIFEST_LINKS"
                | "CARGO_CRATE_NAME"
                | "CARGO_BIN_NAME"
                | "CARGO_PRIMARY_PACKAGE"
                | "CARGO_RUSTC_CURRENT_DIR"
        )
}

fn stop(why: &str) -> u8 {
    eprintln!("xtask: {why}");
    STOPPED
}

/// `cargo xtask test`: provision, then the whole workspace's tests.
fn test(args: &[String]) -> u8 {
    if let Err(code) = provide(false) {
        return code;
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    // Every test binary runs, and the failures are listed together.
    command
        .args(["test", "--workspace", "--no-fail-fast"])
        .args(args)
        .current_dir(root())
        .env("WB_CATALOG_DIR", catalog_dir());
    for (name, _) in std::env::vars_os() {
        if let Some(name) = name.to_str().filter(|n| set_by_cargo_run(n)) {
            command.env_remove(name);
        }
    }
    let status = command.status();
    match status {
        Ok(s) => s.code().map_or(1, |c| u8::try_from(c).unwrap_or(1)),
        Err(e) => stop(&format!("cargo: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::set_by_cargo_run;

    #[test]
    fn the_variables_cargo_run_sets_are_kept_from_the_tests_and_the_users_are_not() {
        for set in [
            "CARGO_PKG_NAME",
            "CARGO_PKG_VERSION_MAJOR",
            "CARGO_MANIFEST_DIR",
            "CARGO_CRATE_NAME",
        ] {
            assert!(set_by_cargo_run(set), "{set}");
        }
        for kept in [
            "CARGO_HOME",
            "CARGO_TARGET_DIR",
            "CARGO_INCREMENTAL",
            "CARGO",
            "PATH",
        ] {
            assert!(!set_by_cargo_run(kept), "{kept}");
        }
    }
}
