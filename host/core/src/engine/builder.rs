//! Building an [`Engine`]: its home (checked to be the user's own), the
//! operator's allow-list, brokers and stubs, the compiler, the llm
//! endpoint, the pooling allocator, and the stores it opens.

use super::{
    CACHE_KEY_FILE, Engine, EngineError, Inner, POOL_MEMORY_KEEP_RESIDENT,
    POOL_TABLE_KEEP_RESIDENT, RATE_LIMIT_CALLS, RATE_LIMIT_WINDOW, default_home, relay,
};
use crate::cadence::{Cadence, RateLimiter};
use crate::cap::secrets::keyring::{Keyring, Secret};
use crate::commands::Registry;
use crate::compiler::Compiler;
use crate::dock::Docker;
use crate::egress::{Cidr, HttpClient, NetGuard, Resolver, SystemResolver};
use crate::limits::{
    EpochTicker, MAX_CORE_INSTANCES_PER_STORE, MAX_MEMORIES_PER_STORE, NET_MAX_BODY_BYTES,
};
use crate::policy::Cap;
use crate::storage::StorageSlot;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Configures an [`Engine`].
#[derive(Clone)]
pub struct EngineBuilder {
    home: Option<PathBuf>,
    cache_dir: Option<PathBuf>,
    pooling: bool,
    disk_cache: bool,
    max_instances: u32,
    rate_limit: (u64, Duration),
    max_descriptors_per_tenant: Option<usize>,
    child: Option<PathBuf>,
    net_allow: Vec<Cidr>,
    operator_allow: Vec<Cidr>,
    resolver: Option<Arc<dyn Resolver>>,
    tls_roots: Vec<Vec<u8>>,
    tls_roots_file: Option<PathBuf>,
    net_max_body: usize,
    net_timeout: Duration,
    secrets: HashMap<(String, String), Secret>,
    max_memory: usize,
    brokers: Vec<(Cap, Vec<u8>)>,
    stubs: crate::policy::Stubs,
    compiler: Compiler,
    compile_watch: Option<crate::compiler::CompileWatch>,
    llm: Option<crate::cap::llm::LlmEndpoint>,
    state_dir: Option<PathBuf>,
    relay: Option<Arc<dyn crate::cap::relay::Relay>>,
    handoff: Option<crate::dock::handoff::Handoff>,
    shipped: Vec<&'static super::warm::Shipped>,
}

impl std::fmt::Debug for EngineBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EngineBuilder")
            .field("home", &self.home)
            .field("pooling", &self.pooling)
            .field("net_allow", &self.net_allow)
            .field("operator_allow", &self.operator_allow)
            .field("secrets", &self.secrets.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Default for EngineBuilder {
    fn default() -> Self {
        Self {
            home: None,
            cache_dir: None,
            pooling: true,
            disk_cache: true,
            max_instances: 256,
            rate_limit: (RATE_LIMIT_CALLS, RATE_LIMIT_WINDOW),
            max_descriptors_per_tenant: None,
            child: None,
            net_allow: Vec::new(),
            operator_allow: Vec::new(),
            resolver: None,
            tls_roots: Vec::new(),
            tls_roots_file: None,
            net_max_body: NET_MAX_BODY_BYTES,
            net_timeout: crate::limits::NET_FETCH_TIMEOUT,
            secrets: HashMap::new(),
            max_memory: crate::policy::Profile::Posix.memory_bytes(),
            brokers: Vec::new(),
            stubs: crate::policy::Stubs::NONE,
            compiler: Compiler::default(),
            compile_watch: None,
            llm: None,
            state_dir: None,
            relay: None,
            handoff: None,
            shipped: Vec::new(),
        }
    }
}

impl EngineBuilder {
    /// Where caches and the database live (default [`default_home`]).
    pub fn home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }

    /// Whether to use the pooling allocator (default on): faster
    /// instantiation for a fixed reservation of address space.
    pub fn pooling(mut self, on: bool) -> Self {
        self.pooling = on;
        self
    }

    /// Where compiled and composed artifacts are cached (default
    /// [`workbooks_wire::cache_dir`] of the home: `WB_CACHE_DIR`, else the
    /// user's `$XDG_CACHE_HOME/workbooks` for the user's home, else
    /// `<home>/cache`). It is tagged with `CACHEDIR.TAG`, so backup tools
    /// skip it.
    pub fn cache_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cache_dir = Some(dir.into());
        self
    }

    /// Whether compiled and composed artifacts are cached on disk (default
    /// on; see [`cache_dir`](Self::cache_dir)).
    pub fn disk_cache(mut self, on: bool) -> Self {
        self.disk_cache = on;
        self
    }

    /// Component instances alive at once (pooling only; default 256).
    pub fn max_instances(mut self, n: u32) -> Self {
        self.max_instances = n.max(1);
        self
    }

    /// Calls through the cadence one tenant may make per window (default 120 000 per
    /// 60 s).
    pub fn rate_limit(mut self, calls: u64, window: Duration) -> Self {
        self.rate_limit = (calls, window);
        self
    }

    /// The sockets and files all stores of one tenant may hold at once
    /// (default [`crate::cadence::tenant_descriptor_cap`]: a quarter of the
    /// process's descriptor soft limit, within 256 and 4 096). Past it the
    /// call that would open one more is refused, as at a store's own cap.
    pub fn max_descriptors_per_tenant(mut self, n: usize) -> Self {
        self.max_descriptors_per_tenant = Some(n);
        self
    }

    /// The child binary the `os_process` and `container` tiers start: `wbx`,
    /// or any binary that hands [`crate::child::CHILD_ARGV`] to
    /// [`crate::child::run`], such as this crate's `workbooks-child`
    /// (default: this process's own executable when it is `wbx` or `wbr`).
    pub fn child_binary(mut self, path: impl Into<PathBuf>) -> Self {
        self.child = Some(path.into());
        self
    }

    /// CIDRs the operator opens through the SSRF floor for guests (for
    /// example loopback for a service every guest may reach). Never set
    /// by a guest, and never used for the operator's own endpoints.
    pub fn net_allow(mut self, cidrs: Vec<Cidr>) -> Self {
        self.net_allow = cidrs;
        self
    }

    /// CIDRs opened through the floor for the operator's own endpoints
    /// alone (OCI registries, catalog downloads; see
    /// [`Engine::operator_http`]): a registry on loopback opened here is
    /// opened to no guest.
    pub fn operator_allow(mut self, cidrs: Vec<Cidr>) -> Self {
        self.operator_allow = cidrs;
        self
    }

    /// The resolver the network brokers use (default: the system's).
    pub fn resolver(mut self, resolver: Arc<dyn Resolver>) -> Self {
        self.resolver = Some(resolver);
        self
    }

    /// Extra TLS root certificates (DER), trusted besides the web PKI;
    /// a bad one stops [`build`](Self::build).
    pub fn tls_roots(mut self, roots: Vec<Vec<u8>>) -> Self {
        self.tls_roots = roots;
        self
    }

    /// A PEM file of extra TLS roots (the CLI's `WB_TLS_CA_FILE`), read
    /// only when a connection first needs TLS, and at most
    /// [`CONFIG_MAX_FILE_BYTES`](crate::limits::CONFIG_MAX_FILE_BYTES):
    /// an engine that never connects never reads it. An unusable file
    /// fails each TLS connection; the log names it and says why, once,
    /// and the connection (which may be a guest's) is told neither. What
    /// was read is kept for the engine's life: a fixed file takes a new
    /// engine.
    pub fn tls_roots_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.tls_roots_file = Some(path.into());
        self
    }

    /// The largest HTTP body the egress transport reads (default 8 MiB).
    pub fn net_max_body(mut self, bytes: usize) -> Self {
        self.net_max_body = bytes;
        self
    }

    /// The most memory any session may be given (default 256 MiB, the
    /// largest profile's): the ceiling for operator overrides, and with
    /// pooling the size each pool slot is prepared for (larger slots cost a
    /// little on every instantiation). Clamped to 4 GiB.
    pub fn max_memory(mut self, bytes: usize) -> Self {
        self.max_memory = bytes.clamp(64 << 10, crate::limits::MAX_MEMORY_BYTES);
        self
    }

    /// The wall-clock budget of one fetch (default 15 s).
    pub fn net_timeout(mut self, timeout: Duration) -> Self {
        self.net_timeout = timeout;
        self
    }

    /// A signing secret held for `tenant` under `name` (memory only).
    pub fn secret(mut self, tenant: &str, name: &str, secret: Secret) -> Self {
        self.secrets
            .insert((tenant.to_string(), name.to_string()), secret);
        self
    }

    /// Serves `cap` with the broker component `bytes` instead of the
    /// shipped one. [`build`](Self::build) checks it like any broker: a
    /// component exporting the cap's interface and importing only base
    /// WASI and the cap's own host primitives. The host's limits, tenant
    /// scoping and cadence hold whatever it does.
    pub fn broker(mut self, cap: Cap, bytes: impl Into<Vec<u8>>) -> Self {
        self.brokers.push((cap, bytes.into()));
        self
    }

    /// Serves `stub`'s WASI family with its deny broker in every docking
    /// whose grant lacks the cap the family needs: a guest whose toolchain
    /// imports `wasi:sockets` it never uses then docks under `compute`,
    /// and every socket it tries to open is refused (`access-denied`).
    /// Nothing of the host's network is linked for it, and a grant that
    /// has the cap is served by the host as before.
    ///
    /// ```no_run
    /// use workbooks::{EngineBuilder, Stub};
    /// let engine = EngineBuilder::default().stub(Stub::Sockets).build()?;
    /// # Ok::<(), workbooks::EngineError>(())
    /// ```
    pub fn stub(mut self, stub: crate::policy::Stub) -> Self {
        self.stubs = self.stubs.with(stub);
        self
    }

    /// Adds a component a service ships (the agent service's loop), so
    /// [`Engine::warm`] compiles it with the engine's own.
    ///
    /// ```no_run
    /// use workbooks::{EngineBuilder, Shipped};
    /// static LOOP: Shipped = Shipped::new("acme:loop", b"\0asm");
    /// let engine = EngineBuilder::default().ships(&LOOP).build()?;
    /// # Ok::<(), workbooks::EngineError>(())
    /// ```
    pub fn ships(mut self, component: &'static super::warm::Shipped) -> Self {
        self.shipped.push(component);
        self
    }

    /// How artifacts missing from the compile cache are compiled (default:
    /// in process when this build has a compiler, else by the `wbx` beside
    /// this executable; see [`Compiler`]).
    pub fn compiler(mut self, compiler: Compiler) -> Self {
        self.compiler = compiler;
        self
    }

    /// Tells `watch` of every compile of an artifact the cache lacks (its
    /// size in bytes), and drops what it returned when the compile ends:
    /// a CLI shows a spinner for as long as a first compile takes.
    pub fn on_compile(mut self, watch: crate::compiler::CompileWatch) -> Self {
        self.compile_watch = Some(watch);
        self
    }

    /// The OpenAI-compatible endpoint behind the `llm` cap (and the agent
    /// loop). Without one, `llm` calls fail as not configured.
    pub fn llm(mut self, endpoint: crate::cap::llm::LlmEndpoint) -> Self {
        self.llm = Some(endpoint);
        self
    }

    /// The user's own state directory, which holds the key that seals
    /// every home's caches (default [`crate::seal::default_state_dir`]:
    /// `$XDG_STATE_HOME/workbooks`, else `~/.local/state/workbooks`). A
    /// home's compiled and composed entries are trusted only under this
    /// key, so a home made elsewhere is compiled anew.
    pub fn state_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.state_dir = Some(dir.into());
        self
    }

    /// Serves the storage, signing and launch caps (`kv`, the `vfs`
    /// volumes, `queue`, `secrets`, `commands`, `exec`, `parallel`) of
    /// every store through the process at the other end of `channel`,
    /// which answers each call for the session it started this one for
    /// (see [`crate::cap::relay`]). How a container-tier child is built:
    /// it holds no database, no keys and no registry of its own.
    pub fn relayed(mut self, channel: std::os::fd::OwnedFd) -> std::io::Result<Self> {
        self.relay = Some(relay::channel::RelayClient::start(channel)?);
        Ok(self)
    }

    /// Docks the guest a parent process handed over from the code it
    /// compiled ([`crate::dock::handoff`]): nothing is composed or
    /// compiled here for it.
    pub fn handed(mut self, handoff: crate::dock::handoff::Handoff) -> Self {
        self.handoff = Some(handoff);
        self
    }

    /// Builds the engine.
    pub fn build(self) -> Result<Engine, EngineError> {
        if self.compiler == Compiler::InProcess && !Compiler::in_process_available() {
            return Err(EngineError::NoCompiler);
        }
        let mut brokers = crate::dock::brokers::Brokers::default();
        for (cap, bytes) in self.brokers {
            brokers.replace(cap, bytes)?;
        }
        let home = self.home.unwrap_or_else(default_home);
        let cache_dir = self
            .cache_dir
            .unwrap_or_else(|| workbooks_wire::cache_dir(&home));
        checked_home(&home, &cache_dir)?;
        let mut cfg = wasmtime::Config::new();
        cfg.wasm_component_model(true);
        cfg.epoch_interruption(true);
        cfg.consume_fuel(true);
        // No `.eh_frame` for guest code: wasmtime walks guest stacks by frame
        // pointer and catches a host panic before it would unwind through a
        // guest frame, so the system unwinder never needs one, and loading a
        // component then registers nothing with it.
        cfg.native_unwind_info(false);
        // Wasm GC (struct, array, i31) is off: no shipped guest or catalog
        // row uses it, and wasmtime 48.0.8's open GC advisories
        // (GHSA-43j2-gcp4-m22g) are then out of a guest's reach. Exception
        // handling, which only needs the `gc` cargo feature, stays on.
        cfg.wasm_gc(false);
        if self.pooling {
            let n = self.max_instances;
            let mut pool = wasmtime::PoolingAllocationConfig::new();
            pool.total_component_instances(n)
                .total_core_instances(n * 8)
                .total_memories(n * 2)
                .total_tables(n * 8)
                .total_stacks(n)
                .max_memory_size(self.max_memory)
                .max_core_instances_per_component(MAX_CORE_INSTANCES_PER_STORE as u32)
                .max_memories_per_component(MAX_MEMORIES_PER_STORE as u32)
                .max_tables_per_component(MAX_CORE_INSTANCES_PER_STORE as u32)
                // Decommits are not batched (wasmtime's default batch of
                // one): every reset queues a region, empty when nothing lay
                // past the kept-resident part, so with a batch every slot,
                // a stage's too, waits for it while the next instance takes
                // a cold slot, and a slot that outgrew that part (a 700 MB
                // jq run) holds its pages until the batch fills. Unbatched,
                // each slot is back as its instance ends, with no system
                // call when its one region is empty (`pool_tests`).
                .table_keep_resident(POOL_TABLE_KEEP_RESIDENT);
            // Where the kernel can report which pages a guest touched, reset
            // just those in place rather than unmapping the whole slot.
            if wasmtime::PoolingAllocationConfig::is_pagemap_scan_available() {
                pool.pagemap_scan(wasmtime::Enabled::Yes)
                    .linear_memory_keep_resident(POOL_MEMORY_KEEP_RESIDENT);
            }
            cfg.allocation_strategy(wasmtime::InstanceAllocationStrategy::Pooling(pool));
        }
        let wasmtime =
            crate::flavor::Engines::new(cfg).map_err(|e| EngineError::Config(format!("{e:#}")))?;
        let ticker = EpochTicker::start(wasmtime.clone()).map_err(EngineError::Ticker)?;
        let cache = self.disk_cache.then(|| {
            tag_cache(&cache_dir);
            cache_dir
        });
        let state_dir = self
            .state_dir
            .or_else(crate::seal::default_state_dir)
            .filter(|_| self.disk_cache);
        let key = state_dir.as_ref().map(|dir| dir.join(CACHE_KEY_FILE));
        if self.disk_cache && key.is_none() {
            tracing::warn!(
                "no state directory (XDG_STATE_HOME and HOME unset): on-disk caches are off"
            );
        }
        let seal = crate::seal::Seal::open(key.as_deref());
        let resolver = self.resolver.unwrap_or_else(|| Arc::new(SystemResolver));
        let guard = NetGuard::new(self.net_allow, resolver.clone());
        let tls = crate::egress::tls::LazyTls::new(&self.tls_roots, self.tls_roots_file)
            .map_err(EngineError::Config)?;
        let operator_http = Arc::new(HttpClient::with_tls(
            NetGuard::new(self.operator_allow, resolver),
            tls.clone(),
        ));
        let llm = self
            .llm
            .map(|e| Arc::new(crate::cap::llm::LlmService::new(e, tls.clone())));
        let http = Arc::new(HttpClient::with_tls(guard, tls.clone()));
        let keyring = Arc::new(Keyring::new(
            Some(home.join(crate::cap::secrets::keyring::SECRETS_DIR)),
            self.secrets,
        ));
        let docker = Docker::new(
            cache.clone(),
            seal,
            (self.compiler, self.compile_watch),
            &home,
            brokers,
            self.stubs,
        );
        if let Some(handoff) = &self.handoff {
            docker
                .take_handoff(&wasmtime, handoff)
                .map_err(EngineError::Handoff)?;
        }
        let child = self.child.or_else(|| {
            std::env::current_exe()
                .ok()
                .filter(|p| p.file_stem().is_some_and(|n| n == "wbx" || n == "wbr"))
        });
        Ok(Engine {
            inner: Arc::new(Inner {
                cadence: Cadence::new(
                    Some(&home),
                    RateLimiter::new(self.rate_limit.0, self.rate_limit.1),
                ),
                grants: Arc::new(crate::grants::GrantBook::new(Some(
                    home.join(crate::grants::GRANTS_FILE),
                ))),
                descriptors: crate::cadence::Descriptors::new(
                    self.max_descriptors_per_tenant
                        .unwrap_or_else(crate::cadence::tenant_descriptor_cap),
                ),
                registry: Registry::new(&home),
                kernels: Registry::kernels(&home),
                command_slots: Arc::default(),
                process_slots: Arc::default(),
                child,
                http,
                operator_http,
                llm,
                tls,
                keyring,
                net_max_body: self.net_max_body,
                net_timeout: self.net_timeout,
                max_memory: self.max_memory,
                docker,
                relay: self.relay,
                wasmtime,
                storage: Arc::new(StorageSlot::new(home.join("db"))),
                home,
                home_shares: crate::preopen::HomeShares::default(),
                cache_dir: cache,
                state_dir,
                shipped: self.shipped,
                _ticker: ticker,
            }),
        })
    }
}

/// Makes `cache` (0700) with its `CACHEDIR.TAG` when the tag is missing
/// (a failure is met by whatever first writes to the cache).
fn tag_cache(cache: &Path) {
    use std::os::unix::fs::DirBuilderExt;
    let tag = cache.join(workbooks_wire::home::CACHEDIR_TAG);
    if tag.exists() {
        return;
    }
    let made = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(cache);
    if made.is_ok() {
        let _ =
            crate::files::write_atomic(&tag, workbooks_wire::home::CACHEDIR_TAG_TEXT.as_bytes());
    }
}

/// Makes `home` (0700) when missing, and refuses it unless this user owns
/// it and no one else may write it; the same for its compile cache
/// (`cache`, wherever it is), and, when others may enter the home, for
/// everything directly in it.
///
/// Threat: a home is run from. Whoever can write into it can plant a
/// registry entry, a stored command or a broker the next `wbx run` loads:
/// a home unpacked from someone's archive, or made in a shared project
/// folder whose group may write. A directory writable by the user's own
/// primary group (a private group, where umask 002 is the default) is the
/// user's own.
fn checked_home(home: &Path, cache: &Path) -> Result<(), EngineError> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    // A home this engine makes is its user's alone. (A failure here is met
    // by whatever first writes to it.)
    if !home.exists() {
        let _ = std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(home);
    }
    let me = rustix::process::geteuid().as_raw();
    let my_group = rustix::process::getegid().as_raw();
    let check = |path: &Path| -> Result<Option<std::fs::Metadata>, EngineError> {
        let Ok(meta) = std::fs::symlink_metadata(path) else {
            return Ok(None);
        };
        if meta.uid() != me {
            return Err(EngineError::ForeignHome {
                path: path.to_path_buf(),
                owner: meta.uid(),
                me,
            });
        }
        let mode = meta.mode() & 0o7777;
        let shared = mode & 0o002 != 0 || (mode & 0o020 != 0 && meta.gid() != my_group);
        if shared && !meta.file_type().is_symlink() {
            return Err(EngineError::OpenHome {
                path: path.to_path_buf(),
                mode,
            });
        }
        Ok(Some(meta))
    };
    let Some(meta) = check(home)? else {
        return Ok(());
    };
    check(cache)?;
    // A link to a folder is a folder here.
    for path in [home, cache] {
        if std::fs::metadata(path).is_ok_and(|m| !m.is_dir()) {
            return Err(EngineError::NotAFolder {
                path: path.to_path_buf(),
            });
        }
    }
    if meta.mode() & 0o011 != 0
        && let Ok(entries) = std::fs::read_dir(home)
    {
        for entry in entries.flatten() {
            check(&entry.path())?;
        }
    }
    Ok(())
}
