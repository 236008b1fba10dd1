//! What the tests start, found on the `PATH` or installed from Debian.
//!
//! The node, container and OCI tests start real servers on loopback
//! (nats-server, bubblewrap, the CNCF distribution server and htpasswd
//! for its credentials); the catalog and MCP tests run Python's pip. Each
//! is a program looked up on the `PATH` and the Debian package that
//! brings it. As root the missing packages are installed with apt-get;
//! otherwise nothing is built and the one line that installs them is
//! printed.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A program the tests run and the Debian package that brings it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Need {
    /// The program looked up on the `PATH`.
    pub program: &'static str,
    /// The Debian package that installs it.
    pub package: &'static str,
    /// Which tests start it.
    pub why: &'static str,
}

/// Everything the workspace's tests start, in install order.
pub const NEEDS: &[Need] = &[
    Need {
        program: "nats-server",
        package: "nats-server",
        why: "the fabric's node tier (JetStream)",
    },
    Need {
        program: "bwrap",
        package: "bubblewrap",
        why: "the container tier and its ceilings",
    },
    Need {
        program: "docker-registry",
        package: "docker-registry",
        why: "OCI push and pull (the CNCF distribution server)",
    },
    Need {
        program: "htpasswd",
        package: "apache2-utils",
        why: "the test registry's credentials (bcrypt)",
    },
    Need {
        program: "python3",
        package: "python3-pip",
        why: "the catalog's programs and the MCP client, from PyPI with pip",
    },
];

/// The needs whose program is not on `path` (a `PATH`-style list). For
/// Python, pip must answer too.
pub fn missing(path: &OsStr) -> Vec<Need> {
    NEEDS
        .iter()
        .copied()
        .filter(|need| match find(path, need.program) {
            None => true,
            Some(python) if need.program == "python3" => !has_pip(&python, path),
            Some(_) => false,
        })
        .collect()
}

/// The executable `program` in one of `path`'s directories.
pub fn find(path: &OsStr, program: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    std::env::split_paths(path)
        .map(|dir| dir.join(program))
        .find(|p| {
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

fn has_pip(python: &Path, path: &OsStr) -> bool {
    Command::new(python)
        .args(["-m", "pip", "--version"])
        .env("PATH", path)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The one line that installs `missing` (with `sudo` unless root).
pub fn install_line(missing: &[Need], root: bool) -> String {
    let packages: Vec<&str> = missing.iter().map(|n| n.package).collect();
    format!(
        "{}apt-get install -y {}",
        if root { "" } else { "sudo " },
        packages.join(" ")
    )
}

/// What the tests lack, one line each, for the message that stops a run.
pub fn report(missing: &[Need]) -> String {
    missing
        .iter()
        .map(|n| {
            format!(
                "  {} (Debian package {}): {}\n",
                n.program, n.package, n.why
            )
        })
        .collect()
}

/// Whether this process runs as root.
pub fn is_root() -> bool {
    // The effective uid, as `id -u` prints it; no libc binding needed.
    Command::new("id")
        .arg("-u")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .is_some_and(|uid| uid.trim() == "0")
}

/// Installs `missing` with apt-get (as root), saying what it does.
pub fn install(missing: &[Need]) -> Result<(), String> {
    let packages: Vec<&str> = missing.iter().map(|n| n.package).collect();
    eprintln!(
        "xtask: installing {} (apt-get, as root)",
        packages.join(" ")
    );
    let apt = |args: &[&str]| {
        // Its progress is noise here; its errors go to stderr.
        Command::new("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(std::process::Stdio::null())
            .status()
            .map_err(|e| format!("apt-get: {e}"))
            .and_then(|s| {
                s.success()
                    .then_some(())
                    .ok_or_else(|| format!("apt-get {} failed ({s})", args.join(" ")))
            })
    };
    apt(&["update", "-qq"])?;
    let mut install = vec!["install", "-y", "-qq", "--no-install-recommends"];
    install.extend(&packages);
    apt(&install)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_install_line_names_every_package_and_sudo_only_for_a_user() {
        assert_eq!(
            install_line(NEEDS, false),
            "sudo apt-get install -y nats-server bubblewrap docker-registry apache2-utils python3-pip"
        );
        assert!(install_line(&NEEDS[..1], true).starts_with("apt-get install -y nats-server"));
    }
}
