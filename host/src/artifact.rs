//! Artifacts (the bytes of a component or core module, named by their
//! sha256) and the compile cache.
//!
//! Compiling a component is the expensive step (tens to hundreds of ms), so
//! it is paid once per content hash: compiled code is kept in memory and
//! serialized to `<home>/cache/compiled/<sha256>-<engine>.cwasm`, where
//! `<engine>` hashes wasmtime's compatibility key (version and settings).
//! Deserializing runs native code from that file, so the cache is only ever
//! read from the engine's own home, which only the engine writes; a file
//! that fails to load is discarded and the component recompiled.

use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use wasmtime::Module;
use wasmtime::component::Component;

/// The first bytes of a component binary.
const COMPONENT_HEADER: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00];
/// The first bytes of a core module binary.
const MODULE_HEADER: [u8; 8] = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];

/// What an artifact's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ArtifactKind {
    /// A component-model component.
    Component,
    /// A core WebAssembly module.
    Module,
}

/// The bytes of a component or core module, named by their sha256.
#[derive(Clone)]
pub struct Artifact {
    bytes: bytes::Bytes,
    sha256: [u8; 32],
    kind: ArtifactKind,
}

impl std::fmt::Debug for Artifact {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Artifact")
            .field("sha256", &self.sha256_hex())
            .field("kind", &self.kind)
            .field("len", &self.bytes.len())
            .finish()
    }
}

/// Why bytes are not an artifact.
#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The bytes are not a WebAssembly binary.
    #[error("not a WebAssembly component or module (bad header)")]
    NotWasm,
    /// The binary failed validation.
    #[error("invalid WebAssembly: {0}")]
    Invalid(String),
}

impl Artifact {
    /// Wraps bytes, checking the binary header and validating them.
    pub fn from_bytes(bytes: impl Into<Vec<u8>>) -> Result<Artifact, ArtifactError> {
        let bytes: Vec<u8> = bytes.into();
        let kind = match bytes.get(..8) {
            Some(h) if h == COMPONENT_HEADER => ArtifactKind::Component,
            Some(h) if h == MODULE_HEADER => ArtifactKind::Module,
            _ => return Err(ArtifactError::NotWasm),
        };
        let mut features = wasmparser::WasmFeatures::default();
        features.insert(wasmparser::WasmFeatures::COMPONENT_MODEL);
        wasmparser::Validator::new_with_features(features)
            .validate_all(&bytes)
            .map_err(|e| ArtifactError::Invalid(e.to_string()))?;
        Ok(Self::trusted(bytes, kind))
    }

    /// Wraps bytes the engine itself built (embedded components, its own
    /// compositions), skipping validation; compiling them validates anyway.
    pub(crate) fn trusted(bytes: Vec<u8>, kind: ArtifactKind) -> Artifact {
        let sha256 = Sha256::digest(&bytes).into();
        Artifact {
            bytes: bytes.into(),
            sha256,
            kind,
        }
    }

    /// Wraps a component embedded in the engine binary, with the sha256 the
    /// build computed: no copy, no hashing at run time.
    pub(crate) fn embedded(bytes: &'static [u8], sha256: [u8; 32]) -> Artifact {
        Artifact {
            bytes: bytes::Bytes::from_static(bytes),
            sha256,
            kind: ArtifactKind::Component,
        }
    }

    /// Reads and wraps a file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Artifact, ArtifactError> {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|source| ArtifactError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Artifact::from_bytes(bytes)
    }

    /// The raw bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The sha256 of the bytes.
    pub fn sha256(&self) -> [u8; 32] {
        self.sha256
    }

    /// The sha256 as lowercase hex.
    pub fn sha256_hex(&self) -> String {
        hex::encode(self.sha256)
    }

    /// Component or core module.
    pub fn kind(&self) -> ArtifactKind {
        self.kind
    }
}

/// Feeds `Hash` output into sha256, for a hash that is stable across runs.
struct ShaHasher(Sha256);

impl Hasher for ShaHasher {
    fn finish(&self) -> u64 {
        let d = self.0.clone().finalize();
        u64::from_le_bytes(d[..8].try_into().unwrap_or_default())
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

/// Compiled code of either kind.
#[derive(Clone)]
enum Compiled {
    Component(Component),
    Module(Module),
}

/// Compiled components and modules by content hash, in memory and on disk.
pub(crate) struct CompileCache {
    dir: Option<PathBuf>,
    engine_key: String,
    memory: Mutex<HashMap<[u8; 32], Compiled>>,
}

impl CompileCache {
    /// A cache for `engine`, persisted in `dir` when given.
    pub(crate) fn new(engine: &wasmtime::Engine, dir: Option<PathBuf>) -> Self {
        let mut h = ShaHasher(Sha256::new());
        engine.precompile_compatibility_hash().hash(&mut h);
        let engine_key = hex::encode(&h.0.finalize()[..8]);
        Self {
            dir,
            engine_key,
            memory: Mutex::new(HashMap::new()),
        }
    }

    fn path(&self, sha: &[u8; 32]) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        Some(dir.join(format!("{}-{}.cwasm", hex::encode(sha), self.engine_key)))
    }

    /// The compiled form of a component artifact.
    pub(crate) fn component(
        &self,
        engine: &wasmtime::Engine,
        artifact: &Artifact,
    ) -> wasmtime::Result<Component> {
        match self.compiled(engine, artifact)? {
            Compiled::Component(c) => Ok(c),
            Compiled::Module(_) => wasmtime::bail!("artifact is a core module, not a component"),
        }
    }

    /// The compiled form of a core module artifact.
    pub(crate) fn module(
        &self,
        engine: &wasmtime::Engine,
        artifact: &Artifact,
    ) -> wasmtime::Result<Module> {
        match self.compiled(engine, artifact)? {
            Compiled::Module(m) => Ok(m),
            Compiled::Component(_) => wasmtime::bail!("artifact is a component, not a core module"),
        }
    }

    fn compiled(
        &self,
        engine: &wasmtime::Engine,
        artifact: &Artifact,
    ) -> wasmtime::Result<Compiled> {
        let sha = artifact.sha256();
        if let Some(c) = self.lock().get(&sha) {
            return Ok(c.clone());
        }
        let compiled = match self.path(&sha).filter(|p| p.is_file()) {
            Some(path) => match Self::load(engine, &path, artifact.kind()) {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!(path = %path.display(), error = %e, "discarding unloadable compile cache entry");
                    let _ = std::fs::remove_file(&path);
                    self.compile(engine, artifact)?
                }
            },
            None => self.compile(engine, artifact)?,
        };
        self.lock().insert(sha, compiled.clone());
        Ok(compiled)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], Compiled>> {
        self.memory.lock().unwrap_or_else(|p| p.into_inner())
    }

    #[expect(
        unsafe_code,
        reason = "deserializing native code; only files this engine wrote into its own home are read"
    )]
    fn load(
        engine: &wasmtime::Engine,
        path: &Path,
        kind: ArtifactKind,
    ) -> wasmtime::Result<Compiled> {
        // SAFETY: the file was produced by `serialize` of an engine with the
        // same compatibility key (it is in the file name) and lives in the
        // engine's home, which only the engine writes.
        unsafe {
            Ok(match kind {
                ArtifactKind::Component => {
                    Compiled::Component(Component::deserialize_file(engine, path)?)
                }
                ArtifactKind::Module => Compiled::Module(Module::deserialize_file(engine, path)?),
            })
        }
    }

    fn compile(
        &self,
        engine: &wasmtime::Engine,
        artifact: &Artifact,
    ) -> wasmtime::Result<Compiled> {
        let (compiled, bytes) = match artifact.kind() {
            ArtifactKind::Component => {
                let c = Component::from_binary(engine, artifact.bytes())?;
                let bytes = c.serialize()?;
                (Compiled::Component(c), bytes)
            }
            ArtifactKind::Module => {
                let m = Module::from_binary(engine, artifact.bytes())?;
                let bytes = m.serialize()?;
                (Compiled::Module(m), bytes)
            }
        };
        if let Some(path) = self.path(&artifact.sha256())
            && let Err(e) = write_atomic(&path, &bytes)
        {
            tracing::warn!(path = %path.display(), error = %e, "could not write compile cache entry");
        }
        Ok(compiled)
    }
}

/// Writes `bytes` to `path` through a temporary file and a rename, so a
/// reader never sees a partial file.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".tmp-{}-{n}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_that_are_not_wasm_are_refused() {
        assert!(matches!(
            Artifact::from_bytes(b"#!/bin/sh\necho hi".to_vec()),
            Err(ArtifactError::NotWasm)
        ));
        let mut truncated = COMPONENT_HEADER.to_vec();
        truncated.push(0x01);
        assert!(matches!(
            Artifact::from_bytes(truncated),
            Err(ArtifactError::Invalid(_))
        ));
    }

    #[test]
    fn an_empty_core_module_is_an_artifact_named_by_its_hash() {
        let a = Artifact::from_bytes(MODULE_HEADER.to_vec()).unwrap();
        assert_eq!(a.kind(), ArtifactKind::Module);
        assert_eq!(a.sha256_hex().len(), 64);
    }
}
