//! Writing the engine's own files, and telling whether a file changed.
//!
//! Every file the engine replaces is written through a temporary file
//! created exclusively (`O_EXCL`: never an existing file, never through a
//! symlink someone planted) with mode 0600, then renamed into place, so a
//! reader never sees half a file; files only appended to are opened
//! without following a link at their path. A [`FileIdentity`] is what lets a check
//! done once be trusted later: any write to a file changes its ctime, which
//! user space cannot set back, and a replacement changes its inode.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Creates a new file in `dir` named `.<stem>.<pid>.<random>.tmp`
/// exclusively (`O_EXCL`: never an existing file, never through a symlink
/// someone planted) with mode 0600 from the start, writes `bytes`, syncs it
/// and returns its path, for the caller to rename or link into place.
pub(crate) fn write_private_temp(dir: &Path, stem: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    write_temp(dir, stem, bytes, 0o600)
}

/// [`write_private_temp`] with `mode` (the umask still applies).
fn write_temp(dir: &Path, stem: &str, bytes: &[u8], mode: u32) -> std::io::Result<PathBuf> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut nonce = [0u8; 8];
    getrandom::fill(&mut nonce).map_err(|e| std::io::Error::other(e.to_string()))?;
    let tmp = dir.join(format!(
        ".{stem}.{}.{}.tmp",
        std::process::id(),
        hex::encode(nonce)
    ));
    let written = std::fs::OpenOptions::new()
        .create_new(true)
        .write(true)
        .mode(mode)
        .open(&tmp)
        .and_then(|mut f| {
            f.write_all(bytes)?;
            f.sync_all()
        });
    match written {
        Ok(()) => Ok(tmp),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// Writes `bytes` to `path` through a temporary file and a rename, so a
/// reader never sees a partial file. The file is private (0600) and the
/// temporary one is created exclusively, never through a planted symlink.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace(path, bytes, 0o600)
}

/// Writes a file the user asked for (`-o FILE`, a signed page, an
/// example) the same way: a temporary file then a rename, so a symlink
/// standing at `path` is replaced, never written through, and a failed
/// write leaves what was there. The file is readable as the umask allows.
pub fn write_output(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    replace(path, bytes, 0o666)
}

fn replace(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let stem = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = write_temp(dir, &stem, bytes, mode)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

/// Reads the file at `path` whole, up to `max` bytes: for the files an
/// operator names (trust roots, credentials), which may be anything,
/// `/dev/zero` included. A longer file is an `InvalidData` error saying
/// the cap, with nothing more read. It is opened without blocking, so a
/// FIFO no one writes to reads as empty instead of hanging the caller.
pub fn read_capped(path: &Path, max: u64) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut bytes = Vec::new();
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)?
        .take(max + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("longer than the {max} bytes a configuration file may hold"),
        ));
    }
    Ok(bytes)
}

/// Appends `line` and a newline to `path` (created 0600 if absent),
/// never through a symlink standing at `path`: for the files the host keeps
/// in a directory others write to as well (an agent run's workdir).
pub fn append_line(path: &Path, line: &str) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    f.write_all(format!("{line}\n").as_bytes())
}

/// Takes an exclusive lock on the lock file at `path` (created 0600 if
/// absent), held until the returned file is dropped: how processes sharing
/// a home serialise a read-modify-write of one of its files.
pub(crate) fn lock_exclusive(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(path)?;
    file.lock()?;
    Ok(file)
}

/// A file's device, inode, size, mtime and ctime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileIdentity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i128,
    ctime_ns: i128,
}

impl FileIdentity {
    /// The identity in `meta`.
    pub(crate) fn of(meta: &std::fs::Metadata) -> Self {
        let ns = |secs: i64, nsec: i64| i128::from(secs) * 1_000_000_000 + i128::from(nsec);
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
            size: meta.size(),
            mtime_ns: ns(meta.mtime(), meta.mtime_nsec()),
            ctime_ns: ns(meta.ctime(), meta.ctime_nsec()),
        }
    }

    /// The identity as bytes, for sealing.
    pub(crate) fn to_bytes(self) -> [u8; FileIdentity::BYTES] {
        let mut out = [0u8; Self::BYTES];
        out[..8].copy_from_slice(&self.dev.to_le_bytes());
        out[8..16].copy_from_slice(&self.ino.to_le_bytes());
        out[16..24].copy_from_slice(&self.size.to_le_bytes());
        out[24..40].copy_from_slice(&self.mtime_ns.to_le_bytes());
        out[40..].copy_from_slice(&self.ctime_ns.to_le_bytes());
        out
    }

    /// Bytes of [`FileIdentity::to_bytes`].
    pub(crate) const BYTES: usize = 56;
}

#[cfg(test)]
mod tests {
    use super::{Path, read_capped};

    #[test]
    fn a_fifo_no_one_writes_to_reads_as_empty_rather_than_hanging() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("roots.pem");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        assert!(made.unwrap().success(), "mkfifo");
        assert_eq!(read_capped(&fifo, 1 << 20).unwrap(), b"");
    }

    #[test]
    fn a_file_past_the_cap_is_refused_saying_the_cap() {
        let err = read_capped(Path::new("/dev/zero"), 1 << 10).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::InvalidData);
        let said = "longer than the 1024 bytes a configuration file may hold";
        assert_eq!(err.to_string(), said);
    }
}
