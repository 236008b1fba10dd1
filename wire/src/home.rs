//! Where an engine keeps what it keeps, by default the user's own, as
//! cargo's, docker's and wasmtime's caches are: one home per user, the
//! same from every folder.
//!
//! - The home (registry, kv, queues, volumes, audit, the tenants' keys):
//!   `WB_HOME`, else `$XDG_DATA_HOME/workbooks`, else
//!   `~/.local/share/workbooks`.
//! - Its compile cache (rebuildable, tagged with `CACHEDIR.TAG` so backup
//!   tools skip it): `WB_CACHE_DIR`, else, for the user's home,
//!   `$XDG_CACHE_HOME/workbooks` (else `~/.cache/workbooks`), and for a
//!   home named with `--home` or `WB_HOME`, `<home>/cache`.
//!
//! Threat: a home in the folder the user stands in (`./.workbooks`, the
//! default before homes were per user) changed identity with the folder,
//! and put the tenants' private keys inside project trees, where a
//! `git add .` takes them. One that exists is still used, so nothing is
//! lost, and the CLI says so on every command with how to move it.

use std::path::{Path, PathBuf};

/// The variable naming the home outright.
pub const HOME_ENV: &str = "WB_HOME";
/// The variable naming the compile cache outright (an engine sets it for
/// the child `wbx` it starts, whose environment is otherwise empty).
pub const CACHE_DIR_ENV: &str = "WB_CACHE_DIR";
/// The home a folder held before homes were per user.
pub const FOLDER_HOME: &str = ".workbooks";

/// Reads a variable: the process's own, or a test's.
type Env<'a> = &'a dyn Fn(&str) -> Option<PathBuf>;

/// A non-empty variable of this process, as a path.
fn var(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// `$<xdg>/workbooks` when that variable holds an absolute path (the XDG
/// rule: a relative one is ignored), else `$HOME/<fallback>/workbooks`.
pub fn user_dir(xdg: &str, fallback: &str) -> Option<PathBuf> {
    user_dir_in(&var, xdg, fallback)
}

fn user_dir_in(env: Env<'_>, xdg: &str, fallback: &str) -> Option<PathBuf> {
    env(xdg)
        .filter(|d| d.is_absolute())
        .or_else(|| env("HOME").map(|h| h.join(fallback)))
        .map(|d| d.join("workbooks"))
}

/// The user's home: `$XDG_DATA_HOME/workbooks`, else
/// `~/.local/share/workbooks`.
pub fn user_home() -> Option<PathBuf> {
    user_dir("XDG_DATA_HOME", ".local/share")
}

/// The home used when none is named: `WB_HOME`; else `./.workbooks` when
/// this folder has one (see [`folder_home_in_use`]); else the user's
/// ([`user_home`]); else, with neither `HOME` nor `XDG_DATA_HOME` set,
/// `./.workbooks`.
pub fn default_home() -> PathBuf {
    default_home_in(&var, Path::new(FOLDER_HOME).is_dir())
}

fn default_home_in(env: Env<'_>, folder_home: bool) -> PathBuf {
    if let Some(home) = env(HOME_ENV) {
        return home;
    }
    if folder_home {
        return PathBuf::from(FOLDER_HOME);
    }
    user_dir_in(env, "XDG_DATA_HOME", ".local/share").unwrap_or_else(|| PathBuf::from(FOLDER_HOME))
}

/// The line to print when [`default_home`] chose this folder's
/// `./.workbooks` because it exists: it is used, and how to move it.
pub fn folder_home_in_use() -> Option<String> {
    if var(HOME_ENV).is_some() || !Path::new(FOLDER_HOME).is_dir() {
        return None;
    }
    let user = user_home()?;
    Some(format!(
        "using ./{FOLDER_HOME} in this folder as the home (homes are per user now: {}); \
         move it with `mv {FOLDER_HOME} {}` when that does not exist yet, \
         or keep it here with --home {FOLDER_HOME}",
        user.display(),
        user.display()
    ))
}

/// The compile cache of `home`: `WB_CACHE_DIR`; else the user's cache
/// (`$XDG_CACHE_HOME/workbooks`, else `~/.cache/workbooks`) when `home` is
/// the user's home; else `<home>/cache`.
pub fn cache_dir(home: &Path) -> PathBuf {
    cache_dir_in(&var, home)
}

fn cache_dir_in(env: Env<'_>, home: &Path) -> PathBuf {
    if let Some(dir) = env(CACHE_DIR_ENV) {
        return dir;
    }
    let user = user_dir_in(env, "XDG_DATA_HOME", ".local/share");
    if user.is_some_and(|user| user == home)
        && let Some(cache) = user_dir_in(env, "XDG_CACHE_HOME", ".cache")
    {
        return cache;
    }
    home.join("cache")
}

/// The file that marks a directory as a cache (bford.info/cachedir):
/// backup and sync tools that honour it skip the directory.
pub const CACHEDIR_TAG: &str = "CACHEDIR.TAG";

/// What [`CACHEDIR_TAG`] holds: the signature, then a comment.
pub const CACHEDIR_TAG_TEXT: &str = "Signature: 8a477f597d28d172789f06886806bc55\n\
     # This file is a cache directory tag created by the Workbooks engine.\n\
     # It holds compiled and composed components, made again when missing.\n\
     # For information about cache directory tags see https://bford.info/cachedir/\n";

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<PathBuf> {
        let pairs: Vec<(String, PathBuf)> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), PathBuf::from(v)))
            .collect();
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        }
    }

    #[test]
    fn the_default_home_is_the_users_own_wherever_the_user_stands() {
        let e = env(&[("HOME", "/home/ada")]);
        assert_eq!(
            default_home_in(&e, false),
            PathBuf::from("/home/ada/.local/share/workbooks")
        );
        let e = env(&[("HOME", "/home/ada"), ("XDG_DATA_HOME", "/data")]);
        assert_eq!(default_home_in(&e, false), PathBuf::from("/data/workbooks"));
        // A relative XDG directory is ignored, as the spec says.
        let e = env(&[("HOME", "/home/ada"), ("XDG_DATA_HOME", "rel")]);
        assert_eq!(
            default_home_in(&e, false),
            PathBuf::from("/home/ada/.local/share/workbooks")
        );
    }

    #[test]
    fn wb_home_wins_then_an_existing_folder_home_then_the_users() {
        let e = env(&[("HOME", "/home/ada"), ("WB_HOME", "/h")]);
        assert_eq!(default_home_in(&e, true), PathBuf::from("/h"));
        let e = env(&[("HOME", "/home/ada")]);
        assert_eq!(default_home_in(&e, true), PathBuf::from(".workbooks"));
        assert_eq!(
            default_home_in(&env(&[]), false),
            PathBuf::from(".workbooks")
        );
    }

    #[test]
    fn the_users_home_caches_in_the_users_cache_and_a_named_home_in_itself() {
        let e = env(&[("HOME", "/home/ada")]);
        let user = PathBuf::from("/home/ada/.local/share/workbooks");
        assert_eq!(
            cache_dir_in(&e, &user),
            PathBuf::from("/home/ada/.cache/workbooks")
        );
        let e = env(&[("HOME", "/home/ada"), ("XDG_CACHE_HOME", "/c")]);
        assert_eq!(cache_dir_in(&e, &user), PathBuf::from("/c/workbooks"));
        assert_eq!(cache_dir_in(&e, Path::new("/h")), PathBuf::from("/h/cache"));
        let e = env(&[("HOME", "/home/ada"), ("WB_CACHE_DIR", "/k")]);
        assert_eq!(cache_dir_in(&e, Path::new("/h")), PathBuf::from("/k"));
    }
}
