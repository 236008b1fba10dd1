//! The C lane's sysroot: the clang row's archive carries it as a tar
//! (clang's resource headers, wasi-libc's headers and libraries,
//! compiler-rt), pinned by its own sha256 in the row. The tar is kept in
//! the home (`catalog/sysroot/<sha256>.tar`) when the row is installed, so
//! a build fetches nothing, and each build unpacks it into a folder of its
//! own outside the home (the engine never preopens a folder of its home),
//! preopened read-only.
//!
//! Invariant: the tar is hashed against the pin every time it is read;
//! bytes that do not hash to it are never unpacked.
use super::archive::Archive;
use super::c_lane::CLaneError;
use super::{Catalog, Row};
use crate::limits::CATALOG_MAX_BYTES;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Where a row's sysroot is inside its archive.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sysroot {
    /// The tar's path inside the row's archive.
    pub path: String,
    /// The tar's sha256 (hex).
    pub sha256: String,
}

impl Catalog {
    /// Takes `row`'s sysroot out of its `fetched` archive, checks it
    /// against the pin and keeps it in the home; the tar.
    pub(super) fn keep_sysroot(&self, row: &Row, fetched: &[u8]) -> Result<Vec<u8>, CLaneError> {
        let failed = CLaneError::Sysroot;
        let (spec, kept) = self.kept_sysroot(row)?;
        let kind = row
            .archive()
            .map_err(failed)?
            .ok_or_else(|| failed(format!("the {} row names no archive", row.name)))?;
        let tar = kind
            .extract(fetched, &spec.path, CATALOG_MAX_BYTES)
            .map_err(failed)?;
        super::matches_pin(&tar, &spec.sha256).map_err(|got| {
            failed(format!(
                "artifact_integrity: {} hashes to {got}, pinned {}",
                spec.path, spec.sha256
            ))
        })?;
        keep(&kept, &tar).map_err(|e| failed(format!("{}: {e}", kept.display())))?;
        Ok(tar)
    }

    /// A fresh folder holding `clang`'s sysroot, removed when dropped:
    /// from the tar kept in the home, or fetched again when that is gone
    /// or no longer hashes to the pin.
    pub(super) async fn sysroot(&self, clang: &Row) -> Result<tempfile::TempDir, CLaneError> {
        let failed = CLaneError::Sysroot;
        let (spec, kept) = self.kept_sysroot(clang)?;
        let tar = match std::fs::read(&kept) {
            Ok(tar) if super::matches_pin(&tar, &spec.sha256).is_ok() => tar,
            _ => {
                let fetched = self.fetch(clang).await.map_err(|e| failed(e.to_string()))?;
                self.keep_sysroot(clang, &fetched)?
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

    /// `row`'s sysroot, and where its tar is kept (named by its pin, which
    /// must be a sha256 and so a plain file name).
    pub(super) fn kept_sysroot<'r>(
        &self,
        row: &'r Row,
    ) -> Result<(&'r Sysroot, PathBuf), CLaneError> {
        let failed = CLaneError::Sysroot;
        let spec = row
            .sysroot
            .as_ref()
            .ok_or_else(|| failed(format!("the {} row names none", row.name)))?;
        if spec.sha256.len() != 64 || !spec.sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(failed(format!("its pin `{}` is not a sha256", spec.sha256)));
        }
        let kept = self
            .engine
            .home()
            .join("catalog")
            .join("sysroot")
            .join(format!("{}.tar", spec.sha256.to_ascii_lowercase()));
        Ok((spec, kept))
    }
}

/// Writes `bytes` to `path` whole or not at all.
fn keep(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let mut staged = tempfile::NamedTempFile::new_in(parent)?;
    std::io::Write::write_all(&mut staged, bytes)?;
    staged.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::archive::tests::files;

    /// A clang-like row whose gzip tar at `url` holds `sysroot.tar`.
    fn row_with(dir: &Path, tar: &[u8], pin: &str) -> Row {
        let file = dir.join("clang-1.tgz");
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let mut outer = tar::Builder::new(gz);
        files(&mut outer, &[("package/sysroot.tar", tar)]);
        std::fs::write(&file, outer.into_inner().unwrap().finish().unwrap()).unwrap();
        Row {
            name: "clang".into(),
            url: format!("file://{}", file.display()),
            sysroot: Some(Sysroot {
                path: "package/sysroot.tar".into(),
                sha256: pin.into(),
            }),
            ..Row::default()
        }
    }

    /// A tar holding `include/stdio.h`.
    fn sysroot_tar() -> Vec<u8> {
        let mut tar = tar::Builder::new(Vec::new());
        files(&mut tar, &[("include/stdio.h", b"int")]);
        tar.into_inner().unwrap()
    }

    #[tokio::test]
    async fn a_sysroot_is_used_only_while_it_hashes_to_its_pin() {
        let (home, engine) = workbooks::engine::for_tests();
        let catalog = Catalog::new(engine);
        let tar = sysroot_tar();
        let pin = workbooks::identity::sha256_hex(&tar);

        // Wrong pin: refused, nothing kept.
        let wrong = row_with(home.path(), &tar, &"0".repeat(64));
        let err = catalog.sysroot(&wrong).await.unwrap_err().to_string();
        assert!(err.contains("artifact_integrity"), "{err}");
        // A pin that is no sha256 would name a path in the home: refused.
        let climbing = row_with(home.path(), &tar, "../../../escape");
        let err = catalog.sysroot(&climbing).await.unwrap_err().to_string();
        assert!(err.contains("is not a sha256"), "{err}");

        let row = row_with(home.path(), &tar, &pin);
        let dir = catalog.sysroot(&row).await.unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("include/stdio.h")).unwrap(),
            b"int"
        );
        assert!(
            !dir.path().starts_with(home.path()),
            "a sysroot is unpacked outside the home"
        );

        // The kept tar altered on disk is not unpacked: the pinned tar is
        // taken from the archive again.
        let (_, kept) = catalog.kept_sysroot(&row).unwrap();
        let mut altered = sysroot_tar();
        let at = altered.len() - 2000;
        altered[at] ^= 0xff;
        std::fs::write(&kept, &altered).unwrap();
        let dir = catalog.sysroot(&row).await.unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("include/stdio.h")).unwrap(),
            b"int"
        );
        assert_eq!(
            std::fs::read(&kept).unwrap(),
            tar,
            "the pinned tar is kept again"
        );
    }
}
