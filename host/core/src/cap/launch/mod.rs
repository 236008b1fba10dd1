//! `commands`, `exec` and `parallel`: run registered commands by name.
//!
//! Three layers. The guest imports `workbooks:engine/commands@0.1.0`
//! (run-command), `workbooks:engine/exec@0.1.0` (spawn, wait, kill) or
//! `workbooks:engine/parallel@0.1.0` (run-command-many); the dock composes
//! it with that cap's broker (`guests/commands-broker`,
//! `guests/exec-broker`, `guests/parallel-broker`), which checks the
//! request's shape and calls the host primitive
//! `workbooks:host/launch@0.1.0` implemented here. One primitive serves the
//! three caps; it is linked when any is granted.
//!
//! Invariant: the caller names a command and hands structured argv;
//! nothing it passes is ever read as shell text. On every call the host
//! checks the operation's own cap (`run` needs `commands`, `start` needs
//! `exec`, `run-many` needs `parallel`: a commands broker cannot spawn or
//! fan out), then runs the deny ladder (for each input of a fan-out), and
//! the command runs under the grant, preopens and budgets the host fixed
//! for the caller's session, one level deeper in the chain. A tenant
//! holds at most [`crate::commands::MAX_LIVE_PROCESSES_PER_TENANT`] jobs
//! that have not been awaited, killed or dropped (the fork-bomb guard), and
//! a dropped job stops its command.

mod host;
pub(crate) mod module;
pub(crate) mod relay;

pub(crate) use relay::{Call, CallRef};

use crate::cap::bindings::workbooks::host::launch;
use crate::cap::relay::{Relay, tell};
use crate::cap::unit::{CapUnit, Holds, Opening};
use crate::commands::ladder::Slot;
use crate::commands::{
    CommandEnv, CommandError, CommandOutput, PipelineError, StageRun, StageSpec,
};
use crate::pipes::{SessionInput, SessionOutput};
use crate::policy::{Cap, CapSet};
use crate::store::StorageError;
use bytes::Bytes;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use wasmtime::component::{HasData, Linker, ResourceTable};
use wasmtime_wasi::WasiCtxBuilder;

/// A command run in flight.
pub(crate) type Running<'a> =
    Pin<Box<dyn Future<Output = Result<CommandOutput, CommandError>> + Send + 'a>>;

/// A fan-out running: each input's outcome and wall time, in input order.
pub(crate) type Fanning<'a> = Pin<
    Box<
        dyn Future<Output = Vec<(Result<CommandOutput, CommandError>, std::time::Duration)>>
            + Send
            + 'a,
    >,
>;

/// A pipeline running: every stage's result in order, or the first failure.
pub(crate) type Piping<'a> =
    Pin<Box<dyn Future<Output = Result<Vec<StageRun>, PipelineError>> + Send + 'a>>;

/// What actually runs a command: the deny ladder, then the command in its
/// envelope. The engine implements it; this primitive only decides whether
/// the caller may ask.
pub(crate) trait Launcher: Send + Sync {
    /// Runs `name` for `env` through the `cap` interface, to its end.
    fn run<'a>(
        &'a self,
        env: &'a CommandEnv,
        cap: Cap,
        name: &'a str,
        argv: Vec<String>,
        stdin: Bytes,
    ) -> Running<'a>;

    /// Runs a pipeline's stages at once for `env` through `cap`.
    fn pipeline<'a>(&'a self, env: &'a CommandEnv, cap: Cap, stages: Vec<StageSpec>) -> Piping<'a>;

    /// Runs `name` once per `(argv, stdin)` for `env` through `cap`,
    /// `width` at a time, each admitted by the ladder on its own.
    fn many<'a>(
        &'a self,
        env: &'a CommandEnv,
        cap: Cap,
        name: &'a str,
        tasks: Vec<(Vec<String>, Bytes)>,
        width: usize,
    ) -> Fanning<'a>;

    /// Admits `name` through the ladder now (a refusal is immediate, not
    /// found at `wait`) and starts it in the background.
    fn start(
        &self,
        env: &CommandEnv,
        cap: Cap,
        name: &str,
        argv: Vec<String>,
        stdin: Bytes,
    ) -> Result<Job, CommandError>;
}

/// A started command.
pub struct Job {
    task: Option<tokio::task::JoinHandle<Result<CommandOutput, CommandError>>>,
    _live: Option<Slot>,
    /// A job the relay's serving side started, by its number there.
    relayed: Option<(Arc<dyn Relay>, u32)>,
}

impl Job {
    /// A job for a running task holding one live-process slot.
    pub(crate) fn new(
        task: tokio::task::JoinHandle<Result<CommandOutput, CommandError>>,
        live: Slot,
    ) -> Self {
        Self {
            task: Some(task),
            _live: Some(live),
            relayed: None,
        }
    }

    /// The job numbered `job` on the serving side of `relay`.
    pub(crate) fn relayed(relay: Arc<dyn Relay>, job: u32) -> Self {
        Self {
            task: None,
            _live: None,
            relayed: Some((relay, job)),
        }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
        if let Some((relay, job)) = &self.relayed {
            tell(&**relay, &relay::JobDrop { job: *job });
        }
    }
}

/// Who this store's commands run as and which operations it was granted;
/// the default reaches nothing.
#[derive(Default)]
pub(crate) struct LaunchCtx {
    runner: Option<(Arc<dyn Launcher>, CommandEnv)>,
    /// Where every call goes instead, in a relayed store: the serving side
    /// checks the cap of each operation against its own grant.
    relay: Option<Arc<dyn Relay>>,
    granted: CapSet,
    /// The session's stream for a pipeline's `session` input, taken once.
    session_input: Option<SessionInput>,
    /// The session's stdout for a pipeline's `session` output, shared.
    session_output: Option<SessionOutput>,
}

impl std::fmt::Debug for LaunchCtx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LaunchCtx")
            .field("env", &self.runner.as_ref().map(|(_, env)| env))
            .field("granted", &self.granted)
            .finish()
    }
}

impl LaunchCtx {
    /// Runs commands as `env` through `launcher`, for the operations of
    /// `caps` (of `commands`, `exec` and `parallel`, those granted).
    pub(crate) fn new(launcher: Arc<dyn Launcher>, env: CommandEnv, caps: CapSet) -> Self {
        Self {
            runner: Some((launcher, env)),
            relay: None,
            granted: caps,
            session_input: None,
            session_output: None,
        }
    }

    /// Sends every call to `relay` (see [`crate::cap::relay`]).
    pub(crate) fn relayed(relay: Arc<dyn Relay>, caps: CapSet) -> Self {
        Self {
            relay: Some(relay),
            granted: caps,
            ..Self::default()
        }
    }

    /// The relay calls go to, in a relayed store.
    pub(crate) fn relay(&self) -> Option<Arc<dyn Relay>> {
        self.relay.clone()
    }

    /// The same, holding `input` for the first pipeline stage that asks for
    /// the session's stdin.
    pub(crate) fn with_session_input(mut self, input: Option<SessionInput>) -> Self {
        self.session_input = input;
        self
    }

    /// The session's stdin for a pipeline, once; `None` after that.
    pub(crate) fn take_session_input(&mut self) -> Option<SessionInput> {
        self.session_input.take()
    }

    /// The same, holding `output` for every pipeline stage that asks to
    /// write the session's stdout.
    pub(crate) fn with_session_output(mut self, output: Option<SessionOutput>) -> Self {
        self.session_output = output;
        self
    }

    /// The session's stdout for a pipeline stage, if it has one.
    pub(crate) fn session_output(&self) -> Option<SessionOutput> {
        self.session_output.clone()
    }

    /// The launcher and the caller, if the caller holds `cap`.
    pub(crate) fn runner(&self, cap: Cap) -> Option<(&dyn Launcher, &CommandEnv)> {
        match &self.runner {
            Some((launcher, env)) if self.granted.contains(cap) => Some((&**launcher, env)),
            _ => None,
        }
    }
}

/// The launch context borrowed with the store's resource table.
pub(crate) struct LaunchView<'a> {
    pub(crate) ctx: &'a mut LaunchCtx,
    pub(crate) table: &'a mut ResourceTable,
}

struct HasLaunch;

impl HasData for HasLaunch {
    type Data<'a> = LaunchView<'a>;
}

/// Links the `launch` primitive the commands and exec brokers import.
pub(crate) fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> LaunchView<'_>,
) -> wasmtime::Result<()> {
    launch::add_to_linker::<T, HasLaunch>(linker, get)
}

/// The `launch` unit: the host primitive the commands, exec and parallel
/// brokers import. Its context is opened only under `commands` or `exec`
/// (`parallel` fans out what they run), running commands as the
/// session's tenant with its preopens, policy and environment.
pub(crate) struct Launch;

/// A store's launch context borrowed with its resource table.
fn view<T: Holds<Launch>>(store: &mut T) -> LaunchView<'_> {
    let (ctx, table) = store.context_and_table();
    LaunchView { ctx, table }
}

impl CapUnit for Launch {
    const INTERFACE: &'static str = "workbooks:host/launch";
    const PER_TENANT: bool = false;
    type Ctx = LaunchCtx;

    fn link<T: Holds<Self>>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
        add_to_linker(linker, view::<T>)
    }

    fn open(o: &Opening<'_>, _: &mut WasiCtxBuilder) -> Result<LaunchCtx, StorageError> {
        if !o.caps.contains(Cap::Commands) && !o.caps.contains(Cap::Exec) {
            return Ok(LaunchCtx::default());
        }
        if let Some(relay) = o.relay {
            return Ok(LaunchCtx::relayed(relay.clone(), o.caps));
        }
        let env = CommandEnv {
            tenant: o.tenant.to_string(),
            session_id: o.id.to_string(),
            caller_caps: o.grant.caps,
            grant: o
                .commands
                .stage_grant
                .clone()
                .unwrap_or_else(|| o.grant.clone()),
            dirs: o.dirs.to_vec(),
            policy: o.commands.clone(),
        };
        Ok(LaunchCtx::new((o.launcher)(), env, o.caps)
            .with_session_input(o.pipeline_stdin.cloned())
            .with_session_output(o.pipeline_stdout.cloned()))
    }
}
