//! What this home pulled: a record per manifest digest, beside the bytes
//! in the content-addressed store.
//!
//! `<home>/oci/manifests/<hex>.json` names the layer's sha256 (the store
//! file `<home>/store/<sha256>.wasm`) and the signers whose signatures
//! verified over that digest. A digest names immutable bytes, so a pull by
//! a recorded digest (or a tag that still resolves to one) reads nothing
//! more from the registry; the runner checks the store file's hash when it
//! loads it.

use crate::OciError;
use std::path::{Path, PathBuf};

/// The folder of the records, under the home.
pub const MANIFESTS_DIR: &str = "oci/manifests";

/// A pulled artifact.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Pulled {
    /// The reference as asked.
    pub reference: String,
    /// The manifest digest it resolved to, `sha256:…`.
    pub digest: String,
    /// The wasm's sha256 (hex): its name in the store.
    pub sha256: String,
    /// The wasm's size.
    pub size: u64,
    /// The signers whose signatures verified over `digest` (only looked
    /// for when signers are required).
    #[serde(default)]
    pub signers: Vec<String>,
    /// The store file.
    #[serde(skip)]
    pub path: PathBuf,
    /// Whether it came from the record, reading no blob.
    #[serde(skip)]
    pub cached: bool,
}

impl Pulled {
    /// The reference pinned to the digest it resolved to:
    /// `oci://HOST/REPO@sha256:…`.
    pub fn pinned(&self) -> String {
        crate::OciRef::parse(&self.reference)
            .map(|r| r.at_digest(&self.digest).to_string())
            .unwrap_or_else(|_| self.reference.clone())
    }
}

fn record_path(home: &Path, digest: &str) -> Option<PathBuf> {
    let hex = digest.strip_prefix("sha256:")?;
    crate::artifact::is_sha256_digest(digest)
        .then(|| home.join(MANIFESTS_DIR).join(format!("{hex}.json")))
}

/// The record of `digest`, when its store file is present.
pub(crate) fn recorded(home: &Path, digest: &str) -> Option<Pulled> {
    let bytes = std::fs::read(record_path(home, digest)?).ok()?;
    let mut p: Pulled = serde_json::from_slice(&bytes).ok()?;
    if p.digest != digest
        || p.sha256.len() != 64
        || !p.sha256.bytes().all(|b| b.is_ascii_hexdigit())
    {
        return None;
    }
    p.path = store_path(home, &p.sha256);
    p.cached = true;
    p.path.is_file().then_some(p)
}

/// The store file of `sha256`.
pub(crate) fn store_path(home: &Path, sha256: &str) -> PathBuf {
    workbooks::commands::Registry::new(home).store_path(sha256)
}

/// Writes the record of `p` (atomically: a torn record is never read).
pub(crate) fn record(home: &Path, p: &Pulled) -> Result<(), OciError> {
    let path = record_path(home, &p.digest)
        .ok_or_else(|| OciError::io(&p.digest, "not a sha256 digest"))?;
    let bytes = serde_json::to_vec_pretty(p).expect("a record serialises");
    workbooks::files::write_atomic(&path, &bytes).map_err(|e| OciError::io(path.display(), e))
}
