//! A toolkit folder as import, push and audit read it: its regular files,
//! listed and then opened without ever following a link.
//!
//! Threat: the folder belongs to someone else (a downloaded skill, a
//! colleague's checkout). Listing it with `symlink_metadata` and then
//! reading by path leaves a window: a link swapped in between the two
//! (`resources/notes.txt` → `~/.ssh/id_ed25519`) is followed by the read
//! and its target copied into the toolkits root. So a file is read only
//! through [`open_beneath`]: every directory on its way is opened relative
//! to the one before and the file last, each with `O_NOFOLLOW`, and only a
//! regular file is accepted (a FIFO swapped in cannot block the read).

use super::{Toolkit, ToolkitError};
use crate::discover::is_slug;
use crate::limits::{IMPORT_MAX_BYTES, IMPORT_MAX_FILES};
use rustix::fs::{CWD, FileType, Mode, OFlags, fstat, openat};
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// A toolkit's I/O failure, as the error its verbs return.
pub(crate) fn io(id: &str, e: impl std::fmt::Display) -> ToolkitError {
    ToolkitError::Io {
        id: id.to_string(),
        why: e.to_string(),
    }
}

/// The regular files under `dir` (relative paths; `.git` left out),
/// refusing links and past the caps ([`IMPORT_MAX_FILES`],
/// [`IMPORT_MAX_BYTES`]), with their total size.
pub(super) fn files_under(id: &str, dir: &Path) -> Result<(Vec<PathBuf>, u64), ToolkitError> {
    let mut out = Vec::new();
    let mut total = 0u64;
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(dir.join(&rel))
            .map_err(|e| io(id, e))?
            .filter_map(Result::ok)
            .collect();
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let path = rel.join(entry.file_name());
            let meta = std::fs::symlink_metadata(dir.join(&path)).map_err(|e| io(id, e))?;
            if meta.file_type().is_symlink() {
                return Err(io(
                    id,
                    format!("{} is a link; only files are copied", path.display()),
                ));
            } else if meta.is_dir() {
                if entry.file_name() != ".git" {
                    stack.push(path);
                }
            } else {
                total += meta.len();
                out.push(path);
                if out.len() > IMPORT_MAX_FILES || total > IMPORT_MAX_BYTES {
                    return Err(io(
                        id,
                        format!("past {IMPORT_MAX_FILES} files or {IMPORT_MAX_BYTES} bytes"),
                    ));
                }
            }
        }
    }
    Ok((out, total))
}

/// The directory holding `rel` under `dir`, opened without following a
/// link at any step, and the last part of `rel`.
fn parent_beneath<'a>(
    id: &str,
    dir: &Path,
    rel: &'a Path,
) -> Result<(rustix::fd::OwnedFd, &'a std::ffi::OsStr), ToolkitError> {
    let parts: Vec<&std::ffi::OsStr> = rel
        .components()
        .map(|c| match c {
            Component::Normal(part) => Ok(part),
            _ => Err(refused(id, rel, "not a plain relative path")),
        })
        .collect::<Result<_, _>>()?;
    let Some((last, dirs)) = parts.split_last() else {
        return Err(refused(id, rel, "empty path"));
    };
    let mut at = openat(
        CWD,
        dir,
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::DIRECTORY,
        Mode::empty(),
    )
    .map_err(|e| io(id, format!("{}: {e}", dir.display())))?;
    for part in dirs {
        at = openat(&at, *part, NO_FOLLOW | OFlags::DIRECTORY, Mode::empty())
            .map_err(|e| opened(id, rel, e))?;
    }
    Ok((at, last))
}

const NO_FOLLOW: OFlags = OFlags::RDONLY
    .union(OFlags::CLOEXEC)
    .union(OFlags::NOFOLLOW);

fn refused(id: &str, rel: &Path, why: &str) -> ToolkitError {
    io(id, format!("{}: {why}", rel.display()))
}

fn opened(id: &str, rel: &Path, e: rustix::io::Errno) -> ToolkitError {
    if e == rustix::io::Errno::LOOP || e == rustix::io::Errno::NOTDIR {
        refused(
            id,
            rel,
            "a link stands on its way; links are never followed",
        )
    } else {
        refused(id, rel, &e.to_string())
    }
}

/// The regular file `rel` under `dir`, opened without following a link
/// at any step (see the module docs).
pub(super) fn open_beneath(
    id: &str,
    dir: &Path,
    rel: &Path,
) -> Result<std::fs::File, ToolkitError> {
    let (at, last) = parent_beneath(id, dir, rel)?;
    let fd = openat(&at, last, NO_FOLLOW | OFlags::NONBLOCK, Mode::empty())
        .map_err(|e| opened(id, rel, e))?;
    let stat = fstat(&fd).map_err(|e| refused(id, rel, &e.to_string()))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(refused(id, rel, "not a regular file"));
    }
    Ok(std::fs::File::from(fd))
}

/// Replaces `rel` under `dir` with `bytes`: a new file made in the
/// directory opened without following a link (see [`parent_beneath`]) and
/// renamed over whatever stands at `rel`, a link included, which is
/// replaced and never followed.
pub(super) fn replace_beneath(
    id: &str,
    dir: &Path,
    rel: &Path,
    bytes: &[u8],
) -> Result<(), ToolkitError> {
    let (at, last) = parent_beneath(id, dir, rel)?;
    let mut nonce = [0u8; 8];
    getrandom::fill(&mut nonce).map_err(|e| io(id, e.to_string()))?;
    let temp = format!(".wb-{}.tmp", hex::encode(nonce));
    let fd = openat(
        &at,
        temp.as_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o644),
    )
    .map_err(|e| opened(id, rel, e))?;
    let mut file = std::fs::File::from(fd);
    let written = std::io::Write::write_all(&mut file, bytes).and_then(|()| file.sync_all());
    let moved = written.map_err(|e| io(id, e)).and_then(|()| {
        rustix::fs::renameat(&at, temp.as_str(), &at, last).map_err(|e| opened(id, rel, e))
    });
    if moved.is_err() {
        let _ = rustix::fs::unlinkat(&at, temp.as_str(), rustix::fs::AtFlags::empty());
    }
    moved
}

/// The bytes of `rel` under `dir` (see [`open_beneath`]), at most `cap`.
pub(super) fn read_beneath(
    id: &str,
    dir: &Path,
    rel: &Path,
    cap: u64,
) -> Result<Vec<u8>, ToolkitError> {
    let mut bytes = Vec::new();
    open_beneath(id, dir, rel)?
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io(id, e))?;
    if bytes.len() as u64 > cap {
        return Err(io(id, format!("{} grew past {cap} bytes", rel.display())));
    }
    Ok(bytes)
}

/// Copies `rel` under `dir` to the new file `to` (see [`open_beneath`]),
/// at most `cap` bytes; the bytes copied.
pub(super) fn copy_beneath(
    id: &str,
    dir: &Path,
    rel: &Path,
    to: &Path,
    cap: u64,
) -> Result<u64, ToolkitError> {
    let bytes = read_beneath(id, dir, rel, cap)?;
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io(id, e))?;
    }
    let mut out = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(to)
        .map_err(|e| io(id, e))?;
    std::io::Write::write_all(&mut out, &bytes).map_err(|e| io(id, e))?;
    Ok(bytes.len() as u64)
}

/// `rel`, a `noun` (file or folder) strictly inside the toolkit's folder
/// (no `..`, no link out), canonical; or why not.
pub(crate) fn inside(tk: &Toolkit, rel: &str, noun: &str) -> Result<PathBuf, String> {
    let bad = |why: &str| why.to_string();
    let parts: Vec<&str> = rel
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.is_empty() || !parts.iter().all(|p| is_slug(p)) {
        return Err(bad(&format!(
            "must be a {noun} inside the toolkit (A-Z a-z 0-9 . _ - parts)"
        )));
    }
    let root = tk.dir.canonicalize().map_err(|e| bad(&e.to_string()))?;
    let file = root
        .join(parts.join("/"))
        .canonicalize()
        .map_err(|e| bad(&e.to_string()))?;
    if !file.starts_with(&root) {
        return Err(bad("leaves the toolkit's folder"));
    }
    Ok(file)
}

/// The text of a toolkit's `#+COMPOSE` file, strictly inside its folder
/// and within [`COMPOSE_MAX_SOURCE_BYTES`](crate::limits::COMPOSE_MAX_SOURCE_BYTES).
pub(crate) fn compose_source(tk: &Toolkit, file: &str) -> Result<String, String> {
    let path = inside(tk, file, "file")?;
    read_capped(&path, crate::limits::COMPOSE_MAX_SOURCE_BYTES)
}

/// A text file of at most `cap` bytes.
fn read_capped(path: &Path, cap: usize) -> Result<String, String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let mut text = String::new();
    file.take(cap as u64 + 1)
        .read_to_string(&mut text)
        .map_err(|e| e.to_string())?;
    if text.len() > cap {
        return Err(format!("past the {cap}-byte cap"));
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_swapped_in_after_listing_is_refused_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret"), "key material").unwrap();
        std::fs::create_dir(dir.path().join("resources")).unwrap();
        std::fs::write(dir.path().join("resources/notes.txt"), "notes").unwrap();
        let (files, _) = files_under("t", dir.path()).unwrap();
        assert_eq!(files, [PathBuf::from("resources/notes.txt")]);
        // The swap: the listed file becomes a link to the secret.
        std::fs::remove_file(dir.path().join("resources/notes.txt")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret"),
            dir.path().join("resources/notes.txt"),
        )
        .unwrap();
        let to = tempfile::tempdir().unwrap();
        let err = copy_beneath("t", dir.path(), &files[0], &to.path().join("n"), 1 << 20)
            .unwrap_err()
            .to_string();
        assert!(err.contains("links are never followed"), "{err}");
        assert!(!to.path().join("n").exists());
        // And a directory on the way swapped for a link.
        std::fs::remove_file(dir.path().join("resources/notes.txt")).unwrap();
        std::fs::remove_dir(dir.path().join("resources")).unwrap();
        std::fs::create_dir(outside.path().join("res")).unwrap();
        std::fs::write(outside.path().join("res/notes.txt"), "theirs").unwrap();
        std::os::unix::fs::symlink(outside.path().join("res"), dir.path().join("resources"))
            .unwrap();
        let err = read_beneath("t", dir.path(), &files[0], 1 << 20)
            .unwrap_err()
            .to_string();
        assert!(err.contains("links are never followed"), "{err}");
    }

    #[test]
    fn a_fixed_file_replaces_a_link_swapped_in_and_never_writes_through_one() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("skills")).unwrap();
        let rel = Path::new("skills/a.org");
        // The file itself swapped for a link: the link is replaced.
        std::fs::write(outside.path().join("victim.org"), "theirs").unwrap();
        std::os::unix::fs::symlink(outside.path().join("victim.org"), dir.path().join(rel))
            .unwrap();
        replace_beneath("t", dir.path(), rel, b"fixed").unwrap();
        assert_eq!(std::fs::read(dir.path().join(rel)).unwrap(), b"fixed");
        assert!(
            !std::fs::symlink_metadata(dir.path().join(rel))
                .unwrap()
                .is_symlink()
        );
        assert_eq!(
            std::fs::read(outside.path().join("victim.org")).unwrap(),
            b"theirs"
        );
        // A folder on its way swapped for a link: refused, nothing written.
        std::fs::remove_dir_all(dir.path().join("skills")).unwrap();
        std::fs::create_dir(outside.path().join("skills")).unwrap();
        std::os::unix::fs::symlink(outside.path().join("skills"), dir.path().join("skills"))
            .unwrap();
        let err = replace_beneath("t", dir.path(), rel, b"fixed")
            .unwrap_err()
            .to_string();
        assert!(err.contains("links are never followed"), "{err}");
        assert_eq!(
            std::fs::read_dir(outside.path().join("skills"))
                .unwrap()
                .count(),
            0,
            "written through the link"
        );
    }

    #[test]
    fn a_fifo_swapped_in_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe");
        rustix::fs::mknodat(CWD, &fifo, FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
        let err = read_beneath("t", dir.path(), Path::new("pipe"), 16)
            .unwrap_err()
            .to_string();
        assert!(err.contains("not a regular file"), "{err}");
    }

    #[test]
    fn a_file_that_grew_past_its_cap_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("big"), vec![b'x'; 64]).unwrap();
        assert!(read_beneath("t", dir.path(), Path::new("big"), 63).is_err());
        assert_eq!(
            read_beneath("t", dir.path(), Path::new("big"), 64)
                .unwrap()
                .len(),
            64
        );
    }
}
