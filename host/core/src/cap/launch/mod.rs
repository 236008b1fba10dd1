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

use crate::cap::bindings::workbooks::host::launch;
use crate::cap::relay::{Backend, Relay, tell};
use crate::cap::unit::{CapUnit, Holds, Opening};
use crate::commands::ladder::Slot;
use crate::commands::{
    CommandEnv, CommandError, CommandOutput, PipelineError, StageRun, StageSpec,
};
use crate::pipes::{SessionInput, SessionOutput};
use crate::policy::{Cap, CapSet};
use crate::storage::StorageError;
use bytes::Bytes;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use wasmtime::component::{HasData, Linker, ResourceTable};
use wasmtime_wasi::WasiCtxBuilder;

/// A command run in flight.
pub(crate) type Running<'a> =
    Pin<Box<dyn Future<Output = Result<CommandOutput, CommandError>> + Send + 'a>>;

/// A fan-out's result: each input's outcome and wall time, in input order.
pub(crate) type Fanned = Vec<(Result<CommandOutput, CommandError>, std::time::Duration)>;

/// A fan-out running.
pub(crate) type Fanning<'a> = Pin<Box<dyn Future<Output = Fanned> + Send + 'a>>;

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
pub struct Job(JobRun);

/// Where a job runs.
enum JobRun {
    /// Here: its task and the live-process slot it holds.
    Local {
        task: Option<tokio::task::JoinHandle<Result<CommandOutput, CommandError>>>,
        _live: Slot,
    },
    /// On the relay's serving side, by its number there.
    Relayed { relay: Arc<dyn Relay>, job: u32 },
}

impl Job {
    /// A job for a running task holding one live-process slot.
    pub(crate) fn new(
        task: tokio::task::JoinHandle<Result<CommandOutput, CommandError>>,
        live: Slot,
    ) -> Self {
        Job(JobRun::Local {
            task: Some(task),
            _live: live,
        })
    }

    /// The job numbered `job` on the serving side of `relay`.
    pub(crate) fn relayed(relay: Arc<dyn Relay>, job: u32) -> Self {
        Job(JobRun::Relayed { relay, job })
    }

    /// Its number on the relay's serving side, if it runs there.
    #[cfg(test)]
    pub(crate) fn relayed_number(&self) -> Option<u32> {
        match self.0 {
            JobRun::Relayed { job, .. } => Some(job),
            JobRun::Local { .. } => None,
        }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        match &self.0 {
            JobRun::Local {
                task: Some(task), ..
            } => task.abort(),
            JobRun::Local { .. } => {}
            JobRun::Relayed { relay: to, job } => tell(&**to, &relay::JobDrop { job: *job }),
        }
    }
}

/// Who this store's commands run as and which operations it was granted,
/// here or through the relay (the serving side checks the cap of each
/// operation against its own grant); the default reaches nothing.
#[derive(Debug, Default)]
pub(crate) struct LaunchCtx(pub(crate) Backend<Local>);

/// Runs a store's commands in this process.
#[derive(Default)]
pub(crate) struct Local {
    launcher: Option<(Arc<dyn Launcher>, CommandEnv)>,
    granted: CapSet,
    /// The session's stream for a pipeline's `session` input, taken once.
    session_input: Option<SessionInput>,
    /// The session's stdout for a pipeline's `session` output, shared.
    session_output: Option<SessionOutput>,
}

impl std::fmt::Debug for Local {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Local")
            .field("env", &self.launcher.as_ref().map(|(_, env)| env))
            .field("granted", &self.granted)
            .finish()
    }
}

impl Local {
    /// The launcher and the caller, if the caller holds `cap`.
    fn launcher(&self, cap: Cap) -> Option<(&dyn Launcher, &CommandEnv)> {
        match &self.launcher {
            Some((launcher, env)) if self.granted.contains(cap) => Some((&**launcher, env)),
            _ => None,
        }
    }
}

#[cfg(test)]
impl LaunchCtx {
    /// Runs commands as `env` through `launcher`, for the operations of
    /// `caps` (of `commands`, `exec` and `parallel`, those granted).
    pub(crate) fn new(launcher: Arc<dyn Launcher>, env: CommandEnv, caps: CapSet) -> Self {
        LaunchCtx(Backend::Local(Local {
            launcher: Some((launcher, env)),
            granted: caps,
            session_input: None,
            session_output: None,
        }))
    }

    /// The same, holding `output` for every pipeline stage that asks to
    /// write the session's stdout.
    pub(crate) fn with_session_output(mut self, output: Option<SessionOutput>) -> Self {
        if let Backend::Local(local) = &mut self.0 {
            local.session_output = output;
        }
        self
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
        Ok(LaunchCtx(Backend::open(o.relay, || Local {
            launcher: Some(((o.launcher)(), session_env(o))),
            granted: o.caps,
            session_input: o.pipeline_stdin.cloned(),
            session_output: o.pipeline_stdout.cloned(),
        })))
    }
}

/// The caller of a session's commands: its tenant, its instance id, its
/// preopens, and the grant and policy its commands run under.
fn session_env(o: &Opening<'_>) -> CommandEnv {
    CommandEnv {
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
        scope: o.scope.cloned(),
    }
}
