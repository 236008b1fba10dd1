//! The files of a workdir that may leave it: regular files only, found
//! without following a link, `.git` folders and the host's own run files
//! left out, within the export caps.

use crate::limits::{AGENT_EXPORT_MAX_BYTES, AGENT_EXPORT_MAX_FILES};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// One file to export.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Exported {
    /// Its path under the walked root, `/`-separated.
    pub(crate) rel: String,
    /// Where it is on disk.
    pub(crate) path: PathBuf,
    /// Whether its owner may execute it.
    pub(crate) executable: bool,
    /// Its length in bytes, when walked.
    pub(crate) size: u64,
}

/// The files under `root`, sorted by path. `skip` names top-level entries
/// to leave out. Links (to files or folders) are left out, never followed;
/// past the caps the whole walk fails, naming the cap.
pub(crate) fn files_under(root: &Path, skip: &[&str]) -> Result<Vec<Exported>, String> {
    let mut found = Vec::new();
    let mut bytes = 0u64;
    let mut pending = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, prefix)) = pending.pop() {
        let entries = std::fs::read_dir(&dir).map_err(|e| format!("{prefix}: {e}"))?;
        for entry in entries {
            let entry = entry.map_err(|e| format!("{prefix}: {e}"))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if name == ".git" || (prefix.is_empty() && skip.contains(&name)) {
                continue;
            }
            // `file_type` does not follow a link.
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let rel = format!("{prefix}{name}");
            if kind.is_dir() {
                pending.push((entry.path(), format!("{rel}/")));
            } else if kind.is_file() {
                let meta = entry.metadata().map_err(|e| format!("{rel}: {e}"))?;
                bytes += meta.len();
                if found.len() == AGENT_EXPORT_MAX_FILES {
                    return Err(format!("more than {AGENT_EXPORT_MAX_FILES} files"));
                }
                if bytes > AGENT_EXPORT_MAX_BYTES {
                    return Err(format!("more than {AGENT_EXPORT_MAX_BYTES} bytes"));
                }
                found.push(Exported {
                    rel,
                    path: entry.path(),
                    executable: meta.permissions().mode() & 0o100 != 0,
                    size: meta.len(),
                });
            }
        }
    }
    found.sort_by(|a, b| a.rel.cmp(&b.rel));
    Ok(found)
}

/// The bytes of a walked file, opened without following a link (one
/// swapped in since the walk is refused).
pub(crate) fn read_walked(file: &Exported) -> Result<Vec<u8>, String> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut bytes = Vec::new();
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(&file.path)
        .and_then(|f| f.take(AGENT_EXPORT_MAX_BYTES).read_to_end(&mut bytes))
        .map_err(|e| format!("{}: {e}", file.rel))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_git_folders_and_skipped_names_never_leave() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join("a/b/c.txt"), "c").unwrap();
        std::fs::write(root.join("top.md"), "t").unwrap();
        std::fs::write(root.join("_steps.jsonl"), "{}").unwrap();
        std::fs::write(root.join(".git/config"), "[core]").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("passwd")).unwrap();
        std::os::unix::fs::symlink("/etc", root.join("a/etc")).unwrap();
        let got = files_under(root, &["_steps.jsonl"]).unwrap();
        let rels: Vec<&str> = got.iter().map(|f| f.rel.as_str()).collect();
        assert_eq!(rels, ["a/b/c.txt", "top.md"]);
    }

    #[test]
    fn a_walk_past_the_file_or_byte_cap_fails_naming_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..=AGENT_EXPORT_MAX_FILES {
            std::fs::write(dir.path().join(format!("f{i}")), "").unwrap();
        }
        assert_eq!(
            files_under(dir.path(), &[]),
            Err(format!("more than {AGENT_EXPORT_MAX_FILES} files"))
        );
        let dir = tempfile::tempdir().unwrap();
        // Sparse: the length counts, no disk is spent.
        let big = std::fs::File::create(dir.path().join("big")).unwrap();
        big.set_len(AGENT_EXPORT_MAX_BYTES + 1).unwrap();
        assert_eq!(
            files_under(dir.path(), &[]),
            Err(format!("more than {AGENT_EXPORT_MAX_BYTES} bytes"))
        );
    }
}
