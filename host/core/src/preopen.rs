//! Host directories a guest sees through `wasi:filesystem` (or its preview 1
//! calls), and the rules every lane applies before opening one.
//!
//! Threats: a spec typo that silently widens access (`--dir H::/g:ro` would
//! otherwise be a read-write preopen of a guest path `/g:ro`); a preopen
//! without the `vfs` cap; and a preopen that contains the engine's home (or
//! sits inside it), which would hand the guest the sled database of every
//! tenant, the compile cache the engine loads as native code, and the
//! signing keys. Each is refused with an error that says what to do. The one
//! exception is a part of the home a service shares with its guests
//! ([`HomeShares`], the agent's run workdirs), named by a pattern its crate
//! registers, never by a guest.

use crate::policy::{Cap, Grant};
use std::path::{Component, Path, PathBuf};
use std::sync::RwLock;
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};

/// A host directory made visible to the guest through `wasi:filesystem`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preopen {
    /// The directory on the host.
    pub host: PathBuf,
    /// The name the guest sees it under.
    pub guest: String,
    /// Whether the guest may only read.
    pub read_only: bool,
}

impl Preopen {
    /// Parses `HOST::GUEST` (read-write), `HOST::GUEST::ro` or
    /// `HOST::GUEST::rw`. Anything else is refused: an unknown mode, a part
    /// past the mode, and a `:` in the guest path (the mark of `:ro` typed
    /// with one colon).
    pub fn parse(spec: &str) -> Result<Preopen, String> {
        let parts: Vec<&str> = spec.split("::").collect();
        let (host, guest, mode) = match parts[..] {
            [host, guest] => (host, guest, None),
            [host, guest, mode] => (host, guest, Some(mode)),
            [_, _, _, ..] => {
                return Err(format!(
                    "`{spec}`: expected HOST::GUEST[::ro], found {} parts",
                    parts.len()
                ));
            }
            _ => return Err(format!("`{spec}`: expected HOST::GUEST[::ro]")),
        };
        if host.is_empty() || guest.is_empty() {
            return Err(format!("`{spec}`: expected HOST::GUEST[::ro]"));
        }
        let read_only = match mode {
            None | Some("rw") => false,
            Some("ro") => true,
            Some(other) => {
                return Err(format!(
                    "`{spec}`: unknown mode `{other}` (use `ro` or `rw`)"
                ));
            }
        };
        if guest.contains(':') {
            return Err(format!(
                "`{spec}`: the guest path `{guest}` contains `:`; \
                 a read-only preopen is written HOST::GUEST::ro"
            ));
        }
        Ok(Preopen {
            host: PathBuf::from(host),
            guest: guest.to_string(),
            read_only,
        })
    }
}

/// `path` made absolute with every link resolved, as far as it exists: the
/// part that does not exist yet is appended as written.
fn resolved(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            return rest.iter().rev().fold(real, |p, part| p.join(part));
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                existing = parent;
            }
            _ => return absolute,
        }
    }
}

/// Why a preopen was refused.
#[derive(Debug, thiserror::Error)]
pub enum PreopenError {
    /// Preopens were asked for without the vfs cap.
    #[error("capability not granted: vfs (needed to preopen {0})")]
    WithoutVfs(String),
    /// A preopen would show the guest the engine's own home (its database,
    /// caches and keys).
    #[error(
        "refused: preopening {host} would show the guest the engine home {home}; \
         preopen a directory outside it, or move the home (--home / WB_HOME)"
    )]
    ReachesHome {
        /// The host directory.
        host: String,
        /// The engine home.
        home: String,
    },
    /// A share of the home that is not a relative pattern of names.
    #[error(
        "refused: `{0}` is not a share of the home (a relative path of names, \
         `*` for any one name, no `..`)"
    )]
    Share(String),
    /// A preopen could not be opened.
    #[error("cannot preopen {host}: {message}")]
    Open {
        /// The host directory.
        host: String,
        /// What went wrong.
        message: String,
    },
}

/// The parts of an engine's home its services share with their guests:
/// patterns of names under the home, `*` standing for any one name (the
/// agent shares `runs/*/*/workdir`: a run's working dir and what is under
/// it). Registered by host code ([`crate::Engine::share_home`]), read only
/// when a session has preopens.
#[derive(Debug, Default)]
pub(crate) struct HomeShares(RwLock<Vec<String>>);

impl HomeShares {
    /// Adds `pattern`, once.
    pub(crate) fn add(&self, pattern: &str) -> Result<(), PreopenError> {
        let valid = pattern
            .split('/')
            .all(|name| !name.is_empty() && name != "." && name != "..");
        if !valid {
            return Err(PreopenError::Share(pattern.to_string()));
        }
        let mut shares = self.0.write().unwrap_or_else(|p| p.into_inner());
        if !shares.iter().any(|s| s == pattern) {
            shares.push(pattern.to_string());
        }
        Ok(())
    }

    /// The patterns, in the order they were added.
    pub(crate) fn patterns(&self) -> Vec<String> {
        self.0.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Whether `rest`, a path under the home, is a shared part or under one.
    fn covers(&self, rest: &Path) -> bool {
        let names: Vec<Component<'_>> = rest.components().collect();
        let shares = self.0.read().unwrap_or_else(|p| p.into_inner());
        shares.iter().any(|pattern| {
            let parts: Vec<&str> = pattern.split('/').collect();
            names.len() >= parts.len()
                && parts.iter().zip(&names).all(|(part, name)| match name {
                    Component::Normal(name) => *part == "*" || **name == **part,
                    _ => false,
                })
        })
    }
}

/// Checks `dirs` with [`check_preopens`] and preopens them in `wasi`: the
/// one way either lane gives a guest host directories.
pub(crate) fn preopen_all(
    wasi: &mut WasiCtxBuilder,
    (home, shares): (&Path, &HomeShares),
    grant: &Grant,
    dirs: &[Preopen],
) -> Result<(), PreopenError> {
    check_preopens((home, shares), grant, dirs)?;
    for dir in dirs {
        let perms = if dir.read_only {
            FsPerms::ReadOnly
        } else {
            FsPerms::ReadWrite
        };
        wasi.preopened_dir(&dir.host, &dir.guest, perms)
            .map_err(|e| PreopenError::Open {
                host: dir.host.display().to_string(),
                message: format!("{e:#}"),
            })?;
    }
    Ok(())
}

/// Checks the preopens of a session under `grant` for an engine homed at
/// `home`: none at all without `vfs`, and none that contains the home or
/// lies inside it, but for a part of it in `shares`. Both paths are
/// resolved, so no link can make another part look like a shared one.
fn check_preopens(
    (home, shares): (&Path, &HomeShares),
    grant: &Grant,
    dirs: &[Preopen],
) -> Result<(), PreopenError> {
    let Some(first) = dirs.first() else {
        return Ok(());
    };
    if !grant.caps.contains(Cap::Vfs) {
        return Err(PreopenError::WithoutVfs(first.host.display().to_string()));
    }
    let home = resolved(home);
    for dir in dirs {
        let host = resolved(&dir.host);
        let inside = host
            .strip_prefix(&home)
            .is_ok_and(|rest| !shares.covers(rest));
        if home.starts_with(&host) || inside {
            return Err(PreopenError::ReachesHome {
                host: dir.host.display().to_string(),
                home: home.display().to_string(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn of_the_home_only_a_shared_part_may_be_preopened() {
        let home = tempfile::tempdir().unwrap();
        let home = home.path().canonicalize().unwrap();
        let shares = HomeShares::default();
        let home = (home.as_path(), &shares);
        let grant = Grant::profile("minimal");
        let dir = |p: &str| Preopen {
            host: home.0.join(p),
            guest: "/".into(),
            read_only: false,
        };
        // Nothing is shared until a service shares it.
        assert!(check_preopens(home, &grant, &[dir("runs/acme/r1/workdir")]).is_err());
        shares.add("runs/*/*/workdir").unwrap();
        for ok in ["runs/acme/r1/workdir", "runs/acme/r1/workdir/sub"] {
            assert!(check_preopens(home, &grant, &[dir(ok)]).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "runs",
            "runs/acme",
            "runs/acme/r1",
            "runs/acme/r1/record",
            "runs/acme/r1/workdirs",
            "db",
            "cache",
        ] {
            assert!(check_preopens(home, &grant, &[dir(bad)]).is_err(), "{bad}");
        }
        // A link inside a workdir pointing back at the home is resolved.
        let work = home.0.join("runs/acme/r1/workdir");
        std::fs::create_dir_all(&work).unwrap();
        std::os::unix::fs::symlink(home.0, work.join("up")).unwrap();
        assert!(check_preopens(home, &grant, &[dir("runs/acme/r1/workdir/up")]).is_err());
    }

    #[test]
    fn a_share_is_a_relative_pattern_of_names_and_nothing_wider() {
        let shares = HomeShares::default();
        for bad in [
            "",
            "/runs",
            "runs/../db",
            "./runs",
            "runs/.",
            "runs//workdir",
        ] {
            let e = shares.add(bad).unwrap_err();
            assert!(matches!(e, PreopenError::Share(_)), "{bad}: {e}");
        }
        assert!(shares.patterns().is_empty());
        shares.add("runs/*/*/workdir").unwrap();
        shares.add("runs/*/*/workdir").unwrap();
        assert_eq!(shares.patterns(), ["runs/*/*/workdir"]);
    }

    #[test]
    fn specs_parse_with_their_modes() {
        let p = Preopen::parse("/data::/d::ro").unwrap();
        assert_eq!(
            (p.host, p.guest.as_str(), p.read_only),
            ("/data".into(), "/d", true)
        );
        assert!(!Preopen::parse("/data::/d").unwrap().read_only);
        assert!(!Preopen::parse("/data::/d::rw").unwrap().read_only);
    }

    #[test]
    fn a_one_colon_mode_and_trailing_parts_are_refused() {
        let e = Preopen::parse("H::/ro:ro").unwrap_err();
        assert!(
            e.contains("contains `:`") && e.contains("HOST::GUEST::ro"),
            "{e}"
        );
        let e = Preopen::parse("H::/g::ro::extra").unwrap_err();
        assert!(e.contains("4 parts"), "{e}");
        assert!(Preopen::parse("H::/g::readonly").is_err());
        assert!(Preopen::parse("H").is_err());
        assert!(Preopen::parse("::/g").is_err());
    }

    #[test]
    fn a_preopen_around_or_inside_the_home_is_refused() {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        std::fs::create_dir_all(home.join("db")).unwrap();
        let grant = Grant::profile("compute");
        let shares = HomeShares::default();
        let dir = |p: &Path| Preopen {
            host: p.to_path_buf(),
            guest: "/w".into(),
            read_only: true,
        };
        for bad in [root.path().to_path_buf(), home.clone(), home.join("db")] {
            let e = check_preopens((&home, &shares), &grant, &[dir(&bad)]).unwrap_err();
            assert!(matches!(e, PreopenError::ReachesHome { .. }), "{e}");
        }
        let sibling = root.path().join("work");
        std::fs::create_dir_all(&sibling).unwrap();
        check_preopens((&home, &shares), &grant, &[dir(&sibling)]).unwrap();
        // A home that does not exist yet is judged by where it would be.
        let later = sibling.join(".workbooks");
        assert!(check_preopens((&later, &shares), &grant, &[dir(&sibling)]).is_err());
    }
}
