//! Persistent instances, kept by id in a [`Supervisor`].
//!
//! A supervisor belongs to one tenant, chosen when it is made: every
//! instance it starts runs as that tenant, and an instance id names
//! something only within it. Another tenant's supervisor may start an
//! instance with the same id; it reaches other volumes, other kv keys,
//! other queues.
//!
//! An instance is a docked component with a live store that survives
//! between calls, so guest state (globals, heap) carries over. Each call is
//! bounded by the instance's timeout and by the memory cap on the store. A
//! call that faults (trap, timeout, memory, fuel) returns the error as a
//! value and retires the store; the next call instantiates afresh from the
//! cached pre-instantiation, so a fault never takes the host or another
//! instance with it. Volumes outlive the store; `tmp` is cleared whenever
//! an instance starts (a start with a known id is a resume).

use crate::artifact::Artifact;
use crate::cadence::Denial;
use crate::cap::vfs::storage::{VfsError, Volume};
use crate::dock::{DockError, Docked};
use crate::engine::Engine;
use crate::engine::run::{RunError, classify};
use crate::limits::Deadline;
use crate::policy::{CapSet, Grant, PolicyError, Profile, Stubs};
use crate::state::{Preopen, SessionError, SessionOptions, StoreState};
use crate::storage::{StorageError, validate_name};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use wasmtime::Store;
use wasmtime::component::{Func, Instance as ComponentInstance, Val};

/// How to start an instance.
#[derive(Debug, Clone)]
pub struct StartOptions {
    /// Profile name; unknown names resolve to `compute` (and `info` says so).
    pub profile: String,
    /// Caps narrower than the profile's; `None` for all of them.
    pub caps: Option<CapSet>,
    /// Per-call budget; the profile's when `None`.
    pub timeout: Option<Duration>,
    /// Host directories preopened for `wasi:filesystem` (vfs cap only).
    pub dirs: Vec<Preopen>,
    /// Fuel per call; unmetered when `None`.
    pub fuel: Option<u64>,
    /// Memory cap in place of the profile's (operator set).
    pub memory: Option<usize>,
    /// The instance's environment (exactly these pairs).
    pub env: Vec<(String, String)>,
    /// WASI families served by deny brokers where the grant lacks their
    /// cap ([`crate::Grant::with_stub`]).
    pub stubs: crate::policy::Stubs,
    /// The stored grant's scopes every call runs under, judged as the
    /// grant is at each call; `None` is unscoped (the floor alone).
    pub scope: Option<crate::grants::Scope>,
}

impl Default for StartOptions {
    fn default() -> Self {
        Self {
            profile: Profile::Compute.name().to_string(),
            caps: None,
            timeout: None,
            dirs: Vec::new(),
            fuel: None,
            memory: None,
            env: Vec::new(),
            stubs: crate::policy::Stubs::NONE,
            scope: None,
        }
    }
}

/// What an instance is and has done.
#[derive(Debug, Clone, Serialize)]
pub struct InstanceInfo {
    /// The id.
    pub id: String,
    /// The tenant it runs as.
    pub tenant: String,
    /// The profile name asked for.
    pub profile_requested: String,
    /// The profile in effect.
    pub profile_effective: Profile,
    /// A note when the requested profile was unknown.
    pub warning: Option<String>,
    /// The caps in effect.
    pub caps: CapSet,
    /// The imports the host linked.
    pub linked_imports: Vec<String>,
    /// Granted caps that bind nothing for this instance, and why.
    pub notes: Vec<String>,
    /// Calls made, faulted or not.
    pub calls: u64,
    /// Calls that faulted (and retired the store).
    pub faults: u64,
    /// Bytes held by the live store's memories and tables (`None` while a
    /// call is in flight or after a fault retired the store).
    pub memory_used: Option<usize>,
    /// The cap on that total.
    pub memory_limit: usize,
    /// The sha256 of the guest.
    pub artifact_sha256: String,
}

/// Why an instance operation failed.
#[derive(Debug, thiserror::Error)]
pub enum InstanceError {
    /// The id is not a valid name.
    #[error(transparent)]
    InvalidId(StorageError),
    /// An instance with this id is running.
    #[error("instance `{0}` is already running")]
    AlreadyRunning(String),
    /// No instance with this id.
    #[error("no instance `{0}`")]
    NotFound(String),
    /// The profile or caps were refused.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// The component could not be docked.
    #[error(transparent)]
    Dock(#[from] DockError),
    /// The session could not be set up.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The call faulted.
    #[error(transparent)]
    Run(#[from] RunError),
    /// The component has no such export.
    #[error("no exported function `{0}`")]
    NoSuchExport(String),
    /// The arguments do not fit the export.
    #[error("bad call to `{export}`: {message}")]
    BadCall {
        /// The export.
        export: String,
        /// What was wrong.
        message: String,
    },
    /// A vfs operation failed.
    #[error(transparent)]
    Vfs(#[from] VfsError),
    /// Storage could not be reached.
    #[error(transparent)]
    Storage(#[from] StorageError),
    /// The instance's stored grant refuses every call now (expired,
    /// revoked or unreadable).
    #[error(transparent)]
    Grant(#[from] crate::grants::ScopeRefusal),
}

struct Live {
    store: Store<StoreState>,
    instance: ComponentInstance,
}

struct Instance {
    docked: Arc<Docked>,
    session: SessionOptions,
    budget: Duration,
    live: tokio::sync::Mutex<Option<Live>>,
    calls: AtomicU64,
    faults: AtomicU64,
}

/// Keeps one tenant's instances by id.
pub struct Supervisor {
    engine: Engine,
    tenant: String,
    instances: Mutex<HashMap<String, Arc<Instance>>>,
}

impl std::fmt::Debug for Supervisor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Supervisor")
            .field("tenant", &self.tenant)
            .field("instances", &self.lock().keys().collect::<Vec<_>>())
            .finish()
    }
}

impl Supervisor {
    /// A supervisor running instances on `engine` as the tenant `default`.
    pub fn new(engine: Engine) -> Self {
        Self {
            engine,
            tenant: "default".to_string(),
            instances: Mutex::new(HashMap::new()),
        }
    }

    /// A supervisor running instances on `engine` as `tenant`.
    pub fn for_tenant(engine: Engine, tenant: &str) -> Result<Self, InstanceError> {
        validate_name("tenant", tenant).map_err(InstanceError::InvalidId)?;
        Ok(Self {
            tenant: tenant.to_string(),
            ..Self::new(engine)
        })
    }

    /// The tenant every instance of this supervisor runs as.
    pub fn tenant(&self) -> &str {
        &self.tenant
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Instance>>> {
        self.instances.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn get(&self, id: &str) -> Result<Arc<Instance>, InstanceError> {
        self.lock()
            .get(id)
            .cloned()
            .ok_or_else(|| InstanceError::NotFound(id.to_string()))
    }

    /// Docks `artifact` and starts it as instance `id`.
    pub async fn start(
        &self,
        id: &str,
        artifact: &Artifact,
        opts: StartOptions,
    ) -> Result<InstanceInfo, InstanceError> {
        validate_name("instance", id).map_err(InstanceError::InvalidId)?;
        if self.lock().contains_key(id) {
            return Err(InstanceError::AlreadyRunning(id.to_string()));
        }
        let grant = match opts.caps {
            Some(caps) => Grant::narrowed(&opts.profile, caps)?,
            None => Grant::profile(&opts.profile),
        }
        .with_stubs(opts.stubs);
        let docked = self.engine.dock(artifact, &grant)?;
        if docked.component().is_none() {
            return Err(DockError::NotAComponent.into());
        }
        if grant.caps.contains(crate::policy::Cap::Vfs) {
            self.engine
                .storage()?
                .volumes(&self.tenant, id)?
                .clear(Volume::Tmp)?;
        }
        let mut session = SessionOptions::new(id, self.tenant.clone());
        session.dirs = opts.dirs;
        session.timeout = opts.timeout;
        session.fuel = opts.fuel;
        session.memory = opts.memory;
        session.env = opts.env;
        session.scope = opts.scope;
        crate::environ::check(&session.env).map_err(SessionError::from)?;
        let instance = Arc::new(Instance {
            budget: opts
                .timeout
                .unwrap_or_else(|| grant.profile.effective.timeout()),
            docked,
            session,
            live: tokio::sync::Mutex::new(None),
            calls: AtomicU64::new(0),
            faults: AtomicU64::new(0),
        });
        {
            let mut live = instance.live.lock().await;
            *live = Some(self.instantiate(&instance).await?);
        }
        let mut all = self.lock();
        if all.contains_key(id) {
            return Err(InstanceError::AlreadyRunning(id.to_string()));
        }
        all.insert(id.to_string(), instance.clone());
        Ok(info(&self.engine, id, &instance))
    }

    async fn instantiate(&self, inst: &Instance) -> Result<Live, InstanceError> {
        let (mut store, _captured) =
            self.engine
                .new_store(inst.docked.flavor, inst.docked.grant(), &inst.session)?;
        store.data_mut().deadline = Deadline::after(inst.budget);
        let pre = inst.docked.component().ok_or(DockError::NotAComponent)?;
        let outcome = tokio::time::timeout(inst.budget, pre.instantiate_async(&mut store)).await;
        match outcome {
            Err(_) => Err(RunError::Timeout {
                budget: inst.budget,
            }
            .into()),
            Ok(Err(e)) => Err(classify(e, store.data(), inst.session.fuel).into()),
            Ok(Ok(instance)) => Ok(Live { store, instance }),
        }
    }

    /// Calls an export of instance `id`: `name` for a function exported at
    /// the top level, `interface#name` for one inside an exported interface.
    pub async fn call(
        &self,
        id: &str,
        export: &str,
        args: &[Val],
    ) -> Result<Vec<Val>, InstanceError> {
        let inst = self.get(id)?;
        // Past its grant's expiry (or revocation) nothing runs at all.
        if let Some(scope) = &inst.session.scope
            && let Err(e) = scope.now()
        {
            let cadence = self.engine.cadence();
            cadence.deny(
                &self.tenant,
                "call",
                Denial::Guard(e.reason()),
                &e.to_string(),
            );
            return Err(e.into());
        }
        let mut slot = self.ready(&inst).await?;
        let Some(live) = slot.as_mut() else {
            return Err(InstanceError::NotFound(id.to_string()));
        };
        let func = find_export(live, export)?;
        let params = func.ty(&live.store).params().len();
        if params != args.len() {
            return Err(InstanceError::BadCall {
                export: export.to_string(),
                message: format!("takes {params} arguments, {} given", args.len()),
            });
        }
        let mut results = vec![Val::Bool(false); func.ty(&live.store).results().len()];
        arm(&inst, live)?;
        let outcome = tokio::time::timeout(
            inst.budget,
            func.call_async(&mut live.store, args, &mut results),
        )
        .await;
        settle(&inst, &mut slot, outcome).map(|()| results)
    }

    /// Calls an export shaped `func(list<u8>) -> list<u8>` (a component
    /// kernel's `process`) of instance `id`, under the same budgets as
    /// [`Supervisor::call`], without turning each byte into a value.
    pub(crate) async fn call_bytes(
        &self,
        id: &str,
        export: &str,
        input: &[u8],
    ) -> Result<Vec<u8>, InstanceError> {
        let inst = self.get(id)?;
        let mut slot = self.ready(&inst).await?;
        let Some(live) = slot.as_mut() else {
            return Err(InstanceError::NotFound(id.to_string()));
        };
        let func = find_export(live, export)?;
        let typed = func
            .typed::<(&[u8],), (Vec<u8>,)>(&live.store)
            .map_err(|e| InstanceError::BadCall {
                export: export.to_string(),
                message: format!("is not func(list<u8>) -> list<u8>: {e}"),
            })?;
        arm(&inst, live)?;
        let outcome =
            tokio::time::timeout(inst.budget, typed.call_async(&mut live.store, (input,))).await;
        settle(&inst, &mut slot, outcome).map(|(out,)| out)
    }

    /// The instance's live store, instantiated afresh if a fault retired
    /// the last one; held for one call.
    async fn ready<'a>(
        &self,
        inst: &'a Instance,
    ) -> Result<tokio::sync::MutexGuard<'a, Option<Live>>, InstanceError> {
        let mut slot = inst.live.lock().await;
        if slot.is_none() {
            *slot = Some(self.instantiate(inst).await?);
        }
        Ok(slot)
    }

    /// Calls `run(input) -> result<string, string>` of a plugin-world
    /// instance.
    pub async fn call_run(
        &self,
        id: &str,
        input: &str,
    ) -> Result<Result<String, String>, InstanceError> {
        let results = self
            .call(id, "run", &[Val::String(input.to_string())])
            .await?;
        let text = |v: Option<Box<Val>>| match v.map(|b| *b) {
            Some(Val::String(s)) => s,
            _ => String::new(),
        };
        match results.into_iter().next() {
            Some(Val::Result(Ok(v))) => Ok(Ok(text(v))),
            Some(Val::Result(Err(v))) => Ok(Err(text(v))),
            _ => Err(InstanceError::BadCall {
                export: "run".into(),
                message: "does not return result<string, string>".into(),
            }),
        }
    }

    /// What instance `id` is and has done.
    pub fn info(&self, id: &str) -> Result<InstanceInfo, InstanceError> {
        let inst = self.get(id)?;
        Ok(info(&self.engine, id, &inst))
    }

    /// Every running instance, by id.
    pub fn list(&self) -> Vec<InstanceInfo> {
        let mut all: Vec<InstanceInfo> = self
            .lock()
            .iter()
            .map(|(id, i)| info(&self.engine, id, i))
            .collect();
        all.sort_by(|a, b| a.id.cmp(&b.id));
        all
    }

    /// Writes a file into a volume of instance `id`.
    pub fn vfs_put(
        &self,
        id: &str,
        volume: Volume,
        path: &str,
        data: &[u8],
    ) -> Result<(), InstanceError> {
        self.get(id)?;
        Ok(self
            .engine
            .storage()?
            .volumes(&self.tenant, id)?
            .write(volume, path, data)?)
    }

    /// Reads a file from a volume of instance `id`.
    pub fn vfs_get(&self, id: &str, volume: Volume, path: &str) -> Result<Vec<u8>, InstanceError> {
        self.get(id)?;
        Ok(self
            .engine
            .storage()?
            .volumes(&self.tenant, id)?
            .read(volume, path)?)
    }

    /// Stops instance `id`. A call in flight finishes first; its volumes
    /// stay for a later start with the same id.
    pub fn stop(&self, id: &str) -> Result<InstanceInfo, InstanceError> {
        let inst = self
            .lock()
            .remove(id)
            .ok_or_else(|| InstanceError::NotFound(id.to_string()))?;
        Ok(info(&self.engine, id, &inst))
    }
}

/// Counts a call and arms its deadline, memory cap and fuel.
fn arm(inst: &Instance, live: &mut Live) -> Result<(), InstanceError> {
    inst.calls.fetch_add(1, Ordering::Relaxed);
    live.store.data_mut().deadline = Deadline::after(inst.budget);
    live.store.data_mut().limiter.arm();
    if let Some(fuel) = inst.session.fuel {
        live.store
            .set_fuel(fuel)
            .map_err(|e| SessionError::Engine(format!("{e:#}")))?;
    }
    Ok(())
}

/// A call's outcome: its value, or the fault, which retires the store.
fn settle<R>(
    inst: &Instance,
    slot: &mut Option<Live>,
    outcome: Result<wasmtime::Result<R>, tokio::time::error::Elapsed>,
) -> Result<R, InstanceError> {
    let fault = match outcome {
        Ok(Ok(value)) => return Ok(value),
        Err(_) => RunError::Timeout {
            budget: inst.budget,
        },
        Ok(Err(e)) => match slot.as_ref() {
            Some(live) => classify(e, live.store.data(), inst.session.fuel),
            None => RunError::Trap(format!("{e:#}")),
        },
    };
    inst.faults.fetch_add(1, Ordering::Relaxed);
    *slot = None;
    Err(fault.into())
}

fn find_export(live: &mut Live, export: &str) -> Result<Func, InstanceError> {
    let missing = || InstanceError::NoSuchExport(export.to_string());
    let (parent, name) = match export.split_once('#') {
        Some((iface, name)) => {
            let idx = live
                .instance
                .get_export_index(&mut live.store, None, iface)
                .ok_or_else(missing)?;
            (Some(idx), name)
        }
        None => (None, export),
    };
    let idx = live
        .instance
        .get_export_index(&mut live.store, parent.as_ref(), name)
        .ok_or_else(missing)?;
    live.instance
        .get_func(&mut live.store, idx)
        .ok_or_else(missing)
}

fn info(engine: &Engine, id: &str, inst: &Instance) -> InstanceInfo {
    let grant = inst.docked.grant();
    let receipt = inst.docked.receipt();
    InstanceInfo {
        id: id.to_string(),
        tenant: inst.session.tenant.clone(),
        profile_requested: grant.profile.requested.clone(),
        profile_effective: grant.profile.effective,
        warning: grant.profile.fell_back().then(|| {
            format!(
                "unknown profile `{}` resolved to compute",
                grant.profile.requested
            )
        }),
        caps: grant.caps,
        linked_imports: receipt.linked.clone(),
        notes: crate::dock::unbound_notes(grant.caps),
        calls: inst.calls.load(Ordering::Relaxed),
        faults: inst.faults.load(Ordering::Relaxed),
        memory_used: inst
            .live
            .try_lock()
            .ok()
            .and_then(|live| live.as_ref().map(|l| l.store.data().limiter.used())),
        memory_limit: engine.memory_cap(inst.session.memory, grant.profile.effective),
        artifact_sha256: receipt.artifact_sha256.clone(),
    }
}

impl crate::engine::shell::LineOptions {
    /// What a `plugin` instance started with these stage settings gets:
    /// the profile, caps, preopens, budgets and environment of a stage
    /// (fuel [`COMMAND_FUEL`](crate::limits::COMMAND_FUEL) when unset),
    /// serving `stubs` with deny brokers.
    pub fn start_options(&self, stubs: Stubs) -> StartOptions {
        StartOptions {
            profile: self.profile.clone(),
            caps: self.caps,
            timeout: self.stage_timeout,
            dirs: self.dirs.clone(),
            fuel: Some(self.stage_fuel.unwrap_or(crate::limits::COMMAND_FUEL)),
            memory: self.stage_memory,
            env: self.env.clone(),
            stubs,
            scope: self.scope.clone(),
        }
    }
}
