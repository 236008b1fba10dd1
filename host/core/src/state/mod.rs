//! The data every store carries, and how a store is built for one session.
//!
//! A store is built from the caller's [`SessionOptions`] and nothing else:
//! no inherited environment, no host stdio unless the caller passes it
//! through explicitly, no preopened directory unless listed, fuel and a
//! memory cap always set. Each cap's context starts deny-all and is filled
//! only when that cap is granted.

use crate::cadence::{Cadence, Holding};
use crate::cap::launch::Launcher;
use crate::cap::launch::module::ModuleLaunch;
use crate::cap::net::sockets::GuardedLookup;
use crate::cap::relay::Relay;
use crate::cap::secrets::keyring::Keyring;
use crate::cap::session_info::SessionCtx;
use crate::commands::CommandPolicy;
use crate::egress::NetAccess;
use crate::limits::{
    Deadline, HasDeadline, MAX_ARGV_BYTES, MAX_CAPTURED_OUTPUT_BYTES, MAX_STDIN_BYTES,
    MemoryLimiter,
};
use crate::pipes::{PipeReader, PipeWriter, SessionInput, SessionOutput};
use crate::policy::Grant;
pub use crate::preopen::Preopen;
use crate::preopen::preopen_all;
use crate::storage::StorageSlot;
use bytes::Bytes;
use caps::Contexts;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use wasmtime::Store;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::cli::StdoutStream;
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p2::pipe::{MemoryInputPipe, SinkOutputStream};
use wasmtime_wasi::sockets::WasiSocketsCtxView;
use wasmtime_wasi::{WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

/// Where a session's stdin comes from.
#[derive(Debug, Clone, Default)]
pub enum Stdin {
    /// Closed: reads see end of input.
    #[default]
    Empty,
    /// These bytes, then end of input.
    Bytes(Bytes),
    /// The host process's own stdin (the CLI passes it through).
    Inherit,
    /// The reading end of a pipe (a pipeline stage's input), streamed; one
    /// whose writer starts only once it is read says so with
    /// [`PipeReader::on_first_read`].
    Pipe(PipeReader),
}

impl From<Bytes> for Stdin {
    fn from(bytes: Bytes) -> Self {
        if bytes.is_empty() {
            Stdin::Empty
        } else {
            Stdin::Bytes(bytes)
        }
    }
}

impl From<Vec<u8>> for Stdin {
    fn from(bytes: Vec<u8>) -> Self {
        Bytes::from(bytes).into()
    }
}

impl From<String> for Stdin {
    fn from(text: String) -> Self {
        Bytes::from(text).into()
    }
}

impl From<&'static str> for Stdin {
    fn from(text: &'static str) -> Self {
        Bytes::from_static(text.as_bytes()).into()
    }
}

/// Where a session's stdout or stderr goes.
#[derive(Debug, Clone, Default)]
pub enum Output {
    /// Kept in memory, up to the capture limit, and returned.
    #[default]
    Capture,
    /// The host process's own stream (the CLI passes it through).
    Inherit,
    /// The writing end of a pipe (a pipeline stage's stdout), streamed.
    Pipe(PipeWriter),
    /// Thrown away (a stage whose next stage reads elsewhere).
    Discard,
    /// A stream shared with other sessions: a command line's own stdout,
    /// written by the last stage of each of its pipelines.
    Shared(SessionOutput),
}

/// How one session (a command run or an instance) is set up.
#[derive(Debug, Clone)]
pub struct SessionOptions {
    /// The id `session-info` reports; with the tenant, it names the vfs
    /// volumes the session reaches.
    pub id: String,
    /// The tenant whose durable state the session reaches.
    pub tenant: String,
    /// argv\[0\]: the program's name as the caller wrote it (`wbx exec
    /// hello.wasm` gives `hello.wasm`, as `wasmtime run` does); the id when
    /// `None`.
    pub program: Option<String>,
    /// argv after argv\[0\].
    pub args: Vec<String>,
    /// The guest's whole environment, `(NAME, value)` in order: nothing
    /// of the host's own is ever added.
    pub env: Vec<(String, String)>,
    /// Standard input.
    pub stdin: Stdin,
    /// Standard output.
    pub stdout: Output,
    /// Standard error.
    pub stderr: Output,
    /// Host directories to preopen (only under the vfs cap).
    pub dirs: Vec<Preopen>,
    /// Do the preopens' file I/O on the calling thread rather than tokio's
    /// blocking pool: much faster when one guest has the thread to itself
    /// (`wbx exec`), but it stalls every other task of a shared
    /// current-thread runtime while a file call runs. Off by default.
    pub inline_file_io: bool,
    /// Per-call wall-clock budget; the profile's when `None`.
    pub timeout: Option<Duration>,
    /// Fuel per call; unmetered when `None`.
    pub fuel: Option<u64>,
    /// The cap on memories and tables, set by the operator in place of the
    /// profile's (clamped to the engine's `max_memory`).
    pub memory: Option<usize>,
    /// How commands started from this session run (under the `commands`
    /// and `exec` caps).
    pub commands: CommandPolicy,
    /// The stream a pipeline run from this session hands its first stage
    /// that asks for the session's stdin (the command line's own stdin, for
    /// the shell); none by default, so that stage reads nothing.
    pub pipeline_stdin: Option<SessionInput>,
    /// The stream a pipeline run from this session hands a stage that asks
    /// to write the session's stdout (the command line's own stdout, for
    /// the shell); without one, such a stage's stdout is captured.
    pub pipeline_stdout: Option<SessionOutput>,
    /// Where the session's model answers are recorded or replayed from,
    /// and what it may spend on the model (`llm`); nothing by default.
    pub llm: crate::cap::llm::LlmRun,
    /// The grant's scopes the session, and the commands it starts, run
    /// under (the destinations its network caps may reach, its expiry);
    /// `None` is unscoped (the floor alone).
    pub scope: Option<crate::grants::Scope>,
}

impl SessionOptions {
    /// Options with the given id and tenant and every other field default:
    /// no args, no stdin, captured output, no preopens, profile timeout.
    pub fn new(id: impl Into<String>, tenant: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            tenant: tenant.into(),
            program: None,
            args: Vec::new(),
            env: Vec::new(),
            stdin: Stdin::Empty,
            stdout: Output::Capture,
            stderr: Output::Capture,
            dirs: Vec::new(),
            inline_file_io: false,
            timeout: None,
            fuel: None,
            memory: None,
            commands: CommandPolicy::default(),
            pipeline_stdin: None,
            pipeline_stdout: None,
            llm: Default::default(),
            scope: None,
        }
    }
}

/// Why a session could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// argv over [`MAX_ARGV_BYTES`].
    #[error("argv is {0} bytes, over the {MAX_ARGV_BYTES}-byte limit")]
    ArgvTooLarge(usize),
    /// The environment was refused.
    #[error(transparent)]
    Env(#[from] crate::environ::EnvError),
    /// stdin over [`MAX_STDIN_BYTES`].
    #[error("stdin is {0} bytes, over the {MAX_STDIN_BYTES}-byte limit")]
    StdinTooLarge(usize),
    /// A preopen was refused or could not be opened.
    #[error(transparent)]
    Preopen(#[from] crate::preopen::PreopenError),
    /// The engine refused the store's settings (a host bug).
    #[error("engine misconfigured: {0}")]
    Engine(String),
    /// The engine's storage could not be reached.
    #[error(transparent)]
    Storage(#[from] crate::storage::StorageError),
}

pub(crate) mod caps;

/// The data of every component store. Opaque to a crate above, which
/// reaches only its own extension's context in it
/// ([`StoreState::extension`]).
pub struct StoreState {
    wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) limiter: MemoryLimiter,
    pub(crate) deadline: Deadline,
    /// The outputs the epoch check watches for a passed cap (the same
    /// streams the run reads back).
    pub(crate) outputs: Captured,
    pub(crate) session: SessionCtx,
    /// Each cap's context, opened from the cap table.
    pub(crate) caps: Contexts,
    /// The context of the lane's extension, if it is a service's
    /// (`dock/extension.rs`).
    pub(crate) extension: Option<Box<dyn std::any::Any + Send>>,
    /// The sockets and files this store holds, in its tenant's count.
    pub(crate) descriptors: Arc<Holding>,
}

impl StoreState {
    /// The extension's context of this store, as `C`: the value the
    /// service handed [`Engine::call_on`](crate::Engine::call_on),
    /// or `C`'s default when the store holds none of that type.
    pub fn extension<C: std::any::Any + Send + Default>(&mut self) -> &mut C {
        if !self.extension.as_ref().is_some_and(|c| c.is::<C>()) {
            self.extension = Some(Box::new(C::default()));
        }
        match self.extension.as_mut().and_then(|c| c.downcast_mut::<C>()) {
            Some(c) => c,
            None => unreachable!("set to a C just above"),
        }
    }

    /// The `wasi:sockets/ip-name-lookup` view: wasmtime-wasi's resolver
    /// behind the store's socket gate.
    pub(crate) fn lookup(&mut self) -> GuardedLookup<'_> {
        GuardedLookup {
            sockets: WasiSocketsCtxView {
                ctx: self.wasi.sockets(),
                table: &mut self.table,
            },
            gate: self.caps.net.gate.as_ref(),
        }
    }

    /// The store's descriptors, for the socket and file counts.
    pub(crate) fn descriptors(&mut self) -> &Arc<Holding> {
        &self.descriptors
    }

    /// The wasi:http view: the net cap's context with its guarded hooks.
    pub(crate) fn http(&mut self) -> wasmtime_wasi_http::WasiHttpCtxView<'_> {
        wasmtime_wasi_http::WasiHttpCtxView {
            ctx: &mut self.caps.net.http,
            table: &mut self.table,
            hooks: &mut self.caps.net.hooks,
        }
    }

    /// The `wasi:http` view with the store's count of what its values hold.
    pub(crate) fn http_held(&mut self) -> crate::cap::net::held::HttpHeld<'_> {
        crate::cap::net::held::HttpHeld {
            held: &mut self.caps.net.held,
            view: wasmtime_wasi_http::WasiHttpCtxView {
                ctx: &mut self.caps.net.http,
                table: &mut self.table,
                hooks: &mut self.caps.net.hooks,
            },
        }
    }
}

/// For the bindings that take the view by trait (a 0.3 handler's
/// `handle`): the same guarded view as [`StoreState::http`].
impl wasmtime_wasi_http::WasiHttpView for StoreState {
    fn http(&mut self) -> wasmtime_wasi_http::WasiHttpCtxView<'_> {
        StoreState::http(self)
    }
}

impl WasiView for StoreState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl HasDeadline for StoreState {
    fn deadline(&self) -> Deadline {
        self.deadline
    }

    fn output_over_cap(&self) -> bool {
        self.outputs.passed_cap().is_some()
    }
}

/// The output streams of a store the run reads back or checks after the
/// call: its own captured stdout and stderr, and the shared streams it
/// wrote under their caps.
#[derive(Debug, Clone, Default)]
pub(crate) struct Captured {
    pub(crate) stdout: Option<SessionOutput>,
    pub(crate) stderr: Option<SessionOutput>,
    /// Shared streams (`Output::Shared`) by the name of the stream the
    /// guest writes them as.
    pub(crate) shared: Vec<(&'static str, SessionOutput)>,
}

impl Captured {
    /// The first stream written past its cap: its name and the cap.
    pub(crate) fn passed_cap(&self) -> Option<(&'static str, usize)> {
        let own = [("stdout", &self.stdout), ("stderr", &self.stderr)]
            .into_iter()
            .filter_map(|(stream, out)| Some((stream, out.as_ref()?)));
        let shared = self.shared.iter().map(|(stream, out)| (*stream, out));
        own.chain(shared)
            .find_map(|(stream, out)| Some((stream, out.passed_cap()?)))
    }
}

/// The WASI stream `output` names for the guest's `stream` ("stdout" or
/// "stderr"; `host` is the host process's own), noting in `captured` what
/// the run reads back or checks.
fn output_stream(
    output: &Output,
    stream: &'static str,
    host: Box<dyn StdoutStream + Sync>,
    captured: &mut Captured,
) -> Box<dyn StdoutStream + Sync> {
    match output {
        Output::Capture => {
            let kept = SessionOutput::capture(MAX_CAPTURED_OUTPUT_BYTES);
            let slot = if stream == "stdout" {
                &mut captured.stdout
            } else {
                &mut captured.stderr
            };
            *slot = Some(kept.clone());
            Box::new(kept)
        }
        // The host's stdout, through the stream that ends the guest as a
        // closed pipe ends a process (exit 141) when its reader has gone,
        // rather than failing its writes into a trap.
        Output::Inherit if stream == "stdout" => Box::new(SessionOutput::inherit()),
        Output::Inherit => host,
        Output::Pipe(writer) => Box::new(writer.clone()),
        Output::Discard => Box::new(SinkOutputStream),
        Output::Shared(out) => {
            captured.shared.push((stream, out.clone()));
            Box::new(out.clone())
        }
    }
}

/// The data of a core-module store (the preview 1 lane).
pub(crate) struct ModuleState {
    pub(crate) wasi: WasiP1Ctx,
    pub(crate) limiter: MemoryLimiter,
    pub(crate) deadline: Deadline,
    pub(crate) launch: ModuleLaunch,
    /// The files this store holds, in its tenant's count.
    pub(crate) descriptors: Arc<Holding>,
}

impl HasDeadline for ModuleState {
    fn deadline(&self) -> Deadline {
        self.deadline
    }
}

/// What a store takes from the engine that builds it.
pub(crate) struct StoreHost<'a> {
    /// The wasmtime engine the store belongs to.
    pub(crate) wasmtime: &'a wasmtime::Engine,
    /// The home the preopens and volumes resolve under.
    pub(crate) home: &'a Path,
    /// The parts of the home services share with their guests.
    pub(crate) home_shares: &'a crate::preopen::HomeShares,
    /// The database, opened only if a granted cap needs it.
    pub(crate) storage: &'a Arc<StorageSlot>,
    /// Revocation, rate and audit for every brokered call.
    pub(crate) cadence: &'a Arc<Cadence>,
    /// The new store's descriptors, in the engine's per-tenant ledger.
    pub(crate) descriptors: Arc<Holding>,
    /// The signing keys (`secrets`).
    pub(crate) keyring: &'a Arc<Keyring>,
    /// The operator's model endpoint, when one is configured.
    pub(crate) llm: Option<&'a Arc<crate::cap::llm::LlmService>>,
    /// The session tenant's network reach.
    pub(crate) access: NetAccess,
    /// The session's memory cap.
    pub(crate) memory: usize,
    /// What runs commands (`commands`, `exec`).
    pub(crate) launcher: &'a dyn Fn() -> Arc<dyn Launcher>,
    /// Where the storage, signing and launch calls go when another
    /// process serves them (a container-tier child's parent).
    pub(crate) relay: Option<&'a Arc<dyn Relay>>,
}

/// The WASI context both lanes start from: argv, the environment, stdio
/// and the preopens of `opts`, nothing else.
fn wasi_for(
    home: (&Path, &crate::preopen::HomeShares),
    grant: &Grant,
    opts: &SessionOptions,
) -> Result<(WasiCtxBuilder, Captured), SessionError> {
    let program = opts.program.as_deref().unwrap_or(&opts.id);
    let argv_bytes: usize =
        program.len() + 1 + opts.args.iter().map(|a| a.len() + 1).sum::<usize>();
    if argv_bytes > MAX_ARGV_BYTES {
        return Err(SessionError::ArgvTooLarge(argv_bytes));
    }
    crate::environ::check(&opts.env)?;
    let mut wasi = WasiCtx::builder();
    wasi.arg(program)
        .args(&opts.args)
        .envs(&opts.env)
        .allow_blocking_current_thread(opts.inline_file_io);
    match &opts.stdin {
        Stdin::Empty => {}
        Stdin::Bytes(b) => {
            if b.len() > MAX_STDIN_BYTES {
                return Err(SessionError::StdinTooLarge(b.len()));
            }
            wasi.stdin(MemoryInputPipe::new(b.clone()));
        }
        Stdin::Inherit => {
            wasi.stdin(std::io::stdin());
        }
        Stdin::Pipe(reader) => {
            wasi.stdin(reader.clone());
        }
    }
    let mut captured = Captured::default();
    wasi.stdout(output_stream(
        &opts.stdout,
        "stdout",
        Box::new(std::io::stdout()),
        &mut captured,
    ));
    wasi.stderr(output_stream(
        &opts.stderr,
        "stderr",
        Box::new(std::io::stderr()),
        &mut captured,
    ));
    preopen_all(&mut wasi, home, grant, &opts.dirs)?;
    Ok((wasi, captured))
}

/// Builds a store for `opts` under `grant`. Storage is opened only when a
/// granted cap needs it.
pub(crate) fn new_store(
    host: StoreHost<'_>,
    grant: &Grant,
    opts: &SessionOptions,
) -> Result<(Store<StoreState>, Captured), SessionError> {
    let (mut wasi, captured) = wasi_for((host.home, host.home_shares), grant, opts)?;

    let mut contexts = caps::open(&host, grant, opts, &mut wasi, |_| true)?;
    contexts.net.held =
        crate::cap::net::held::Held::new(crate::limits::http_held_bytes(host.memory));
    let profile = grant.profile.effective;
    let state = StoreState {
        wasi: wasi.build(),
        table: ResourceTable::new(),
        limiter: MemoryLimiter::new(host.memory),
        deadline: Deadline::after(opts.timeout.unwrap_or(profile.timeout())),
        outputs: captured.clone(),
        session: SessionCtx {
            id: opts.id.clone(),
            tenant: opts.tenant.clone(),
            profile,
            caps: grant.caps,
        },
        caps: contexts,
        extension: None,
        descriptors: host.descriptors.clone(),
    };
    let mut store = enveloped(host.wasmtime, state, |s| &mut s.limiter, opts)?;
    bound_tables(&mut store);
    Ok((store, captured))
}

/// Caps a component store's tables: its host resources and, with
/// WASI 0.3, its async table (see the limits they are held to).
fn bound_tables(store: &mut Store<StoreState>) {
    use crate::limits::MAX_TABLE_ENTRIES;
    store.data_mut().table.set_max_capacity(MAX_TABLE_ENTRIES);
    if let Some(table) = store.concurrent_resource_table() {
        table.set_max_capacity(MAX_TABLE_ENTRIES);
    }
}

/// A store around `state` with the envelope on: the memory limiter, the
/// deadline check and the fuel (always metered; `None` means "as much as a
/// u64 holds").
fn enveloped<T: HasDeadline + 'static>(
    engine: &wasmtime::Engine,
    state: T,
    limiter: fn(&mut T) -> &mut MemoryLimiter,
    opts: &SessionOptions,
) -> Result<Store<T>, SessionError> {
    let mut store = Store::new(engine, state);
    store.limiter(move |s| limiter(s));
    crate::limits::install_deadline(&mut store);
    store
        .set_fuel(opts.fuel.unwrap_or(u64::MAX))
        .map_err(|e| SessionError::Engine(format!("{e:#}")))?;
    Ok(store)
}

/// Builds a core-module store (the preview 1 lane) for `opts` under
/// `grant`: the same argv, environment, stdio, preopens, memory cap,
/// deadline and fuel as a component's; its `workbooks.exec` calls reach
/// the launcher only under `exec`.
pub(crate) fn new_module_store(
    host: StoreHost<'_>,
    grant: &Grant,
    opts: &SessionOptions,
) -> Result<(Store<ModuleState>, Captured), SessionError> {
    let (mut wasi, captured) = wasi_for((host.home, host.home_shares), grant, opts)?;
    // Its `workbooks.exec` calls go through the launch row alone.
    let contexts = caps::open(&host, grant, opts, &mut wasi, |row| {
        row.interface == caps::LAUNCH
    })?;
    let state = ModuleState {
        wasi: wasi.build_p1(),
        limiter: MemoryLimiter::new(host.memory),
        deadline: Deadline::after(opts.timeout.unwrap_or(grant.profile.effective.timeout())),
        launch: ModuleLaunch::new(contexts.launch),
        descriptors: host.descriptors.clone(),
    };
    let store = enveloped(host.wasmtime, state, |s| &mut s.limiter, opts)?;
    Ok((store, captured))
}
