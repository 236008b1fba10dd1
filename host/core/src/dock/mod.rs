//! Docking: turning an artifact and a grant into something that can be
//! instantiated, or a refusal that names the capability.
//!
//! In order: resolve the grant (fail closed, done by [`crate::policy`]);
//! read the guest's top-level imports without instantiating anything;
//! refuse any `workbooks:host/*` import, any unknown import (all named), and
//! any import whose cap is not granted and no stub serves (naming the cap
//! word, the interface, the profile and the profiles that grant it:
//! `precheck.rs`); compose the guest with the broker components serving
//! its granted engine imports and the deny brokers of its stubs
//! (`deny.rs`); link exactly the granted caps
//! (`linker.rs` for components and `module.rs` for preview 1 core
//! modules, the only places that link); pre-instantiate. Compiled and
//! composed artifacts are cached by content hash, sealed with the home's
//! key (`seal.rs`), and docked results by (artifact, grant), so each
//! combination pays composition and compilation once.

pub mod brokers;
mod compose;
mod composed;
pub(crate) mod deny;
mod extension;
pub mod handoff;
pub mod imports;
mod linker;
pub(crate) mod module;
mod precheck;
mod receipt;

pub use brokers::BrokerError;
pub use extension::{Extension, ExtensionLink};
pub use imports::{Need, Role, Surface};
pub use receipt::{BrokerReceipt, ImportReceipt, Receipt};

use crate::artifact::{Artifact, ArtifactKind, CompileCache};
use crate::compiler::Compiler;
use crate::flavor::{Engines, Flavor};
use crate::policy::{Cap, CapSet, Grant, Profile, Stubs};
use crate::seal::Seal;
use crate::state::{ModuleState, StoreState};
use composed::Compositions;
use precheck::{check, recheck};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use wasmtime::component::{InstancePre, Linker};
use wasmtime_wasi::p2::bindings::CommandPre;

/// Import names, each followed by why its WASI version is not served
/// where that says more than "unknown".
fn with_reasons(names: &[String]) -> String {
    let named: Vec<String> = names
        .iter()
        .map(|n| match imports::unserved_version(n) {
            Some(why) => format!("{n} ({why})"),
            None => n.clone(),
        })
        .collect();
    named.join(", ")
}

/// Why a component cannot be docked.
#[derive(Debug, thiserror::Error)]
pub enum DockError {
    /// A core module asked for a role only components have (serving, a
    /// long-lived instance): a module runs only as a command.
    #[error(
        "not a component: a core wasm module runs only as a command (`wbx exec`); serving and instances need a component (build for wasm32-wasip2)"
    )]
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
    #[error("unknown imports refused: {}", with_reasons(names))]
    UnknownImports {
        /// Every unknown import.
        names: Vec<String>,
    },
    /// The guest imports an interface whose cap is not granted.
    #[error("capability not granted: {cap} (import {interface}) under profile {profile}{remedy}")]
    NotGranted {
        /// The cap word the import needs.
        cap: Cap,
        /// The import.
        interface: String,
        /// The effective profile.
        profile: Profile,
        /// What would let it dock, for people: the profiles granting the
        /// cap and, for a family with a deny broker, the stub
        /// (`; granted by network, posix; or --stub wasi:sockets`).
        remedy: String,
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
    /// The composition imports something its grant does not cover (a
    /// broker reaching past its cap); nothing was linked.
    #[error("composition refused: it imports {interface}, which {why}")]
    ComposedImport {
        /// The import of the composed artifact.
        interface: String,
        /// Why it may not be linked.
        why: String,
    },
    /// Compilation failed.
    #[error("compiling failed: {0}")]
    Compile(String),
    /// Linking failed after the pre-check passed (a host bug or a type
    /// mismatch in an import).
    #[error("linking failed: {0}")]
    Link(String),
}

/// A component or a preview 1 core module docked under a grant, ready to
/// instantiate.
pub struct Docked {
    pub(crate) guest: Guest,
    grant: Grant,
    receipt: Receipt,
    exports: Vec<String>,
    /// The wasmtime engine it was compiled for.
    pub(crate) flavor: Flavor,
    /// Its code and guest as handed to children, made on first use.
    pub(crate) sealed: std::sync::OnceLock<Arc<handoff::Sealed>>,
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

    /// Whether it is a command (a component exporting `wasi:cli/run`, or a
    /// core module exporting `_start`).
    pub fn is_command(&self) -> bool {
        match &self.guest {
            Guest::Component { command, .. } => command.is_some(),
            Guest::Module { command, .. } => *command,
        }
    }

    /// The component's pre-instance (`None` for a core module).
    pub(crate) fn component(&self) -> Option<&InstancePre<StoreState>> {
        match &self.guest {
            Guest::Component { pre, .. } => Some(pre),
            Guest::Module { .. } => None,
        }
    }
}

/// What was docked: a component or a core module.
pub(crate) enum Guest {
    /// A component, and its `wasi:cli/run` when it is a command.
    Component {
        pre: InstancePre<StoreState>,
        command: Option<Cli>,
    },
    /// A preview 1 core module, and whether it exports `_start`.
    Module {
        pre: wasmtime::InstancePre<ModuleState>,
        command: bool,
    },
}

/// The `wasi:cli/run` a component exports, at the WASI version it was
/// built for.
pub(crate) enum Cli {
    /// `wasi:cli/run@0.2.x`: a synchronous `run`.
    Wasi02(CommandPre<StoreState>),
    /// `wasi:cli/run@0.3.0`: an async `run`, driven by the store's event
    /// loop.
    Wasi03,
}

impl Cli {
    /// The command a component with these exports is, if any.
    fn of(exports: &[String], pre: &InstancePre<StoreState>) -> Option<Self> {
        if exports.iter().any(|e| e == "wasi:cli/run@0.3.0") {
            return Some(Cli::Wasi03);
        }
        exports
            .iter()
            .any(|e| e.starts_with("wasi:cli/run@0.2"))
            .then(|| CommandPre::new(pre.clone()).ok().map(Cli::Wasi02))
            .flatten()
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

/// Notes for granted caps that bind nothing in the component role: `posix`
/// by design, and caps whose interfaces this engine does not serve.
pub fn unbound_notes(caps: CapSet) -> Vec<String> {
    caps.iter()
        .filter(|c| !linker::served().contains(*c))
        .map(|c| match c {
            Cap::Posix => "posix: binds nothing in the component lane".to_string(),
            other => format!("{other}: not served by this engine; importing it is refused"),
        })
        .collect()
}

/// Reads what a component or a core module asks for.
pub fn analyse(artifact: &Artifact) -> Result<Analysis, DockError> {
    let surface = if artifact.kind() == ArtifactKind::Module {
        module::surface(artifact.bytes()).map_err(DockError::Unreadable)?
    } else {
        surface(artifact)?
    };
    let need_of = |name: &str| match artifact.kind() {
        ArtifactKind::Module => {
            let (m, n) = name.split_once('.').unwrap_or((name, ""));
            module::classify(m, n)
        }
        _ => imports::classify(name),
    };
    let mut caps = CapSet::EMPTY;
    let mut grantable = true;
    let imports = surface
        .imports
        .iter()
        .map(|name| {
            let needs = match need_of(name) {
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

/// The engine flavor a component with this surface runs on.
fn flavor_of(surface: &Surface) -> Flavor {
    if surface.concurrent {
        Flavor::Concurrent
    } else {
        Flavor::Sync
    }
}

fn surface(artifact: &Artifact) -> Result<Surface, DockError> {
    imports::surface(artifact.bytes())
        .map_err(DockError::Unreadable)?
        .ok_or(DockError::NotAComponent)
}

/// Docked results by (artifact sha256, grant, role).
type DockedCache = HashMap<([u8; 32], Grant, Role), Arc<Docked>>;

/// Docks artifacts, caching every expensive step.
pub(crate) struct Docker {
    compiled: CompileCache,
    compositions: Compositions,
    brokers: brokers::Brokers,
    stubs: Stubs,
    linkers: Mutex<HashMap<(Flavor, CapSet, Role, Stubs), SharedLinker>>,
    docked: Mutex<DockedCache>,
    modules: module::ModuleDocks,
}

/// A linker per grant shape, shared rather than cloned: a linker holds an
/// entry for every host function.
type SharedLinker = Arc<Linker<StoreState>>;

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
    /// entries sealed with `seal`, compiled by `compiler` for `home` (each
    /// compile shown to its watch),
    /// composing guests with `brokers`, serving the families of `stubs`
    /// with their deny brokers wherever a grant lacks their cap.
    pub(crate) fn new(
        cache_dir: Option<PathBuf>,
        seal: Seal,
        compiler: (Compiler, Option<crate::compiler::CompileWatch>),
        home: &Path,
        brokers: brokers::Brokers,
        stubs: Stubs,
    ) -> Self {
        Self {
            compiled: CompileCache::new(
                cache_dir.as_ref().map(|d| d.join("compiled")),
                seal.clone(),
                compiler,
                home,
            ),
            compositions: Compositions::new(cache_dir.as_deref(), seal),
            brokers,
            stubs,
            linkers: Mutex::new(HashMap::new()),
            docked: Mutex::new(HashMap::new()),
            modules: module::ModuleDocks::default(),
        }
    }

    /// Compiles `artifact` (a component or a core module) into the cache,
    /// unless it is there already.
    pub(crate) fn precompile(
        &self,
        engines: &Engines,
        artifact: &Artifact,
    ) -> Result<(), DockError> {
        if artifact.kind() == ArtifactKind::Module {
            return self.module(engines, artifact).map(|_| ());
        }
        self.compile(engines, flavor_of(&surface(artifact)?), artifact)
            .map(|_| ())
    }

    /// The compiled form of a core module `artifact`, from the cache or
    /// compiled into it (kernels: no linking, no composition).
    pub(crate) fn module(
        &self,
        engines: &Engines,
        artifact: &Artifact,
    ) -> Result<wasmtime::Module, DockError> {
        self.compiled
            .module(engines, artifact)
            .map_err(|e| DockError::Compile(format!("{e:#}")))
    }

    /// Takes over what a parent process handed: its compiled code, and
    /// the composition it came from, so docking that guest here composes
    /// and compiles nothing.
    pub(crate) fn take_handoff(
        &self,
        engines: &Engines,
        handoff: &handoff::Handoff,
    ) -> Result<(), DockError> {
        let sha = handoff::compiled_sha(handoff)
            .ok_or_else(|| DockError::Compile(format!("not a sha256: {}", handoff.compiled)))?;
        self.compiled
            .hand(
                engines,
                handoff::flavor(handoff),
                &sha,
                handoff::kind(handoff),
                handoff.fd,
            )
            .map_err(|e| DockError::Compile(format!("the handed code: {e:#}")))?;
        if let Some(c) = &handoff.composition {
            self.compositions.hand(&c.key, handoff::handed_index(c));
        }
        Ok(())
    }

    /// Whether the compiled form of the artifact hashing to `sha` is at
    /// hand (so the artifact was validated when it was compiled).
    pub(crate) fn holds_compiled(&self, sha: &[u8; 32]) -> bool {
        self.compiled.holds(sha)
    }

    /// The families served by deny brokers in every docking.
    pub(crate) fn stubs(&self) -> Stubs {
        self.stubs
    }

    /// The brokers an embedder replaced, with their components.
    pub(crate) fn replaced_brokers(&self) -> impl Iterator<Item = (Cap, &Artifact)> {
        self.brokers.replaced()
    }

    /// Docks `artifact` under `grant` in `role`: a component, or a
    /// preview 1 core module (in the call role only: a module runs only as
    /// a command).
    pub(crate) fn dock(
        &self,
        engines: &Engines,
        artifact: &Artifact,
        grant: &Grant,
        role: Role,
    ) -> Result<Arc<Docked>, DockError> {
        if artifact.kind() == ArtifactKind::Module {
            if role != Role::Call {
                return Err(DockError::NotAComponent);
            }
            return self.modules.dock(engines, &self.compiled, artifact, grant);
        }
        let grant = &grant.clone().with_stubs(self.stubs);
        cached(
            &self.docked,
            (artifact.sha256(), grant.clone(), role),
            || self.dock_uncached(engines, artifact, grant, role),
        )
    }

    /// Docks `artifact` under `grant`, every step but the last cache.
    fn dock_uncached(
        &self,
        engines: &Engines,
        artifact: &Artifact,
        grant: &Grant,
        role: Role,
    ) -> Result<Arc<Docked>, DockError> {
        let surface = surface(artifact)?;
        let (brokers, imports) = check(&surface, grant, role, &self.brokers)?;
        let flavor = flavor_of(&surface);
        let (component, linked, composed_sha256) = if brokers.is_empty() {
            let linked = surface.imports.clone();
            recheck(&linked, grant, role, &brokers, &self.brokers)?;
            (self.compile(engines, flavor, artifact)?, linked, None)
        } else {
            self.composed(engines, flavor, artifact, &brokers, grant, role)?
        };
        let flavor = engines.flavor_of(component.engine());
        let linker = self.linker(engines, flavor, grant.caps, role, grant.stubs)?;
        let pre = linker
            .instantiate_pre(&component)
            .map_err(|e| DockError::Link(format!("{e:#}")))?;
        let command = Cli::of(&surface.exports, &pre);
        let receipt = Receipt {
            profile_requested: grant.profile.requested.clone(),
            profile_effective: grant.profile.effective,
            caps: grant.caps,
            imports,
            linked,
            brokers: brokers
                .iter()
                .map(|b| BrokerReceipt {
                    name: b.name.clone(),
                    serves: b.serves.to_string(),
                    sha256: b.artifact.sha256_hex(),
                    replaced: b.replaced,
                })
                .collect(),
            artifact_sha256: artifact.sha256_hex(),
            composed_sha256,
            signer: None,
        };
        Ok(Arc::new(Docked {
            guest: Guest::Component { pre, command },
            grant: grant.clone(),
            receipt,
            exports: surface.exports,
            flavor,
            sealed: Default::default(),
        }))
    }

    fn linker(
        &self,
        engines: &Engines,
        flavor: Flavor,
        caps: CapSet,
        role: Role,
        stubs: Stubs,
    ) -> Result<SharedLinker, DockError> {
        cached(&self.linkers, (flavor, caps, role, stubs), || {
            linker::link(engines.of(flavor), flavor, caps, role, stubs)
                .map(Arc::new)
                .map_err(|e| DockError::Link(format!("{e:#}")))
        })
    }

    /// Compiles a component for the engine of `flavor`; one the sync
    /// engine refuses for its use of the async ABI (nested deeper than the
    /// outermost sections show) is compiled for the concurrent one.
    fn compile(
        &self,
        engines: &Engines,
        flavor: Flavor,
        artifact: &Artifact,
    ) -> Result<wasmtime::component::Component, DockError> {
        self.compiled
            .component(engines, flavor, artifact)
            .or_else(|e| {
                let needs_async = format!("{e:#}").contains("component model async");
                if flavor == Flavor::Sync && needs_async {
                    self.compiled
                        .component(engines, Flavor::Concurrent, artifact)
                } else {
                    Err(e)
                }
            })
            .map_err(|e| DockError::Compile(format!("{e:#}")))
    }

    /// The guest composed with `brokers`, compiled, with what it imports
    /// (checked against `grant`) and its sha256 in hex. From the cached
    /// index and compiled form when both are there, without touching the
    /// composed bytes; otherwise composed (or read back), parsed, compiled
    /// and indexed.
    fn composed(
        &self,
        engines: &Engines,
        flavor: Flavor,
        guest: &Artifact,
        brokers: &[&brokers::Broker],
        grant: &Grant,
        role: Role,
    ) -> Result<(wasmtime::component::Component, Vec<String>, Option<String>), DockError> {
        let key = Compositions::key_of(guest, brokers);
        let indexed = self.compositions.index(&key).and_then(|index| {
            let compiled = self
                .compiled
                .cached_component(engines, flavor, &index.hash()?)?;
            Some((index, compiled))
        });
        if let Some((index, component)) = indexed {
            recheck(&index.linked, grant, role, brokers, &self.brokers)?;
            return Ok((component, index.linked, Some(index.sha256)));
        }
        let composed = self.compositions.compose(&key, guest, brokers)?;
        let linked = imports::surface(composed.bytes())
            .map_err(DockError::Compose)?
            .map(|s| s.imports)
            .unwrap_or_default();
        recheck(&linked, grant, role, brokers, &self.brokers)?;
        let component = self.compile(engines, flavor, &composed)?;
        let index = composed::Index {
            sha256: composed.sha256_hex(),
            linked,
        };
        self.compositions.write_index(&key, &index);
        Ok((component, index.linked, Some(index.sha256)))
    }
}

#[cfg(test)]
mod tests {
    use super::composed::key as composition_key;

    #[test]
    fn a_new_composer_or_another_broker_never_reads_an_old_composition() {
        let (guest, kv, other) = ([1; 32], [2; 32], [3; 32]);
        let now = composition_key(super::compose::COMPOSER, &guest, &[kv]);
        assert!(super::compose::COMPOSER.starts_with("wac-graph 0."));
        assert_eq!(
            now,
            composition_key(super::compose::COMPOSER, &guest, &[kv])
        );
        for (what, key) in [
            (
                "composer",
                composition_key("wac-graph 99.0.0", &guest, &[kv]),
            ),
            (
                "broker",
                composition_key(super::compose::COMPOSER, &guest, &[other]),
            ),
            (
                "brokers",
                composition_key(super::compose::COMPOSER, &guest, &[kv, other]),
            ),
            (
                "guest",
                composition_key(super::compose::COMPOSER, &other, &[kv]),
            ),
        ] {
            assert_ne!(key, now, "another {what} reads the same composition");
        }
    }
}
