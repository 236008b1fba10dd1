//! Upkeep of the compile cache: what `wbx cache gc` and `wbx cache clean`
//! free, listed before anything is removed (`dry_run` removes nothing).
//!
//! - gc frees what this build can never use: compiled entries another
//!   engine made (another wasmtime or configuration; their file names
//!   carry its key), a seal without its entry or an entry without its
//!   seal, and the temporary files an interrupted write left.
//! - clean frees the whole cache (compiled code, compositions, replaced
//!   brokers); every entry is made again on first use.
//!
//! Invariant: only files inside the cache directory are removed, never
//! through a symlink (a link is removed as a link), and its
//! `CACHEDIR.TAG` stays.

use super::Engine;
use crate::artifact::engine_key;
use crate::flavor::Flavor;
use std::path::{Path, PathBuf};

/// What an upkeep freed (or would free, on a dry run).
#[derive(Debug, Default, Clone, serde::Serialize)]
pub struct Freed {
    /// Each file, with its size in bytes.
    pub files: Vec<(PathBuf, u64)>,
}

impl Freed {
    /// The bytes of every file.
    pub fn bytes(&self) -> u64 {
        self.files.iter().map(|(_, n)| n).sum()
    }
}

/// Every file under `dir` (not following links), with its size.
fn files_under(dir: &Path, out: &mut Vec<(PathBuf, u64)>) -> std::io::Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        let kind = entry.file_type()?;
        let path = entry.path();
        if kind.is_dir() {
            files_under(&path, out)?;
        } else {
            out.push((path, entry.metadata().map_or(0, |m| m.len())));
        }
    }
    Ok(())
}

/// Whether a file name is a temporary file an interrupted write left.
fn is_temp(name: &str) -> bool {
    name.starts_with('.') && name.ends_with(".tmp")
}

/// Whether the compiled-cache file `name` (`<sha>-<key>.cwasm` or
/// `.seal`) was made by this build's engine, and its pair is present.
fn compiled_keeps(dir: &Path, name: &str, keys: &[String]) -> bool {
    let Some((stem, ext)) = name.rsplit_once('.') else {
        return false;
    };
    let ours = stem
        .rsplit_once('-')
        .is_some_and(|(_, key)| keys.iter().any(|k| k == key));
    let pair = match ext {
        "cwasm" => "seal",
        "seal" => "cwasm",
        _ => return false,
    };
    ours && dir.join(format!("{stem}.{pair}")).is_file()
}

impl Engine {
    /// Frees what this build can never use from the compile cache (see
    /// the module's header); with `dry_run`, only lists it.
    pub fn cache_gc(&self, dry_run: bool) -> std::io::Result<Freed> {
        let root = self.cache_root();
        let compiled = root.join("compiled");
        let keys = [engine_key(Flavor::Sync), engine_key(Flavor::Concurrent)];
        let mut all = Vec::new();
        files_under(&root, &mut all)?;
        let files = all
            .into_iter()
            .filter(|(path, _)| {
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy())
                    .unwrap_or_default();
                is_temp(&name)
                    || (path.parent() == Some(compiled.as_path())
                        && !compiled_keeps(&compiled, &name, &keys))
            })
            .collect();
        remove(Freed { files }, dry_run)
    }

    /// Frees the whole compile cache but its `CACHEDIR.TAG`; with
    /// `dry_run`, only lists it.
    pub fn cache_clean(&self, dry_run: bool) -> std::io::Result<Freed> {
        let root = self.cache_root();
        let tag = root.join(workbooks_wire::home::CACHEDIR_TAG);
        let mut files = Vec::new();
        files_under(&root, &mut files)?;
        files.retain(|(path, _)| *path != tag);
        remove(Freed { files }, dry_run)
    }
}

/// Removes every file of `freed` unless `dry_run`; a file already gone
/// is not an error.
fn remove(freed: Freed, dry_run: bool) -> std::io::Result<Freed> {
    if !dry_run {
        for (path, _) in &freed.files {
            match std::fs::remove_file(path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    return Err(std::io::Error::new(
                        e.kind(),
                        format!("{}: {e}", path.display()),
                    ));
                }
            }
        }
    }
    Ok(freed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compiled_entry_is_kept_only_with_this_engines_key_and_its_seal() {
        let dir = tempfile::tempdir().unwrap();
        let keys = [engine_key(Flavor::Sync), engine_key(Flavor::Concurrent)];
        let ours = format!("ab-{}", keys[0]);
        for ext in ["cwasm", "seal"] {
            std::fs::write(dir.path().join(format!("{ours}.{ext}")), b"x").unwrap();
        }
        std::fs::write(dir.path().join("cd-0123456789abcdef.cwasm"), b"x").unwrap();
        std::fs::write(dir.path().join("cd-0123456789abcdef.seal"), b"x").unwrap();
        let lone = format!("ef-{}.cwasm", keys[1]);
        std::fs::write(dir.path().join(&lone), b"x").unwrap();
        assert!(compiled_keeps(dir.path(), &format!("{ours}.cwasm"), &keys));
        assert!(compiled_keeps(dir.path(), &format!("{ours}.seal"), &keys));
        assert!(!compiled_keeps(
            dir.path(),
            "cd-0123456789abcdef.cwasm",
            &keys
        ));
        assert!(
            !compiled_keeps(dir.path(), &lone, &keys),
            "an entry without its seal"
        );
        assert!(is_temp(".x.123.ab.tmp") && !is_temp("x.tmp") && !is_temp(".x"));
    }
}
