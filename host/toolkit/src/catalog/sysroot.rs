//! The C lane's sysroot: the clang row's archive carries it as a tar
//! (clang's resource headers, wasi-libc's headers and libraries,
//! compiler-rt), pinned by its own sha256 in the row. The tar is kept in
//! the home (`catalog/sysroot/<sha256>.tar`) so a build fetches nothing,
//! and each build unpacks it into a folder of its own outside the home
//! (the engine never preopens a folder of its home), preopened read-only.
//!
//! Invariant: the tar is hashed against the pin every time it is read;
//! bytes that do not hash to it are never unpacked.
use super::archive::Archive;
use super::c_lane::CLaneError;
use super::{Catalog, Row};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use workbooks::limits::CATALOG_MAX_BYTES;

/// Where a row's sysroot is inside its archive.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sysroot {
    /// The tar's path inside the row's archive.
    pub path: String,
    /// The tar's sha256 (hex).
    pub sha256: String,
}

impl Catalog {
    /// A fresh folder holding `clang`'s sysroot, removed when dropped.
    pub(super) async fn sysroot(&self, clang: &Row) -> Result<tempfile::TempDir, CLaneError> {
        let failed = CLaneError::Sysroot;
        let spec = clang
            .sysroot
            .as_ref()
            .ok_or_else(|| failed(format!("the {} row names none", clang.name)))?;
        if spec.sha256.len() != 64 || !spec.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(failed("its pin is not a sha256".into()));
        }
        let kept = self
            .engine
            .home()
            .join("catalog")
            .join("sysroot")
            .join(format!("{}.tar", spec.sha256.to_ascii_lowercase()));
        let pinned =
            |tar: &[u8]| hex::encode(Sha256::digest(tar)).eq_ignore_ascii_case(&spec.sha256);
        let tar = match std::fs::read(&kept) {
            Ok(tar) if pinned(&tar) => tar,
            _ => {
                let fetched = self.fetch(clang).await.map_err(|e| failed(e.to_string()))?;
                let kind = clang
                    .archive()
                    .map_err(failed)?
                    .ok_or_else(|| failed(format!("the {} row names no archive", clang.name)))?;
                let tar = kind
                    .extract(&fetched, &spec.path, CATALOG_MAX_BYTES)
                    .map_err(failed)?;
                if !pinned(&tar) {
                    return Err(failed(format!(
                        "artifact_integrity: {} hashes to {}, pinned {}",
                        spec.path,
                        hex::encode(Sha256::digest(&tar)),
                        spec.sha256
                    )));
                }
                keep(&kept, &tar).map_err(|e| failed(format!("{}: {e}", kept.display())))?;
                tar
            }
        };
        let dir = tempfile::Builder::new()
            .prefix("wb-sysroot-")
            .tempdir()
            .map_err(|e| failed(e.to_string()))?;
        Archive::Tar
            .unpack_tree(&tar, "", dir.path())
            .map_err(failed)?;
        Ok(dir)
    }
}

/// Writes `bytes` to `path` whole or not at all.
fn keep(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let parent = path.parent().unwrap_or(std::path::Path::new("."));
    std::fs::create_dir_all(parent)?;
    let mut staged = tempfile::NamedTempFile::new_in(parent)?;
    std::io::Write::write_all(&mut staged, bytes)?;
    staged.persist(path).map_err(|e| e.error)?;
    Ok(())
}
