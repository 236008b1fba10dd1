//! Artifacts (the bytes of a component or core module, named by their
//! sha256) and the compile cache.
//!
//! Compiling a component is the expensive step (tens to hundreds of ms), so
//! it is paid once per content hash: compiled code is kept in memory and
//! serialized to `<home>/cache/compiled/<sha256>-<engine>.cwasm`, where
//! `<engine>` hashes wasmtime's version, the target, the settings this
//! engine always uses and the flavor of the wasmtime engine it was
//! compiled for (`flavor.rs`). A build without a compiler names entries the same
//! way, so it loads what a full build compiled (`compiler.rs`); wasmtime
//! itself refuses, on load, an entry whose flags, tunables or features do
//! not match the loading engine, and such an entry is compiled again.
//! Deserializing runs native code from that file, so every entry is sealed
//! with the home's key over its name and bytes (`seal.rs`) and loaded
//! only if the seal checks out (mapped through the very descriptor that was
//! checked, or from the bytes that were hashed); a file that fails is
//! discarded with its seal and the artifact recompiled.

use crate::compiler::{CompileWatch, Compiler, compile_with_helper};
use crate::flavor::{Engines, Flavor};
use crate::seal::{Opened, Seal};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
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
        let artifact = Self::unvalidated(bytes.into())?;
        artifact.validate()?;
        Ok(artifact)
    }

    /// Wraps bytes after checking the binary header only. For bytes whose
    /// compiled form the engine already holds: they were validated when
    /// they were compiled, and the cache entry is sealed over their hash.
    pub(crate) fn unvalidated(bytes: Vec<u8>) -> Result<Artifact, ArtifactError> {
        let kind = match bytes.get(..8) {
            Some(h) if h == COMPONENT_HEADER => ArtifactKind::Component,
            Some(h) if h == MODULE_HEADER => ArtifactKind::Module,
            _ => return Err(ArtifactError::NotWasm),
        };
        Ok(Self::trusted(bytes, kind))
    }

    /// Validates the bytes as WebAssembly (components included).
    pub(crate) fn validate(&self) -> Result<(), ArtifactError> {
        let mut features = wasmparser::WasmFeatures::default();
        features.insert(wasmparser::WasmFeatures::COMPONENT_MODEL);
        wasmparser::Validator::new_with_features(features)
            .validate_all(&self.bytes)
            .map_err(|e| ArtifactError::Invalid(e.to_string()))?;
        Ok(())
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
        let artifact = Self::read_unvalidated(path.as_ref())?;
        artifact.validate()?;
        Ok(artifact)
    }

    /// Reads a file and checks its header only (see [`Self::unvalidated`]).
    pub(crate) fn read_unvalidated(path: &Path) -> Result<Artifact, ArtifactError> {
        let bytes = std::fs::read(path).map_err(|source| ArtifactError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::unvalidated(bytes)
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

/// What names this engine's compiled code: wasmtime's version, the target,
/// and the settings `EngineBuilder::build` always applies (the ones that
/// change generated code). Nothing here depends on whether the build
/// carries a compiler.
const ENGINE_IDENTITY: &str = concat!(
    "wasmtime ",
    env!("WASMTIME_VERSION"),
    " ",
    env!("WB_TARGET"),
    " component-model epoch-interruption consume-fuel no-native-unwind-info"
);

/// The short hash of [`ENGINE_IDENTITY`] and a flavor in every entry's
/// name: code compiled for one of the two engines never loads on the
/// other.
pub(crate) fn engine_key(flavor: Flavor) -> String {
    let identity = format!("{ENGINE_IDENTITY} {}", flavor.word());
    hex::encode(&Sha256::digest(identity.as_bytes())[..8])
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
    seal: Seal,
    memory: Mutex<HashMap<([u8; 32], Flavor), Compiled>>,
    compiler: Compiler,
    home: PathBuf,
    watch: Option<CompileWatch>,
}

impl CompileCache {
    /// A cache of `home`, persisted in `dir` when given, its entries
    /// sealed with `seal`, filled on a miss by `compiler`, each compile
    /// shown to `watch`.
    pub(crate) fn new(
        dir: Option<PathBuf>,
        seal: Seal,
        (compiler, watch): (Compiler, Option<CompileWatch>),
        home: &Path,
    ) -> Self {
        Self {
            dir,
            seal,
            memory: Mutex::new(HashMap::new()),
            compiler,
            home: home.to_path_buf(),
            watch,
        }
    }

    /// What a compiled entry claims to be: the artifact and the engine.
    fn context(&self, sha: &[u8; 32], kind: ArtifactKind, flavor: Flavor) -> Vec<u8> {
        format!(
            "compiled:{kind:?}:{}:{}",
            hex::encode(sha),
            engine_key(flavor)
        )
        .into_bytes()
    }

    fn path(&self, sha: &[u8; 32], flavor: Flavor) -> Option<PathBuf> {
        let dir = self.dir.as_ref()?;
        Some(dir.join(format!("{}-{}.cwasm", hex::encode(sha), engine_key(flavor))))
    }

    /// The compiled form of a component artifact.
    pub(crate) fn component(
        &self,
        engines: &Engines,
        flavor: Flavor,
        artifact: &Artifact,
    ) -> wasmtime::Result<Component> {
        match self.compiled(engines, flavor, artifact)? {
            Compiled::Component(c) => Ok(c),
            Compiled::Module(_) => wasmtime::bail!("artifact is a core module, not a component"),
        }
    }

    /// The compiled form of a core module artifact.
    pub(crate) fn module(
        &self,
        engines: &Engines,
        artifact: &Artifact,
    ) -> wasmtime::Result<Module> {
        match self.compiled(engines, Flavor::Sync, artifact)? {
            Compiled::Module(m) => Ok(m),
            Compiled::Component(_) => wasmtime::bail!("artifact is a component, not a core module"),
        }
    }

    /// The compiled component of the artifact hashing to `sha`, from the
    /// cache only (in memory, or on disk with its seal checked): `None`
    /// when it is not there, or was discarded.
    pub(crate) fn cached_component(
        &self,
        engines: &Engines,
        flavor: Flavor,
        sha: &[u8; 32],
    ) -> Option<Component> {
        match self.cached(engines, flavor, sha, ArtifactKind::Component)? {
            Compiled::Component(c) => Some(c),
            Compiled::Module(_) => None,
        }
    }

    fn cached(
        &self,
        engines: &Engines,
        flavor: Flavor,
        sha: &[u8; 32],
        kind: ArtifactKind,
    ) -> Option<Compiled> {
        if let Some(c) = self.lock().get(&(*sha, flavor)) {
            return Some(c.clone());
        }
        let path = self.path(sha, flavor).filter(|p| p.is_file())?;
        match self.load(engines.of(flavor), flavor, &path, sha, kind) {
            Ok(c) => {
                self.lock().insert((*sha, flavor), c.clone());
                Some(c)
            }
            Err(e) => {
                tracing::warn!(path = %path.display(), error = %e, "discarding compile cache entry");
                Seal::discard(&path);
                None
            }
        }
    }

    fn compiled(
        &self,
        engines: &Engines,
        flavor: Flavor,
        artifact: &Artifact,
    ) -> wasmtime::Result<Compiled> {
        let sha = artifact.sha256();
        if let Some(c) = self.cached(engines, flavor, &sha, artifact.kind()) {
            return Ok(c);
        }
        let compiled = self.compile(engines, flavor, artifact)?;
        self.lock().insert((sha, flavor), compiled.clone());
        Ok(compiled)
    }

    /// Holds, for the artifact hashing to `sha`, the compiled code a
    /// parent handed over in the descriptor `fd` (see
    /// [`crate::dock::handoff`]).
    #[expect(
        unsafe_code,
        reason = "deserializing native code the parent process compiled and handed over in a sealed memfd"
    )]
    pub(crate) fn hand(
        &self,
        engines: &Engines,
        flavor: Flavor,
        sha: &[u8; 32],
        kind: ArtifactKind,
        fd: i32,
    ) -> wasmtime::Result<()> {
        let path = format!("/proc/self/fd/{fd}");
        let engine = engines.of(flavor);
        // SAFETY: the descriptor was inherited from the parent that started
        // this process, which wrote its own engine's `serialize` output to
        // it and sealed it against every change before the start; wasmtime
        // checks the engine compatibility key in the image it maps.
        let compiled = unsafe {
            match kind {
                ArtifactKind::Component => {
                    Compiled::Component(Component::deserialize_file(engine, &path)?)
                }
                ArtifactKind::Module => Compiled::Module(Module::deserialize_file(engine, &path)?),
            }
        };
        self.lock().insert((*sha, flavor), compiled);
        Ok(())
    }

    /// Whether the compiled form of the artifact hashing to `sha` is at
    /// hand, in memory or on disk (its seal is checked when it is loaded).
    pub(crate) fn holds(&self, sha: &[u8; 32]) -> bool {
        [Flavor::Sync, Flavor::Concurrent]
            .into_iter()
            .any(|flavor| {
                self.lock().contains_key(&(*sha, flavor))
                    || self.path(sha, flavor).is_some_and(|p| p.is_file())
            })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<([u8; 32], Flavor), Compiled>> {
        self.memory.lock().unwrap_or_else(|p| p.into_inner())
    }

    #[expect(
        unsafe_code,
        reason = "deserializing native code; only entries sealed by this home's key are read"
    )]
    fn load(
        &self,
        engine: &wasmtime::Engine,
        flavor: Flavor,
        path: &Path,
        sha: &[u8; 32],
        kind: ArtifactKind,
    ) -> wasmtime::Result<Compiled> {
        let opened = self
            .seal
            .open_entry(path, &self.context(sha, kind, flavor))?;
        // SAFETY: the engine seals only what its own `serialize` produced,
        // under this home's private key, over this artifact's hash and this
        // engine's compatibility key. `Unchanged` is mapped through the
        // descriptor whose file still has the identity that was sealed (not
        // the path again, which could since name another file); `Checked`
        // bytes were verified in memory.
        unsafe {
            Ok(match (opened, kind) {
                (Opened::Unchanged(_file, by_descriptor), ArtifactKind::Component) => {
                    Compiled::Component(Component::deserialize_file(engine, &by_descriptor)?)
                }
                (Opened::Unchanged(_file, by_descriptor), ArtifactKind::Module) => {
                    Compiled::Module(Module::deserialize_file(engine, &by_descriptor)?)
                }
                (Opened::Checked(bytes), ArtifactKind::Component) => {
                    Compiled::Component(Component::deserialize(engine, bytes)?)
                }
                (Opened::Checked(bytes), ArtifactKind::Module) => {
                    Compiled::Module(Module::deserialize(engine, bytes)?)
                }
            })
        }
    }

    /// Compiles `artifact` with this cache's compiler: here, or by the
    /// helper into the disk cache and then loaded from there.
    fn compile(
        &self,
        engines: &Engines,
        flavor: Flavor,
        artifact: &Artifact,
    ) -> wasmtime::Result<Compiled> {
        let _shown = self
            .watch
            .as_ref()
            .map(|watch| watch(artifact.bytes().len()));
        let Compiler::Helper(program) = &self.compiler else {
            return self.compile_here(engines.of(flavor), flavor, artifact);
        };
        if self.dir.is_none() {
            wasmtime::bail!(
                "this binary has no compiler, and without a disk cache its helper cannot hand code back"
            );
        }
        let kind = match artifact.kind() {
            ArtifactKind::Component => "component",
            ArtifactKind::Module => "core module",
        };
        let cache = self.dir.as_deref().and_then(Path::parent);
        compile_with_helper(program, &self.home, cache, artifact.bytes(), kind)
            .map_err(wasmtime::Error::msg)?;
        self.cached(engines, flavor, &artifact.sha256(), artifact.kind())
            .ok_or_else(|| {
                wasmtime::format_err!(
                    "the compile helper {} left no entry this engine can load",
                    program.display()
                )
            })
    }

    #[cfg(not(feature = "compile"))]
    fn compile_here(
        &self,
        _engine: &wasmtime::Engine,
        _flavor: Flavor,
        _artifact: &Artifact,
    ) -> wasmtime::Result<Compiled> {
        wasmtime::bail!("this binary was built without a compiler (the `compile` feature)")
    }

    #[cfg(feature = "compile")]
    fn compile_here(
        &self,
        engine: &wasmtime::Engine,
        flavor: Flavor,
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
        let sha = artifact.sha256();
        if let Some(path) = self.path(&sha, flavor)
            && let Err(e) =
                self.seal
                    .write_entry(&path, &self.context(&sha, artifact.kind(), flavor), &bytes)
        {
            tracing::warn!(path = %path.display(), error = %e, "could not write compile cache entry");
        }
        Ok(compiled)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_engine_key_names_architecture_and_os_but_not_the_c_library() {
        // A musl runner must load what a glibc `wbx` compiled into the same
        // home, so the key carries what wasmtime checks and nothing more.
        let target = format!(" {}-{} ", std::env::consts::ARCH, std::env::consts::OS);
        assert!(ENGINE_IDENTITY.contains(&target), "{ENGINE_IDENTITY}");
        for libc in ["gnu", "musl", "unknown"] {
            assert!(!ENGINE_IDENTITY.contains(libc), "{ENGINE_IDENTITY}");
        }
    }

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
