//! `launch`'s relayed operations: one struct each. The serving side
//! answers them through the same [`Host`] and [`HostJob`] methods that
//! serve a guest in process, on its own store's launch context and
//! resource table (a job the child started is a resource there, named to
//! the child by its number).

use super::{Job, LaunchView};
use crate::cap::bindings::workbooks::engine::command_types::{
    CommandOutput, Error, PipelineStage, StageFailure, StageOutput, TaskInput, TaskResult,
};
use crate::cap::bindings::workbooks::host::launch::{Host, HostJob};
use crate::cap::relay::{RelayError, encode, relay_calls};
use crate::commands::CommandError;
use bytes::Bytes;
use wasmtime::component::Resource;

relay_calls! {
    Launch, serve by_hand, unanswered |_, why| Err(Error::Refused(why.to_string()));
    /// `launch.run` (needs `commands`).
    Run { name: String, argv: Vec<String>, stdin: Vec<u8> } -> Result<CommandOutput, Error>;
    /// `launch.pipeline` (needs `commands`).
    Pipeline { stages: Vec<PipelineStage> } -> Result<Vec<StageOutput>, StageFailure>,
        unanswered |_, why| Err(StageFailure { index: 0, error: Error::Refused(why.to_string()) });
    /// `launch.start` (needs `exec`); answered with the job's number.
    Start { name: String, argv: Vec<String>, stdin: Vec<u8> } -> Result<u32, Error>;
    /// `launch.run-many` (needs `parallel`).
    RunMany { name: String, inputs: Vec<TaskInput>, width: u32 } -> Result<Vec<TaskResult>, Error>;
    /// `job.wait` of a job [`Start`] numbered.
    JobWait { job: u32 } -> Result<CommandOutput, Error>;
    /// `job.kill`; a relay that fails killed nothing.
    JobKill { job: u32 } -> bool, unanswered |_, _| false;
    /// A job dropped: it stops, and its number means nothing after.
    JobDrop { job: u32 } -> (), unanswered |_, _| ();
    /// A preview 1 module's `workbooks.exec` (needs `exec`): its exit
    /// code, stdout and stderr.
    ModuleExec { name: String, argv: Vec<String>, stdin: Vec<u8> }
        -> Result<(i32, Bytes, Bytes), CommandError>,
        unanswered |_, why| Err(CommandError::Refused(why.to_string()));
}

/// A trap of the serving store (a host bug, or a job number that names
/// nothing) as the child reads it.
fn trapped(e: wasmtime::Error) -> RelayError {
    RelayError(format!("refused: {e}"))
}

impl Call {
    /// Answers this call from `view`, encoded.
    pub(crate) async fn answer(self, view: &mut LaunchView<'_>) -> Result<Vec<u8>, RelayError> {
        match self {
            Call::Run(Run { name, argv, stdin }) => {
                encode(&view.run(name, argv, stdin).await.map_err(trapped)?)
            }
            Call::Pipeline(Pipeline { stages }) => {
                encode(&view.pipeline(stages).await.map_err(trapped)?)
            }
            Call::Start(Start { name, argv, stdin }) => {
                let started = view.start(name, argv, stdin).await.map_err(trapped)?;
                encode(&started.map(|job| job.rep()))
            }
            Call::RunMany(RunMany {
                name,
                inputs,
                width,
            }) => encode(&view.run_many(name, inputs, width).await.map_err(trapped)?),
            Call::JobWait(JobWait { job }) => {
                let waited = view.wait(Resource::<Job>::new_own(job)).await;
                encode(&waited.map_err(trapped)?)
            }
            Call::JobKill(JobKill { job }) => {
                encode(&view.kill(Resource::<Job>::new_own(job)).map_err(trapped)?)
            }
            Call::JobDrop(JobDrop { job }) => {
                encode(&HostJob::drop(view, Resource::<Job>::new_own(job)).map_err(trapped)?)
            }
            Call::ModuleExec(exec) => encode(&view.ctx.0.run_async(exec).await),
        }
    }
}
