#![expect(clippy::unwrap_used, reason = "tests fail loudly by design")]

//! The provisioning step on a machine without the servers: `cargo xtask
//! test` names each missing package and the one line that installs them,
//! and stops before building anything, as root and as a user.

use std::path::Path;
use std::process::{Command, Output};

/// Every Debian package the tests need, as the xtask names them.
const PACKAGES: &[&str] = &[
    "nats-server",
    "bubblewrap",
    "docker-registry",
    "apache2-utils",
    "python3-pip",
];

/// A `PATH` holding only `id` (how the xtask tells root): no servers, no
/// Python, no apt-get, no cargo.
fn bare_path() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/usr/bin/id", dir.path().join("id")).unwrap();
    dir
}

fn stops_with_install_line(out: &Output, sudo: bool) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    for package in PACKAGES {
        assert!(
            err.contains(&format!("(Debian package {package})")),
            "{package} not named:\n{err}"
        );
    }
    let line = format!(
        "{}apt-get install -y {}",
        if sudo { "sudo " } else { "" },
        PACKAGES.join(" ")
    );
    assert!(
        err.contains(&format!("\n    {line}\n")),
        "no install line `{line}`:\n{err}"
    );
    assert!(err.contains("nothing was built"), "{err}");
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

fn is_root() -> bool {
    let out = Command::new("id").arg("-u").output().unwrap();
    String::from_utf8_lossy(&out.stdout).trim() == "0"
}

#[test]
fn without_the_servers_the_test_task_names_each_package_and_the_line_that_installs_them() {
    let path = bare_path();
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("test")
        .env("PATH", path.path())
        .output()
        .unwrap();
    // Root without apt-get on the PATH cannot install either: it prints
    // the line without sudo.
    stops_with_install_line(&out, !is_root());
}

#[test]
fn a_user_who_is_not_root_is_stopped_before_the_build_with_a_sudo_line() {
    let path = bare_path();
    let xtask = Path::new(env!("CARGO_BIN_EXE_xtask"));
    let out = if is_root() {
        // As `nobody`, with no supplementary groups.
        Command::new("/usr/bin/setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(xtask)
            .arg("test")
            .env("PATH", path.path())
            .output()
            .unwrap()
    } else {
        Command::new(xtask)
            .arg("test")
            .env("PATH", path.path())
            .output()
            .unwrap()
    };
    stops_with_install_line(&out, true);
}

#[test]
fn provision_check_installs_nothing_and_fails_when_anything_is_missing() {
    let path = bare_path();
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["provision", "--check"])
        .env("PATH", path.path())
        .output()
        .unwrap();
    stops_with_install_line(&out, !is_root());
}
