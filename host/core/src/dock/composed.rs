//! The on-disk cache of compositions: each guest plugged with its brokers
//! (`compose.rs`), and beside it a small index naming the composed bytes'
//! sha256 and their imports. With the index and the compiled form at hand,
//! a cached composition docks without reading, hashing or parsing the
//! composed bytes: the start of every `wbx run` docks the shell this way.
//!
//! Invariant: every entry is sealed with the home's key (`seal.rs`) over
//! what it claims to be, its composition key, so an entry edited, or copied
//! from another composition, fails its seal and is built again. The key
//! covers the composer's version, the guest and each broker in order, so a
//! new composer or a replaced broker never reads an old entry. The imports
//! an index lists are checked against the grant exactly as freshly parsed
//! ones are.

use super::{DockError, brokers::Broker, compose};
use crate::artifact::{Artifact, ArtifactKind};
use crate::seal::Seal;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// What a composition is, without its bytes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Index {
    /// The composed bytes' sha256, lowercase hex: the compile cache's key.
    pub(crate) sha256: String,
    /// Its top-level imports, in binary order.
    pub(crate) linked: Vec<String>,
}

impl Index {
    /// The sha256 as bytes, if well formed.
    pub(crate) fn hash(&self) -> Option<[u8; 32]> {
        hex::decode(&self.sha256).ok()?.try_into().ok()
    }
}

/// The cache of compositions under a home's `cache/`.
pub(crate) struct Compositions {
    composed: Option<PathBuf>,
    index: Option<PathBuf>,
    seal: Seal,
    /// Indexes handed over by a parent process ([`super::handoff`]).
    handed: std::sync::Mutex<std::collections::HashMap<String, Index>>,
}

/// The name of a composition in the cache: the composer's version, the
/// guest and each broker in order.
pub(crate) fn key(composer: &str, guest: &[u8; 32], brokers: &[[u8; 32]]) -> String {
    let mut h = Sha256::new();
    h.update((composer.len() as u64).to_le_bytes());
    h.update(composer.as_bytes());
    h.update(guest);
    for b in brokers {
        h.update(b);
    }
    hex::encode(h.finalize())
}

impl Compositions {
    /// A cache under `cache_dir` when given (none otherwise), its entries
    /// sealed with `seal`.
    pub(crate) fn new(cache_dir: Option<&std::path::Path>, seal: Seal) -> Self {
        Self {
            composed: cache_dir.map(|d| d.join("composed")),
            index: cache_dir.map(|d| d.join("composed-index")),
            seal,
            handed: Default::default(),
        }
    }

    /// Holds `index` for composition `key` in memory, as handed over.
    pub(crate) fn hand(&self, key: &str, index: Index) {
        self.handed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key.to_string(), index);
    }

    /// The key of `guest` plugged with `brokers`.
    pub(crate) fn key_of(guest: &Artifact, brokers: &[&Broker]) -> String {
        let hashes: Vec<[u8; 32]> = brokers.iter().map(|b| b.artifact.sha256()).collect();
        key(compose::COMPOSER, &guest.sha256(), &hashes)
    }

    /// The index of composition `key`, when cached and its seal holds.
    pub(crate) fn index(&self, key: &str) -> Option<Index> {
        if let Some(index) = self
            .handed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
        {
            return Some(index.clone());
        }
        let path = self.index.as_ref()?.join(format!("{key}.json"));
        let json = self.read_sealed(&path, &format!("composed-index:{key}"))?;
        serde_json::from_slice(&json).ok()
    }

    /// Records the index of composition `key`.
    pub(crate) fn write_index(&self, key: &str, index: &Index) {
        let (Some(dir), Ok(json)) = (&self.index, serde_json::to_vec(index)) else {
            return;
        };
        let path = dir.join(format!("{key}.json"));
        self.write_sealed(&path, &format!("composed-index:{key}"), &json);
    }

    /// `guest` composed with `brokers` under `key`, from the cache when
    /// there and sealed.
    pub(crate) fn compose(
        &self,
        key: &str,
        guest: &Artifact,
        brokers: &[&Broker],
    ) -> Result<Artifact, DockError> {
        let context = format!("composed:{key}");
        let path = self
            .composed
            .as_ref()
            .map(|d| d.join(format!("{key}.wasm")));
        if let Some(bytes) = path.as_ref().and_then(|p| self.read_sealed(p, &context)) {
            return Ok(Artifact::trusted(bytes, ArtifactKind::Component));
        }
        let plugs: Vec<compose::Plug<'_>> = brokers
            .iter()
            .map(|b| compose::Plug {
                name: &b.name,
                bytes: b.artifact.bytes(),
            })
            .collect();
        let bytes = compose::plug(guest.bytes(), &plugs).map_err(DockError::Compose)?;
        if let Some(path) = &path {
            self.write_sealed(path, &context, &bytes);
        }
        Ok(Artifact::trusted(bytes, ArtifactKind::Component))
    }

    /// The bytes of the entry at `path`, if it is there and its seal over
    /// `context` holds; an entry whose seal fails is ignored (and rebuilt).
    fn read_sealed(&self, path: &Path, context: &str) -> Option<Vec<u8>> {
        let sealed = std::fs::read(path).ok()?;
        let bytes = self.seal.unseal(context.as_bytes(), &sealed);
        if bytes.is_none() {
            tracing::warn!(path = %path.display(), "discarding a cache entry whose seal does not match");
        }
        bytes.map(<[u8]>::to_vec)
    }

    /// Writes `bytes` to `path` sealed over `context`; a cache that cannot
    /// be written only makes the next start slower.
    fn write_sealed(&self, path: &Path, context: &str, bytes: &[u8]) {
        if let Some(sealed) = self.seal.seal(context.as_bytes(), bytes)
            && let Err(e) = crate::files::write_atomic(path, &sealed)
        {
            tracing::warn!(path = %path.display(), error = %e, "could not write a cache entry");
        }
    }
}
