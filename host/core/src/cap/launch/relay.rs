//! `launch`'s relayed operations: one struct each, carrying the commands
//! layer's own types (the bindgen ones carry no serde). The serving side
//! answers `run`, `pipeline`, `run-many` and a module's exec from its
//! store's local backend, as it answers a guest in process; a job the
//! child started is a resource in the serving store's table, named to the
//! child by its number.

use super::{Fanned, Job, LaunchCtx, LaunchView};
use crate::cap::bindings::workbooks::host::launch::HostJob;
use crate::cap::relay::{RelayError, Relayed, encode, relay_calls};
use crate::commands::{CommandError, CommandOutput, PipelineError, StageRun};
use serde::{Deserialize, Serialize};
use wasmtime::component::{Resource, ResourceTable};

/// One pipeline stage as the caller asks for it; `Session` means the
/// answering store's own stream.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Stage {
    /// The command name.
    pub(crate) name: String,
    /// Its arguments, without the name.
    pub(crate) argv: Vec<String>,
    /// Where its stdin comes from.
    pub(crate) input: Source,
    /// Where its stdout goes.
    pub(crate) stdout: Sink,
}

/// Where a [`Stage`] reads: the WIT `stage-input`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Source {
    /// The previous stage's stdout.
    Pipe,
    /// These bytes.
    Bytes(Vec<u8>),
    /// The session's stdin, taken once.
    Session,
}

/// Where a [`Stage`] writes: the WIT `stage-sink`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub(crate) enum Sink {
    /// The next stage's stdin.
    Pipe,
    /// Kept and returned.
    Capture,
    /// The session's stdout.
    Session,
}

relay_calls! {
    Launch, serve by_hand, unanswered |_, why| Err(CommandError::Refused(why.to_string()));
    /// `launch.run` (needs `commands`).
    Run { name: String, argv: Vec<String>, stdin: Vec<u8> } -> Result<CommandOutput, CommandError>;
    /// `launch.pipeline` (needs `commands`).
    Pipeline { stages: Vec<Stage> } -> Result<Vec<StageRun>, PipelineError>,
        unanswered |_, why| Err(PipelineError { index: 0, error: CommandError::Refused(why.to_string()) });
    /// `launch.start` (needs `exec`); answered with the job's number.
    Start { name: String, argv: Vec<String>, stdin: Vec<u8> } -> Result<u32, CommandError>;
    /// `launch.run-many` (needs `parallel`): each input's argv and stdin.
    RunMany { name: String, inputs: Vec<(Vec<String>, Vec<u8>)>, width: u32 }
        -> Result<Fanned, CommandError>;
    /// `job.wait` of a job [`Start`] numbered.
    JobWait { job: u32 } -> Result<CommandOutput, CommandError>;
    /// `job.kill`; a relay that fails killed nothing.
    JobKill { job: u32 } -> bool, unanswered |_, _| false;
    /// A job dropped: it stops, and its number means nothing after.
    JobDrop { job: u32 } -> (), unanswered |_, _| ();
    /// A preview 1 module's `workbooks.exec` (needs `exec`).
    ModuleExec { name: String, argv: Vec<String>, stdin: Vec<u8> }
        -> Result<CommandOutput, CommandError>;
}

/// A trap of the serving store (a host bug, or a job number that names
/// nothing) as the child reads it.
fn trapped(e: wasmtime::Error) -> RelayError {
    RelayError(format!("refused: {e}"))
}

impl Relayed for super::Launch {
    type Call = Call;
    type CallRef<'a> = CallRef<'a>;

    /// Answers `call` from the store's launch context: through its
    /// backend, or for a job, through the `Host` traits themselves.
    async fn answer(
        call: Call,
        ctx: &mut LaunchCtx,
        table: &mut ResourceTable,
    ) -> Result<Vec<u8>, RelayError> {
        let view = &mut LaunchView { ctx, table };
        let backend = &mut view.ctx.0;
        match call {
            Call::Run(op) => encode(&backend.run_async(op).await),
            Call::Pipeline(op) => encode(&backend.run_async(op).await),
            Call::RunMany(op) => encode(&backend.run_async(op).await),
            Call::ModuleExec(op) => encode(&backend.run_async(op).await),
            Call::Start(Start { name, argv, stdin }) => {
                let started = view.start_job(name, argv, stdin).await;
                encode(&started.map_err(trapped)?.map(|job| job.rep()))
            }
            Call::JobWait(JobWait { job }) => {
                let waited = view.wait_job(&Resource::<Job>::new_own(job)).await;
                encode(&waited.map_err(trapped)?)
            }
            Call::JobKill(JobKill { job }) => {
                encode(&view.kill(Resource::<Job>::new_own(job)).map_err(trapped)?)
            }
            Call::JobDrop(JobDrop { job }) => {
                encode(&HostJob::drop(view, Resource::<Job>::new_own(job)).map_err(trapped)?)
            }
        }
    }
}
