//! The CLI tests' fixtures: the engine's, shared with the core's tests,
//! and those that run `wbx` itself.

#[path = "../../../core/tests/engine/common.rs"]
mod engine;
pub use engine::*;
#[path = "../../../core/tests/engine/loopback.rs"]
#[expect(dead_code, reason = "the core's serving tests use the rest")]
mod loopback;
pub use loopback::*;

use std::path::Path;

/// The wasmtime version the workspace's `Cargo.lock` pins.
pub fn locked_wasmtime() -> String {
    let lock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.lock");
    let text = std::fs::read_to_string(lock).unwrap();
    let key = "\nname = \"wasmtime\"\nversion = \"";
    let rest = &text[text.find(key).unwrap() + key.len()..];
    rest[..rest.find('"').unwrap()].to_string()
}

/// Runs the `wbx` binary homed in `home` with `args`, feeding it `stdin`;
/// no log or network allow-list leaks in from the test's environment.
pub fn wbx(home: &Path, args: &[&str], stdin: &[u8]) -> std::process::Output {
    wbx_env(home, args, stdin, &[])
}

/// [`wbx`] with `env` set besides.
pub fn wbx_env(
    home: &Path,
    args: &[&str],
    stdin: &[u8],
    env: &[(&str, &str)],
) -> std::process::Output {
    use std::io::Write;
    let mut child = wbx_command(home)
        .args(args)
        .envs(env.iter().copied())
        .spawn()
        .expect("spawn wbx");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(stdin)
        .expect("write stdin");
    child.wait_with_output().expect("wbx output")
}

/// `wbx` run with `args` in `home` until it has printed `lines` lines, and
/// measured while the guest holds what it made: those lines, its peak
/// resident memory in KiB (its `VmHWM`) read then, and its output once its
/// stdin is closed. It runs once to its end first, so the compile is not
/// in the peak.
pub fn wbx_peak(home: &Path, args: &[&str], lines: usize) -> (String, usize, std::process::Output) {
    use std::io::BufRead;
    let warm = wbx(home, args, b"");
    assert!(
        warm.status.success(),
        "{}",
        String::from_utf8_lossy(&warm.stderr)
    );
    let mut child = wbx_command(home).args(args).spawn().expect("spawn wbx");
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut said = String::new();
    for _ in 0..lines {
        stdout.read_line(&mut said).expect("the probe's report");
    }
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let peak_kib = status
        .lines()
        .find_map(|l| {
            l.strip_prefix("VmHWM:")?
                .trim()
                .strip_suffix("kB")?
                .trim()
                .parse::<usize>()
                .ok()
        })
        .expect("VmHWM in /proc/PID/status");
    drop(child.stdin.take());
    let out = child
        .wait_with_output()
        .expect("wbx ends once its stdin closes");
    (said, peak_kib, out)
}

/// The `wbx` binary homed in `home`, its stdio piped, with no log,
/// allow-list, signer or registry credential from the test's environment.
pub fn wbx_command(home: &Path) -> std::process::Command {
    use std::process::{Command, Stdio};
    let mut command = Command::new(env!("CARGO_BIN_EXE_wbx"));
    command
        .env("WB_HOME", home)
        .env_remove("WB_LOG")
        .env_remove("WB_NET_ALLOW")
        .env_remove("WB_OPERATOR_ALLOW")
        .env_remove("WB_FIRST_PARTY_TOOLKITS")
        .env_remove("WB_TRUSTED_SIGNERS")
        .env_remove("WB_OCI_SIGNERS")
        .env_remove("WB_OCI_USERNAME")
        .env_remove("WB_OCI_PASSWORD")
        .env("DOCKER_CONFIG", home.join("no-docker-config"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

/// Where the catalog's pinned programs are for the tests: `WB_CATALOG_DIR`,
/// else `target/catalog`, where `cargo xtask test` puts them.
pub fn catalog_dir() -> std::path::PathBuf {
    std::env::var_os("WB_CATALOG_DIR")
        .filter(|d| !d.is_empty())
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/catalog")
        })
}
