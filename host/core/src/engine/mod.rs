//! The engine: its wasmtime engines (with epoch interruption, fuel and,
//! by default, the pooling allocator; a sync one for WASI 0.2 components
//! and core modules, and a concurrent one, built on first use, for WASI
//! 0.3 components: [`crate::flavor`]), the epoch ticker, the docker with
//! its caches, and the lazily opened storage under `<home>`.
//!
//! `<home>` is the user's (`$XDG_DATA_HOME/workbooks`) unless the builder
//! or `WB_HOME` says otherwise ([`workbooks_wire::home`]). It holds the
//! registry, the keys and the sled database (`db/`), which is opened only
//! when a session first needs a storage-backed cap, so commands that use
//! none never contend for it. The compile and composition caches live in
//! the cache directory (the user's `$XDG_CACHE_HOME/workbooks` for the
//! user's home, `<home>/cache` for another).
//!
//! The engine sits on top: it builds stores ([`crate::state`]), docks
//! ([`crate::dock`]) and runs commands ([`launch`], the [`Launcher`] the
//! `launch` primitive calls). Nothing below imports it.

mod builder;
mod call_on;
mod commands;
mod container;
mod fan;
mod feed_pipe;
mod launch;
mod module_lane;
mod os_process;
pub(crate) use os_process::CHILD_GRACE;
mod pipeline;
mod plugin_child;
pub(crate) mod relay;
mod remote;
pub mod run;
pub mod shell;
mod upkeep;
mod warm;

pub use builder::EngineBuilder;
pub use call_on::{CallFuture, CallOnError, Called};
pub use commands::Commands;
pub use fan::Fan;
pub use remote::Admitted;
pub use upkeep::Freed;
pub use warm::{Shipped, WarmError, Warmed};

use crate::artifact::{Artifact, ArtifactError};
use crate::cadence::Cadence;
use crate::cap::launch::Launcher;
use crate::cap::secrets::keyring::Keyring;
use crate::commands::Registry;
use crate::commands::ladder::{Ladder, Slots};
use crate::dock::{DockError, Docked, Docker, Receipt, Role};
use crate::egress::{HttpClient, NetAccess};
use crate::limits::EpochTicker;
use crate::policy::{Cap, Grant};
use crate::state::{
    Captured, ModuleState, SessionError, SessionOptions, StoreHost, StoreState, new_module_store,
    new_store,
};
use crate::storage::{Storage, StorageError, StorageSlot};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use wasmtime::Store;

/// Bytes of each linear memory reset in place (pagemap scan) on reuse.
const POOL_MEMORY_KEEP_RESIDENT: usize = 2 << 20;
/// Bytes of each table reset in place on reuse.
const POOL_TABLE_KEEP_RESIDENT: usize = 64 << 10;

/// The file in the user's state directory holding the key that seals
/// every home's caches (see [`crate::seal`]).
pub const CACHE_KEY_FILE: &str = "cache.key";

/// Calls through the cadence per tenant per window, by default.
const RATE_LIMIT_CALLS: u64 = 120_000;
/// The rate limiter's window.
const RATE_LIMIT_WINDOW: Duration = Duration::from_secs(60);

/// What identifies this build to another process of it: the version, the
/// compile cache's engine key and the hash of every shipped component. A
/// `wbx daemon` serves only clients of the same build.
pub fn build_id() -> &'static str {
    crate::embedded::build_id()
}

/// The home used when none is configured: `$WB_HOME`, else the user's
/// (one rule for the engine and for the thin client `wb`, which links none
/// of it; see [`workbooks_wire::home`]).
pub use workbooks_wire::default_home;

/// Why an engine could not be built.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// Wasmtime refused the configuration.
    #[error("engine configuration refused: {0}")]
    Config(String),
    /// The operator's TLS roots file is unusable.
    #[error("{0}")]
    TlsRoots(String),
    /// The epoch ticker thread could not start.
    #[error("cannot start the epoch ticker: {0}")]
    Ticker(std::io::Error),
    /// A replacement broker was refused.
    #[error(transparent)]
    Broker(#[from] crate::dock::BrokerError),
    /// In-process compiling was asked of a build without a compiler.
    #[error("this build has no compiler (the `compile` feature): use a compile helper")]
    NoCompiler,
    /// The code a parent process handed over could not be taken.
    #[error("handoff: {0}")]
    Handoff(crate::dock::DockError),
    /// The home, or its cache, is another user's.
    #[error(
        "{} belongs to uid {owner}, not to you (uid {me}): nothing in it is yours to trust; use a home of your own (--home DIR or WB_HOME), or take this one over (chown -R)",
        path.display()
    )]
    ForeignHome {
        /// The home or its `cache/`.
        path: PathBuf,
        /// Its owner.
        owner: u32,
        /// This process's user.
        me: u32,
    },
    /// The home, or its cache, is not a directory.
    #[error(
        "{} is not a directory: a home and its cache are folders (name another with --home DIR or WB_HOME)",
        path.display()
    )]
    NotAFolder {
        /// The home or its cache.
        path: PathBuf,
    },
    /// The home, or something in it, may be written by other users.
    #[error(
        "{} may be written by other users (mode {mode:o}): whoever can write a home can plant code it runs; chmod go-w {} (or use a home of your own)",
        path.display(),
        path.display()
    )]
    OpenHome {
        /// The home or the entry in it.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
}

/// The plugin host. Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

struct Inner {
    /// The sync and the concurrent wasmtime engine (`crate::flavor`).
    wasmtime: crate::flavor::Engines,
    home: PathBuf,
    /// The parts of the home services share with their guests.
    home_shares: crate::preopen::HomeShares,
    /// Where compiled and composed artifacts are cached, when on-disk
    /// caches are on.
    cache_dir: Option<PathBuf>,
    /// The user's state directory holding the sealing key, when on-disk
    /// caches are on.
    state_dir: Option<PathBuf>,
    docker: Docker,
    /// Where storage, signing and launch calls go, in a relayed engine.
    relay: Option<Arc<dyn crate::cap::relay::Relay>>,
    storage: Arc<StorageSlot>,
    cadence: Arc<Cadence>,
    /// The home's grants, read again as they change.
    grants: Arc<crate::grants::GrantBook>,
    /// The descriptors each tenant's stores hold.
    descriptors: Arc<crate::cadence::Descriptors>,
    registry: Registry,
    kernels: Registry,
    command_slots: Arc<Slots>,
    process_slots: Arc<Slots>,
    child: Option<PathBuf>,
    /// Guests' egress: the floor with the guests' exceptions (`net_allow`).
    http: Arc<HttpClient>,
    /// The operator's own egress (registries, catalog downloads): the
    /// floor with the operator's exceptions (`operator_allow`), which no
    /// guest request ever goes through.
    operator_http: Arc<HttpClient>,
    llm: Option<Arc<crate::cap::llm::LlmService>>,
    /// The TLS roots every client of this engine trusts.
    tls: crate::egress::tls::LazyTls,
    keyring: Arc<Keyring>,
    net_max_body: usize,
    net_timeout: Duration,
    max_memory: usize,
    /// The components services ship, compiled by [`Engine::warm`] too.
    shipped: Vec<&'static warm::Shipped>,
    _ticker: EpochTicker,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("home", &self.inner.home)
            .finish()
    }
}

impl Engine {
    /// A builder with the defaults.
    pub fn builder() -> EngineBuilder {
        EngineBuilder::default()
    }

    /// The home directory.
    pub fn home(&self) -> &Path {
        &self.inner.home
    }

    /// Lets the preopens of this engine's sessions show guests the parts
    /// of the home that match `pattern`: names under the home, `*` for any
    /// one name. Every other part of the home stays refused to a preopen
    /// (it holds every tenant's database, the compiled code and the keys).
    /// A service shares what it made for its guests, as the agent service
    /// shares its runs' working dirs:
    ///
    /// ```no_run
    /// # let engine = workbooks::Engine::builder().build()?;
    /// engine.share_home("runs/*/*/workdir")?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// A pattern that is not relative names (`..`, a leading `/`) is
    /// refused. Host code alone calls this; no guest reaches it.
    pub fn share_home(&self, pattern: &str) -> Result<(), crate::preopen::PreopenError> {
        self.inner.home_shares.add(pattern)
    }

    /// The patterns [`Engine::share_home`] added, in order.
    pub fn home_shares(&self) -> Vec<String> {
        self.inner.home_shares.patterns()
    }

    /// The directory of this engine's compile and composition caches;
    /// `None` when on-disk caches are off.
    pub fn cache_dir(&self) -> Option<&Path> {
        self.inner.cache_dir.as_deref()
    }

    /// Where a child or a helper finds what this engine cached: the cache
    /// directory, else `<home>/cache`.
    pub(crate) fn cache_root(&self) -> PathBuf {
        self.inner
            .cache_dir
            .clone()
            .unwrap_or_else(|| self.inner.home.join("cache"))
    }

    /// The state directory holding the key that seals this engine's
    /// caches; `None` when on-disk caches are off.
    pub fn state_dir(&self) -> Option<&Path> {
        self.inner.state_dir.as_deref()
    }

    /// The engine's database, opened on first use.
    pub fn storage(&self) -> Result<Storage, StorageError> {
        self.inner.storage.get()
    }

    /// Reads an artifact from `path` for this engine. Its bytes are
    /// validated unless their compiled form is already in this engine's
    /// cache (they were validated then, and the entry is sealed over their
    /// hash): a large program that ran before starts without a second
    /// validation pass.
    pub fn load_artifact(&self, path: impl AsRef<Path>) -> Result<Artifact, ArtifactError> {
        let artifact = Artifact::read_unvalidated(path.as_ref())?;
        if !self.inner.docker.holds_compiled(&artifact.sha256()) {
            artifact.validate()?;
        }
        Ok(artifact)
    }

    /// Whether `artifact`'s compiled form is in this engine's cache (so
    /// docking it compiles nothing, unless brokers are composed in).
    pub fn is_compiled(&self, artifact: &Artifact) -> bool {
        self.inner.docker.holds_compiled(&artifact.sha256())
    }

    /// Compiles `artifact` (a component or a core module) into this
    /// engine's compile cache, unless its compiled form is there already:
    /// what `wbx precompile` does, and what a build without a compiler asks
    /// of its helper.
    pub fn precompile(&self, artifact: &Artifact) -> Result<(), DockError> {
        self.inner.docker.precompile(&self.inner.wasmtime, artifact)
    }

    /// Docks `artifact` under `grant`: the import pre-check, composition
    /// with brokers, linking and pre-instantiation, all cached.
    pub fn dock(&self, artifact: &Artifact, grant: &Grant) -> Result<Arc<Docked>, DockError> {
        self.dock_on(artifact, grant, Role::Call)
    }

    /// Docks `artifact` under `grant` in `role` (a served HTTP handler
    /// gets the `wasi:http/types` values without `net`).
    pub fn dock_on(
        &self,
        artifact: &Artifact,
        grant: &Grant,
        role: Role,
    ) -> Result<Arc<Docked>, DockError> {
        self.inner
            .docker
            .dock(&self.inner.wasmtime, artifact, grant, role)
    }

    /// What `artifact` would dock with under `grant` (a component or a
    /// core module): every import, its cap, what serves it and what the
    /// host linked. Refused exactly as running it would be.
    pub fn receipt(&self, artifact: &Artifact, grant: &Grant) -> Result<Receipt, DockError> {
        Ok(self.dock(artifact, grant)?.receipt().clone())
    }

    /// The WASI families this engine serves with deny brokers wherever a
    /// grant lacks their cap ([`EngineBuilder::stub`]).
    pub fn stubs(&self) -> crate::policy::Stubs {
        self.inner.docker.stubs()
    }

    /// The brokers an embedder replaced, each written once to
    /// `<cache>/brokers/<sha256>.wasm` so a child `wbx` can load it.
    pub(crate) fn replaced_broker_files(&self) -> std::io::Result<Vec<(Cap, PathBuf)>> {
        let dir = self.cache_root().join("brokers");
        let mut files = Vec::new();
        for (cap, artifact) in self.inner.docker.replaced_brokers() {
            let path = dir.join(format!("{}.wasm", artifact.sha256_hex()));
            if !path.is_file() {
                std::fs::create_dir_all(&dir)?;
                crate::files::write_atomic(&path, artifact.bytes())?;
            }
            files.push((cap, path));
        }
        Ok(files)
    }

    /// The home's grants ([`crate::grants`]).
    pub fn grants(&self) -> &Arc<crate::grants::GrantBook> {
        &self.inner.grants
    }

    /// The scope of stored grant `id` for a session of `tenant` running
    /// `subject` (see [`crate::grants::Scope::for_session`]).
    pub fn granted_scope(
        &self,
        id: &str,
        tenant: &str,
        subject: &str,
    ) -> Result<crate::grants::Scope, crate::grants::GrantUseError> {
        crate::grants::Scope::for_session(&self.inner.grants, id, tenant, subject)
    }

    /// The cadence: revocations, rate limits, audit.
    pub fn cadence(&self) -> &Arc<Cadence> {
        &self.inner.cadence
    }

    /// The operator's extra TLS roots (DER), beside the web roots: what
    /// every client of this engine trusts. Reads the roots file
    /// ([`EngineBuilder::tls_roots_file`]) if nothing has yet; an unusable
    /// one is an error naming it.
    pub fn tls_roots(&self) -> Result<&[Vec<u8>], EngineError> {
        self.inner.tls.extra_der().map_err(EngineError::TlsRoots)
    }

    /// The command registry.
    pub fn registry(&self) -> &Registry {
        &self.inner.registry
    }

    /// The guests' guarded HTTP transport: the SSRF floor with the
    /// exceptions opened to guests ([`EngineBuilder::net_allow`]).
    pub fn http(&self) -> &Arc<HttpClient> {
        &self.inner.http
    }

    /// The operator's guarded HTTP transport, for endpoints the operator
    /// named (an OCI registry, a catalog row's download): the same floor
    /// with the operator's exceptions ([`EngineBuilder::operator_allow`]).
    /// Threat: one list for both would open a loopback registry or model
    /// server to every guest with network.
    pub fn operator_http(&self) -> &Arc<HttpClient> {
        &self.inner.operator_http
    }

    /// The signing keyring.
    pub fn keyring(&self) -> &Arc<Keyring> {
        &self.inner.keyring
    }

    /// Network reach for `tenant`: the cadence and the transport.
    pub fn net_access(&self, tenant: &str) -> NetAccess {
        NetAccess {
            tenant: tenant.to_string(),
            cadence: self.inner.cadence.clone(),
            client: self.inner.http.clone(),
            max_body: self.inner.net_max_body,
            timeout: self.inner.net_timeout,
            scope: None,
            bindings: None,
        }
    }

    /// The most memory a session may be given.
    pub fn max_memory(&self) -> usize {
        self.inner.max_memory
    }

    /// The memory cap of a session under `profile`: the `requested`
    /// override, else the profile's, never past the engine's ceiling.
    pub(crate) fn memory_cap(
        &self,
        requested: Option<usize>,
        profile: crate::policy::Profile,
    ) -> usize {
        requested
            .unwrap_or_else(|| profile.memory_bytes())
            .min(self.max_memory())
    }

    /// The deny ladder in front of every command run.
    pub(crate) fn ladder(&self) -> Ladder<'_> {
        Ladder {
            cadence: &self.inner.cadence,
            registry: &self.inner.registry,
            slots: &self.inner.command_slots,
        }
    }

    pub(crate) fn process_slots(&self) -> &Arc<Slots> {
        &self.inner.process_slots
    }

    /// The model a request that names none gets, when an endpoint is set.
    pub fn llm_default_model(&self) -> Option<String> {
        self.inner.llm.as_ref().map(|s| s.endpoint().model.clone())
    }

    /// A client for addresses the operator configured (a model server, a
    /// search or image endpoint), trusting this engine's TLS roots. They may
    /// be anywhere, loopback included, so no floor applies: never hand it a
    /// URL a guest or a model chose.
    pub fn operator_client(&self) -> HttpClient {
        HttpClient::for_operator(self.inner.tls.clone())
    }

    /// A core module compiled for this engine (from the compile cache),
    /// with the engine to instantiate it on.
    pub(crate) fn core_module(
        &self,
        artifact: &Artifact,
    ) -> Result<(wasmtime::Engine, wasmtime::Module), DockError> {
        let module = self.inner.docker.module(&self.inner.wasmtime, artifact)?;
        Ok((
            self.inner.wasmtime.of(crate::flavor::Flavor::Sync).clone(),
            module,
        ))
    }

    /// The kernel registry.
    pub fn kernels(&self) -> &Registry {
        &self.inner.kernels
    }

    pub(crate) fn child_binary(&self) -> Option<&Path> {
        self.inner.child.as_deref()
    }

    /// A component store for `opts` under `grant`, on the engine of
    /// `flavor` (a docked guest's own, [`Docked::flavor`]).
    pub(crate) fn new_store(
        &self,
        flavor: crate::flavor::Flavor,
        grant: &Grant,
        opts: &SessionOptions,
    ) -> Result<(Store<StoreState>, Captured), SessionError> {
        self.with_store_host(flavor, grant, opts, |host| new_store(host, grant, opts))
    }

    /// A core-module store for `opts` under `grant`.
    pub(crate) fn new_module_store(
        &self,
        grant: &Grant,
        opts: &SessionOptions,
    ) -> Result<(Store<ModuleState>, Captured), SessionError> {
        self.with_store_host(crate::flavor::Flavor::Sync, grant, opts, |host| {
            new_module_store(host, grant, opts)
        })
    }

    /// Calls `build` with what a store of this engine takes.
    fn with_store_host<R>(
        &self,
        flavor: crate::flavor::Flavor,
        grant: &Grant,
        opts: &SessionOptions,
        build: impl FnOnce(StoreHost<'_>) -> R,
    ) -> R {
        let launcher = || Arc::new(self.clone()) as Arc<dyn Launcher>;
        let host = StoreHost {
            wasmtime: self.inner.wasmtime.of(flavor),
            home: &self.inner.home,
            home_shares: &self.inner.home_shares,
            storage: &self.inner.storage,
            cadence: &self.inner.cadence,
            descriptors: Arc::new(self.inner.descriptors.holding(&opts.tenant)),
            keyring: &self.inner.keyring,
            llm: self.inner.llm.as_ref(),
            access: NetAccess {
                scope: opts
                    .scope
                    .clone()
                    .map(|s| Arc::new(s) as Arc<dyn crate::egress::NetScope>),
                bindings: Some(crate::cap::secrets::bindings_of(
                    &self.inner.keyring,
                    &opts.tenant,
                    opts.scope.as_ref(),
                )),
                ..self.net_access(&opts.tenant)
            },
            memory: self.memory_cap(opts.memory, grant.profile.effective),
            launcher: &launcher,
            relay: self.inner.relay.as_ref(),
        };
        build(host)
    }
}

#[cfg(test)]
mod pool_tests;

/// An engine homed in a fresh temporary directory, on the on-demand
/// allocator, for the tests of this crate and of the services over it
/// (feature `testing`); keep the directory alive.
#[cfg(any(test, feature = "testing"))]
pub fn for_tests() -> (tempfile::TempDir, Engine) {
    let home = tempfile::tempdir().expect("temp home");
    let engine = Engine::builder()
        .home(home.path())
        .pooling(false)
        .build()
        .expect("engine");
    (home, engine)
}
