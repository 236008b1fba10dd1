//! The archives a catalog row's bytes travel in: zip (Python wheels),
//! tar, gzip or xz tar (npm tarballs, source releases, a sysroot) and
//! Debian packages (an `ar` holding `data.tar.xz`, `.gz` or `.zst`). One
//! entry is taken out by the row's path, or a source tree is unpacked
//! ([`Archive::unpack_tree`]).
//!
//! The threat: an archive is a stranger's file. The path taken out is the
//! row's, and it must stay inside the archive (relative, no `..`, no root
//! or drive); an entry that is a link, or not a regular file, is refused
//! rather than followed; no entry is held past the caller's cap; and no
//! more than [`CATALOG_MAX_UNPACKED`] bytes are decompressed looking for
//! it, so a decompression bomb costs bounded time and memory.

use crate::limits::{CATALOG_MAX_TREE_FILES, CATALOG_MAX_UNPACKED};
use std::io::{Cursor, Read};
use std::path::{Component, Path};

/// An archive kind the catalog reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Archive {
    /// A zip (a Python wheel is one).
    Zip,
    /// A plain tar.
    Tar,
    /// A gzip-compressed tar (an npm tarball, a source release).
    Tgz,
    /// An xz-compressed tar (a source release).
    Txz,
    /// A Debian binary package.
    Deb,
}

impl Archive {
    /// The kind a row names: `zip`, `tgz` (or `tar.gz`), `deb`.
    pub fn parse(kind: &str) -> Option<Archive> {
        match kind {
            "zip" => Some(Archive::Zip),
            "tar" => Some(Archive::Tar),
            "tgz" | "tar.gz" => Some(Archive::Tgz),
            "txz" | "tar.xz" => Some(Archive::Txz),
            "deb" => Some(Archive::Deb),
            _ => None,
        }
    }

    /// The kind a URL's file name says (`.whl`, `.zip`, `.tgz`,
    /// `.tar.gz`, `.deb`).
    pub fn of_url(url: &str) -> Option<Archive> {
        let name = url.rsplit('/').next().unwrap_or(url);
        let name = name.split(['?', '#']).next().unwrap_or(name);
        if name.ends_with(".whl") || name.ends_with(".zip") {
            Some(Archive::Zip)
        } else if name.ends_with(".tgz") || name.ends_with(".tar.gz") {
            Some(Archive::Tgz)
        } else if name.ends_with(".txz") || name.ends_with(".tar.xz") {
            Some(Archive::Txz)
        } else if name.ends_with(".tar") {
            Some(Archive::Tar)
        } else if name.ends_with(".deb") {
            Some(Archive::Deb)
        } else {
            None
        }
    }

    /// The kinds, as a row names them.
    pub const NAMES: &'static str = "zip, tar, tgz, txz, deb";

    /// The entry at `path`, at most `cap` bytes.
    pub fn extract(self, archive: &[u8], path: &str, cap: usize) -> Result<Vec<u8>, String> {
        self.extract_within(archive, path, cap, CATALOG_MAX_UNPACKED)
    }

    /// [`Archive::extract`], decompressing at most `unpacked` bytes.
    fn extract_within(
        self,
        archive: &[u8],
        path: &str,
        cap: usize,
        unpacked: u64,
    ) -> Result<Vec<u8>, String> {
        let wanted = inside(path)?;
        let wanted = Wanted {
            parts: &wanted,
            path,
            cap,
            unpacked,
        };
        match self {
            Archive::Zip => unzip(archive, path, cap),
            Archive::Deb => undeb(archive, &wanted),
            tar => untar(tar.stream(archive, unpacked)?, &wanted),
        }
    }

    /// The decompressed stream of a tar kind, failing past `unpacked`
    /// bytes.
    fn stream<'a>(self, archive: &'a [u8], unpacked: u64) -> Result<Box<dyn Read + 'a>, String> {
        Ok(match self {
            Archive::Tar => Box::new(Unpacked::new(archive, unpacked)),
            Archive::Tgz => Box::new(Unpacked::new(
                flate2::read::GzDecoder::new(archive),
                unpacked,
            )),
            Archive::Txz => {
                // lzma-rs unpacks xz whole: into a buffer that refuses to
                // grow past the unpacked cap.
                let mut data = CappedSink(Vec::new(), unpacked);
                lzma_rs::xz_decompress(&mut std::io::BufReader::new(archive), &mut data)
                    .map_err(|e| format!("xz: {e}"))?;
                Box::new(Cursor::new(data.0))
            }
            Archive::Zip | Archive::Deb => {
                return Err(format!("{self:?} is not a tar"));
            }
        })
    }

    /// Unpacks the entries below `root` (a folder inside the archive)
    /// into `dest`, which must exist: regular files and folders only, a
    /// link left out. The number of files written.
    pub fn unpack_tree(self, archive: &[u8], root: &str, dest: &Path) -> Result<usize, String> {
        self.unpack_tree_within(archive, root, dest, CATALOG_MAX_UNPACKED)
    }

    fn unpack_tree_within(
        self,
        archive: &[u8],
        root: &str,
        dest: &Path,
        unpacked: u64,
    ) -> Result<usize, String> {
        let root: Vec<&str> = if root.is_empty() || root == "." {
            Vec::new()
        } else {
            inside(root)?
        };
        let mut tar = tar::Archive::new(self.stream(archive, unpacked)?);
        let mut files = 0;
        for entry in tar.entries().map_err(|e| e.to_string())? {
            let mut entry = entry.map_err(|e| e.to_string())?;
            let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
            let Ok(parts) = inside(&name) else {
                // `./` itself, or a path that would leave: nothing to write.
                continue;
            };
            let Some(rest) = parts
                .strip_prefix(root.as_slice())
                .filter(|r| !r.is_empty())
            else {
                continue;
            };
            let target = rest.iter().fold(dest.to_path_buf(), |p, c| p.join(c));
            let kind = entry.header().entry_type();
            if kind.is_dir() {
                std::fs::create_dir_all(&target).map_err(|e| format!("{name}: {e}"))?;
            } else if kind.is_file() {
                files += 1;
                if files > CATALOG_MAX_TREE_FILES {
                    return Err(format!("more than {CATALOG_MAX_TREE_FILES} files"));
                }
                if let Some(parent) = target.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| format!("{name}: {e}"))?;
                }
                let mut out = std::fs::File::create(&target).map_err(|e| format!("{name}: {e}"))?;
                std::io::copy(&mut entry, &mut out).map_err(|e| format!("{name}: {e}"))?;
            }
            // Links, devices and the rest are left out.
        }
        Ok(files)
    }
}

/// The components of a path that stays inside an archive, or why not.
pub fn inside(path: &str) -> Result<Vec<&str>, String> {
    let leaves =
        || format!("`{path}` leaves the archive (an entry path is relative, without `..`)");
    if path.is_empty() || path.contains('\\') || path.contains('\0') {
        return Err(leaves());
    }
    let mut parts = Vec::new();
    for c in Path::new(path).components() {
        match c {
            Component::Normal(p) => parts.push(p.to_str().ok_or_else(leaves)?),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(leaves());
            }
        }
    }
    if parts.is_empty() {
        return Err(leaves());
    }
    Ok(parts)
}

/// Whether `name` is one plain path component (a file to write into a
/// folder the engine made, and nowhere else).
pub fn is_file_name(name: &str) -> bool {
    inside(name).is_ok_and(|parts| parts.len() == 1)
}

/// Reads `entry` whole, refusing it past `cap`.
fn capped(entry: impl Read, path: &str, cap: usize) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    entry
        .take(cap as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{path}: {e}"))?;
    if bytes.len() > cap {
        return Err(format!("{path} is more than {cap} bytes"));
    }
    Ok(bytes)
}

fn unzip(archive: &[u8], path: &str, cap: usize) -> Result<Vec<u8>, String> {
    let mut zip = zip::ZipArchive::new(Cursor::new(archive)).map_err(|e| e.to_string())?;
    let entry = zip.by_name(path).map_err(|e| format!("{path}: {e}"))?;
    if entry.is_symlink() || !entry.is_file() {
        return Err(format!("{path} is not a regular file in the archive"));
    }
    capped(entry, path, cap)
}

/// The entry looked for, and the caps of the search.
struct Wanted<'a> {
    parts: &'a [&'a str],
    path: &'a str,
    cap: usize,
    unpacked: u64,
}

fn untar(reader: impl Read, wanted: &Wanted) -> Result<Vec<u8>, String> {
    let Wanted {
        parts, path, cap, ..
    } = *wanted;
    let mut tar = tar::Archive::new(reader);
    let entries = tar.entries().map_err(|e| e.to_string())?;
    for entry in entries {
        let entry = entry.map_err(|e| e.to_string())?;
        let name = entry.path_bytes();
        let name = String::from_utf8_lossy(&name);
        // Entries are compared by their components: `./package/x.wasm`
        // is `package/x.wasm`; one that would leave the archive matches
        // nothing.
        if inside(&name).ok().as_deref() != Some(parts) {
            continue;
        }
        if !entry.header().entry_type().is_file() {
            return Err(format!("{path} is not a regular file in the archive"));
        }
        return capped(entry, path, cap);
    }
    Err(format!("{path}: not in the archive"))
}

/// A Debian package: the entry is looked for in its `data.tar`.
fn undeb(archive: &[u8], wanted: &Wanted) -> Result<Vec<u8>, String> {
    let unpacked = wanted.unpacked;
    let mut ar = ar::Archive::new(archive);
    while let Some(member) = ar.next_entry() {
        let member = member.map_err(|e| format!("not a Debian package: {e}"))?;
        let id = String::from_utf8_lossy(member.header().identifier()).into_owned();
        let Some(compression) = id.strip_prefix("data.tar") else {
            continue;
        };
        return match compression {
            ".gz" => untar(
                Unpacked::new(flate2::read::GzDecoder::new(member), unpacked),
                wanted,
            ),
            ".zst" => {
                let zst = ruzstd::decoding::StreamingDecoder::new(member)
                    .map_err(|e| format!("{id}: {e}"))?;
                untar(Unpacked::new(zst, unpacked), wanted)
            }
            ".xz" => {
                // lzma-rs unpacks xz whole: into a buffer that refuses to
                // grow past the unpacked cap.
                let mut data = CappedSink(Vec::new(), unpacked);
                lzma_rs::xz_decompress(&mut std::io::BufReader::new(member), &mut data)
                    .map_err(|e| format!("{id}: {e}"))?;
                untar(Cursor::new(data.0), wanted)
            }
            "" => untar(Unpacked::new(member, unpacked), wanted),
            other => Err(format!("{id}: compression `{other}` is not read here")),
        };
    }
    Err("not a Debian package: it holds no data.tar".into())
}

/// A decompressed stream that fails once its cap of bytes have come out
/// of it.
struct Unpacked<R> {
    inner: R,
    left: u64,
}

impl<R: Read> Unpacked<R> {
    fn new(inner: R, left: u64) -> Self {
        Unpacked { inner, left }
    }
}

impl<R: Read> Read for Unpacked<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            return Err(unpacked_past_cap());
        }
        let room = buf.len().min(self.left.try_into().unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..room])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// A buffer refusing to hold more than its cap of bytes.
struct CappedSink(Vec<u8>, u64);

impl std::io::Write for CappedSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.0.len() as u64 + buf.len() as u64 > self.1 {
            return Err(unpacked_past_cap());
        }
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn unpacked_past_cap() -> std::io::Error {
    std::io::Error::other(
        "more bytes unpacked than CATALOG_MAX_UNPACKED before the entry was found",
    )
}

#[cfg(test)]
#[path = "archive_tests.rs"]
pub(super) mod tests;
