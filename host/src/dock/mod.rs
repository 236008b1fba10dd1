//! Docking: turning an artifact and a grant into something that can be
//! instantiated, or a refusal that names the capability.
//!
//! In order: resolve the grant (fail closed, done by [`crate::policy`]);
//! read the guest's top-level imports without instantiating anything;
//! refuse any `workbooks:host/*` import, any unknown import (all named), and
//! any import whose cap is not granted (naming the cap word, the interface
//! and the profile); compose the guest with the broker components serving
//! its granted engine imports; link exactly the granted caps
//! (`linker.rs` for components and `module.rs` for preview 1 core
//! modules, the only places that link); pre-instantiate. Compiled and
//! composed artifacts are cached by content hash, sealed with the home's
//! key (`seal.rs`), and docked results by (artifact, grant), so each
//! combination pays composition and compilation once.

mod compose;
pub mod imports;
mod linker;
pub(crate) mod module;
mod receipt;

pub use imports::{Need, Surface};
pub use receipt::{BrokerReceipt, ImportReceipt, Receipt};

use crate::artifact::{Artifact, ArtifactKind, CompileCache};
use crate::embedded::{self, Embedded};
use crate::policy::{Cap, CapSet, Grant, Profile};
use crate::seal::Seal;
use crate::state::StoreState;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use wasmtime::component::{InstancePre, Linker};
use wasmtime_wasi::p2::bindings::CommandPre;

/// Why a component cannot be docked.
#[derive(Debug, thiserror::Error)]
pub enum DockError {
    /// The artifact is a core module; only components dock.
    #[error("not a component: core wasm modules cannot be docked (build for wasm32-wasip2)")]
    NotAComponent,
    /// The component binary could not be read.
    #[error("unreadable component: {0}")]
    Unreadable(String),
    /// The guest imports a host primitive.
    #[error(
        "host primitive refused: {interface} (workbooks:host/* is reserved for the engine's own brokers)"
    )]
    HostPrimitive {
        /// The import.
        interface: String,
    },
    /// The guest imports interfaces the engine does not know.
    #[error("unknown imports refused: {}", names.join(", "))]
    UnknownImports {
        /// Every unknown import.
        names: Vec<String>,
    },
    /// The guest imports an interface whose cap is not granted.
    #[error("capability not granted: {cap} (import {interface}) under profile {profile}")]
    NotGranted {
        /// The cap word the import needs.
        cap: Cap,
        /// The import.
        interface: String,
        /// The effective profile.
        profile: Profile,
    },
    /// The cap is granted but this engine has no binding for the interface.
    #[error("capability {cap} is granted but {interface} is not served by this engine")]
    NotServed {
        /// The cap word.
        cap: Cap,
        /// The import.
        interface: String,
    },
    /// Composition with a broker failed.
    #[error("composing with brokers failed: {0}")]
    Compose(String),
    /// Compilation failed.
    #[error("compiling failed: {0}")]
    Compile(String),
    /// Linking failed after the pre-check passed (a host bug or a type
    /// mismatch in an import).
    #[error("linking failed: {0}")]
    Link(String),
}

/// A component docked under a grant, ready to instantiate.
pub struct Docked {
    pub(crate) pre: InstancePre<StoreState>,
    pub(crate) command: Option<CommandPre<StoreState>>,
    grant: Grant,
    receipt: Receipt,
    exports: Vec<String>,
}

impl std::fmt::Debug for Docked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Docked")
            .field("grant", &self.grant)
            .field("exports", &self.exports)
            .finish()
    }
}

impl Docked {
    /// The grant it was docked under.
    pub fn grant(&self) -> &Grant {
        &self.grant
    }

    /// What it was granted and linked with.
    pub fn receipt(&self) -> &Receipt {
        &self.receipt
    }

    /// The guest's top-level export names.
    pub fn exports(&self) -> &[String] {
        &self.exports
    }

    /// Whether it is a command (exports `wasi:cli/run`).
    pub fn is_command(&self) -> bool {
        self.command.is_some()
    }
}

/// One import of the guest and what it needs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ImportNeed {
    /// The import name.
    pub name: String,
    /// `base`, a cap word, `host-primitive` or `unknown`.
    pub needs: String,
}

/// What a component asks for, before any grant is applied.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Analysis {
    /// Every top-level import and what it needs.
    pub imports: Vec<ImportNeed>,
    /// Top-level exports.
    pub exports: Vec<String>,
    /// The caps its imports need.
    pub caps: CapSet,
    /// The profiles granting all of them, narrowest first (empty when an
    /// import can never be granted).
    pub granted_by: Vec<Profile>,
}

/// Notes for granted caps that bind nothing in the component lane: `posix`
/// by design, and caps whose interfaces this engine does not serve.
pub fn unbound_notes(caps: CapSet) -> Vec<String> {
    caps.iter()
        .filter(|c| !linker::SERVED.contains(*c))
        .map(|c| match c {
            Cap::Posix => "posix: binds nothing in the component lane".to_string(),
            other => format!("{other}: not served by this engine; importing it is refused"),
        })
        .collect()
}

/// Reads what a component asks for.
pub fn analyse(artifact: &Artifact) -> Result<Analysis, DockError> {
    let surface = surface(artifact)?;
    let mut caps = CapSet::EMPTY;
    let mut grantable = true;
    let imports = surface
        .imports
        .iter()
        .map(|name| {
            let needs = match imports::classify(name) {
                Need::Base => "base".to_string(),
                Need::Cap(c) => {
                    caps = caps.with(c);
                    c.word().to_string()
                }
                Need::HostPrimitive => {
                    grantable = false;
                    "host-primitive".to_string()
                }
                Need::Unknown => {
                    grantable = false;
                    "unknown".to_string()
                }
            };
            ImportNeed {
                name: name.clone(),
                needs,
            }
        })
        .collect();
    let granted_by = if grantable {
        Profile::granting(caps)
    } else {
        Vec::new()
    };
    Ok(Analysis {
        imports,
        exports: surface.exports,
        caps,
        granted_by,
    })
}

fn surface(artifact: &Artifact) -> Result<Surface, DockError> {
    if artifact.kind() == ArtifactKind::Module {
        return Err(DockError::NotAComponent);
    }
    imports::surface(artifact.bytes())
        .map_err(DockError::Unreadable)?
        .ok_or(DockError::NotAComponent)
}

/// A broker to compose in, with the guest-facing interface it serves.
type BrokerPlug = (&'static str, Embedded);

/// Docked results by (artifact sha256, grant).
type DockedCache = HashMap<([u8; 32], Grant), Arc<Docked>>;

/// Applies the pre-check to a guest's imports under a grant. Returns the
/// brokers to compose in and each import's receipt line.
fn check(
    surface: &Surface,
    grant: &Grant,
) -> Result<(Vec<BrokerPlug>, Vec<ImportReceipt>), DockError> {
    let classified: Vec<(&String, Need)> = surface
        .imports
        .iter()
        .map(|n| (n, imports::classify(n)))
        .collect();
    if let Some((name, _)) = classified
        .iter()
        .find(|(_, need)| *need == Need::HostPrimitive)
    {
        return Err(DockError::HostPrimitive {
            interface: (*name).clone(),
        });
    }
    let unknown: Vec<String> = classified
        .iter()
        .filter(|(_, need)| *need == Need::Unknown)
        .map(|(n, _)| (*n).clone())
        .collect();
    if !unknown.is_empty() {
        return Err(DockError::UnknownImports { names: unknown });
    }
    let mut brokers = Vec::new();
    let mut receipts = Vec::new();
    for (name, need) in classified {
        let (cap, served_by) = match need {
            Need::Base => ("base".to_string(), "host".to_string()),
            Need::Cap(c) => {
                if !grant.caps.contains(c) {
                    return Err(DockError::NotGranted {
                        cap: c,
                        interface: name.clone(),
                        profile: grant.profile.effective,
                    });
                }
                if !linker::SERVED.contains(c) {
                    return Err(DockError::NotServed {
                        cap: c,
                        interface: name.clone(),
                    });
                }
                let by = match embedded::broker_for(c) {
                    Some((iface, broker)) if same_interface(iface, name) => {
                        if !brokers.iter().any(|(i, _)| *i == iface) {
                            brokers.push((iface, broker));
                        }
                        format!("broker {}", broker.name)
                    }
                    _ => "host".to_string(),
                };
                (c.word().to_string(), by)
            }
            Need::HostPrimitive | Need::Unknown => unreachable!("refused above"),
        };
        receipts.push(ImportReceipt {
            name: name.clone(),
            cap,
            served_by,
        });
    }
    Ok((brokers, receipts))
}

/// Whether two `pkg/iface@x.y.z` names are the same interface at
/// semver-compatible versions (same major, or same minor below 1.0).
fn same_interface(a: &str, b: &str) -> bool {
    let key = |s: &str| {
        let (path, v) = s.split_once('@').unwrap_or((s, ""));
        let mut parts = v.split('.');
        let major = parts.next().unwrap_or("");
        let minor = parts.next().unwrap_or("");
        if major == "0" {
            format!("{path}@0.{minor}")
        } else {
            format!("{path}@{major}")
        }
    };
    key(a) == key(b)
}

/// Docks artifacts, caching every expensive step.
pub(crate) struct Docker {
    compiled: CompileCache,
    seal: Seal,
    composed_dir: Option<PathBuf>,
    linkers: Mutex<HashMap<CapSet, Linker<StoreState>>>,
    docked: Mutex<DockedCache>,
    modules: module::ModuleDocks,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The value cached in `map` under `key`, made by `make` on a miss. Two
/// callers may both make it; either result is the same.
fn cached<K: Eq + std::hash::Hash, V: Clone, E>(
    map: &Mutex<HashMap<K, V>>,
    key: K,
    make: impl FnOnce() -> Result<V, E>,
) -> Result<V, E> {
    if let Some(v) = lock(map).get(&key) {
        return Ok(v.clone());
    }
    let v = make()?;
    lock(map).insert(key, v.clone());
    Ok(v)
}

impl Docker {
    /// A docker whose caches live under `cache_dir` when given, their
    /// entries sealed with `seal`.
    pub(crate) fn new(engine: &wasmtime::Engine, cache_dir: Option<PathBuf>, seal: Seal) -> Self {
        Self {
            compiled: CompileCache::new(
                engine,
                cache_dir.as_ref().map(|d| d.join("compiled")),
                seal.clone(),
            ),
            seal,
            composed_dir: cache_dir.map(|d| d.join("composed")),
            linkers: Mutex::new(HashMap::new()),
            docked: Mutex::new(HashMap::new()),
            modules: module::ModuleDocks::default(),
        }
    }

    /// The core-module docks.
    pub(crate) fn modules(&self) -> &module::ModuleDocks {
        &self.modules
    }

    /// The compile cache.
    pub(crate) fn compiled(&self) -> &CompileCache {
        &self.compiled
    }

    /// Docks `artifact` under `grant`.
    pub(crate) fn dock(
        &self,
        engine: &wasmtime::Engine,
        artifact: &Artifact,
        grant: &Grant,
    ) -> Result<Arc<Docked>, DockError> {
        cached(&self.docked, (artifact.sha256(), grant.clone()), || {
            self.dock_uncached(engine, artifact, grant)
        })
    }

    /// Docks `artifact` under `grant`, every step but the last cache.
    fn dock_uncached(
        &self,
        engine: &wasmtime::Engine,
        artifact: &Artifact,
        grant: &Grant,
    ) -> Result<Arc<Docked>, DockError> {
        let surface = surface(artifact)?;
        let (brokers, imports) = check(&surface, grant)?;
        let composed = if brokers.is_empty() {
            None
        } else {
            Some(self.compose(artifact, &brokers)?)
        };
        let final_artifact = composed.as_ref().unwrap_or(artifact);
        let linked = imports::surface(final_artifact.bytes())
            .map_err(DockError::Compose)?
            .map(|s| s.imports)
            .unwrap_or_default();
        let component = self
            .compiled
            .component(engine, final_artifact)
            .map_err(|e| DockError::Compile(format!("{e:#}")))?;
        let linker = self.linker(engine, grant.caps)?;
        let pre = linker
            .instantiate_pre(&component)
            .map_err(|e| DockError::Link(format!("{e:#}")))?;
        let command = surface
            .exports
            .iter()
            .any(|e| e.starts_with("wasi:cli/run@0.2"))
            .then(|| CommandPre::new(pre.clone()).ok())
            .flatten();
        let receipt = Receipt {
            profile_requested: grant.profile.requested.clone(),
            profile_effective: grant.profile.effective,
            caps: grant.caps,
            imports,
            linked,
            brokers: brokers
                .iter()
                .map(|(iface, b)| BrokerReceipt {
                    name: b.name.to_string(),
                    serves: iface.to_string(),
                    sha256: hex::encode(b.sha256),
                })
                .collect(),
            artifact_sha256: artifact.sha256_hex(),
            composed_sha256: composed.as_ref().map(Artifact::sha256_hex),
            signer: None,
        };
        Ok(Arc::new(Docked {
            pre,
            command,
            grant: grant.clone(),
            receipt,
            exports: surface.exports,
        }))
    }

    fn linker(
        &self,
        engine: &wasmtime::Engine,
        caps: CapSet,
    ) -> Result<Linker<StoreState>, DockError> {
        cached(&self.linkers, caps, || {
            linker::link(engine, caps).map_err(|e| DockError::Link(format!("{e:#}")))
        })
    }

    /// The guest composed with `brokers`, from the on-disk cache when there.
    fn compose(&self, guest: &Artifact, brokers: &[BrokerPlug]) -> Result<Artifact, DockError> {
        let mut h = Sha256::new();
        h.update(guest.sha256());
        for (_, b) in brokers {
            h.update(b.sha256);
        }
        let key = hex::encode(h.finalize());
        let context = format!("composed:{key}").into_bytes();
        let path = self
            .composed_dir
            .as_ref()
            .map(|d| d.join(format!("{key}.wasm")));
        if let Some(sealed) = path.as_ref().and_then(|p| std::fs::read(p).ok()) {
            match self.seal.unseal(&context, &sealed) {
                Some(bytes) => {
                    return Ok(Artifact::trusted(bytes.to_vec(), ArtifactKind::Component));
                }
                None => tracing::warn!(key, "discarding a composition whose seal does not match"),
            }
        }
        let plugs: Vec<compose::Plug<'_>> = brokers
            .iter()
            .map(|(_, b)| compose::Plug {
                name: b.name,
                bytes: b.bytes,
            })
            .collect();
        let bytes = compose::plug(guest.bytes(), &plugs).map_err(DockError::Compose)?;
        if let Some(path) = &path
            && let Some(sealed) = self.seal.seal(&context, &bytes)
            && let Err(e) = crate::files::write_atomic(path, &sealed)
        {
            tracing::warn!(path = %path.display(), error = %e, "could not cache composition");
        }
        Ok(Artifact::trusted(bytes, ArtifactKind::Component))
    }
}

#[cfg(test)]
mod tests {
    use super::same_interface;

    #[test]
    fn interfaces_match_across_compatible_versions_only() {
        assert!(same_interface(
            "workbooks:engine/kv@0.1.0",
            "workbooks:engine/kv@0.1.7"
        ));
        assert!(!same_interface(
            "workbooks:engine/kv@0.1.0",
            "workbooks:engine/kv@0.2.0"
        ));
        assert!(!same_interface(
            "workbooks:engine/kv@0.1.0",
            "workbooks:engine/vfs@0.1.0"
        ));
    }
}
