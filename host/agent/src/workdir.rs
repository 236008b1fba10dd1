//! Paths the model names, kept inside the run's workdir.
//!
//! Threat: a model (or a prompt injected into what it read) asks to read
//! `/etc/passwd`, `../../other-tenant/…`, or a symlink planted to point
//! out. A path is taken relative to the workdir (a leading `/` means the
//! workdir's root), resolved lexically with no `..` past the root, and
//! every component that exists on disk must be a real directory or file,
//! never a symlink.

use std::path::{Component, Path, PathBuf};

/// The folder of the home under which agent runs are kept, by tenant and
/// id.
pub const RUNS_DIR: &str = "runs";

/// A run's working dir inside its folder: the one part of the home its
/// tools (and only its tools) may be shown.
pub const WORKDIR: &str = "workdir";

/// The part of the home the service shares with its runs' tools (see
/// `Engine::share_home`): each run's working dir,
/// `<home>/runs/<tenant>/<id>/workdir`, and nothing else of the home.
pub const RUN_WORKDIRS: &str = "runs/*/*/workdir";

/// The options of a run as `_run.json` keeps them.
pub const RUN_FILE: &str = "_run.json";
/// The model's answers.
pub const MODEL_FILE: &str = "_model.jsonl";
/// The outputs of the tools that reach outside.
pub const WORLD_FILE: &str = "_world.jsonl";

/// The files the host keeps in a run's workdir, which `search` leaves out
/// (the model's notes, `_issues.jsonl` among them, stay in).
pub(crate) const RUN_FILES: [&str; 8] = [
    crate::ledger::STEPS,
    RUN_FILE,
    MODEL_FILE,
    WORLD_FILE,
    crate::trace::EVENTS_ORG,
    crate::ledger::CHECKPOINT,
    crate::ledger::LEAVES,
    crate::ledger::VKEY,
];

/// What the model reads when a path would leave the workdir.
pub(crate) const ESCAPES: &str = "write blocked: path escapes your working dir";

/// `path` inside `root`, or `None` when it would leave it.
pub(crate) fn confine(root: &Path, path: &str) -> Option<PathBuf> {
    if path.is_empty() || path.contains('\0') {
        return None;
    }
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for c in Path::new(path).components() {
        match c {
            Component::RootDir | Component::CurDir => {}
            Component::Normal(p) => parts.push(p),
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::Prefix(_) => return None,
        }
    }
    if parts.is_empty() {
        return None;
    }
    let mut at = root.to_path_buf();
    for p in parts {
        at.push(p);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => return None,
            _ => {}
        }
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_inside_stay_and_every_escape_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("sub")).unwrap();
        assert_eq!(confine(root, "a.txt"), Some(root.join("a.txt")));
        assert_eq!(confine(root, "/sub/b.txt"), Some(root.join("sub/b.txt")));
        assert_eq!(confine(root, "sub/../c"), Some(root.join("c")));
        for bad in ["", "..", "../x", "sub/../../x", "/", ".", "a\0b"] {
            assert_eq!(confine(root, bad), None, "{bad:?}");
        }
        std::os::unix::fs::symlink("/etc", root.join("out")).unwrap();
        assert_eq!(confine(root, "out/passwd"), None);
        assert_eq!(confine(root, "out"), None);
    }
}
