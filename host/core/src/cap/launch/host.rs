use super::relay::{
    JobKill, JobWait, ModuleExec, Pipeline, Run, RunMany, Sink, Source, Stage, Start,
};
use super::{Fanned, Job, JobRun, LaunchView, Local};
use crate::cap::bindings::workbooks::engine::command_types::{
    CommandOutput, Error, PipelineStage, StageFailure, StageInput, StageOutput, StageSink,
    TaskInput, TaskResult,
};
use crate::cap::bindings::workbooks::host::launch::{Host, HostJob};
use crate::cap::relay::{Backend, ServeAsync, ask, ask_async};
use crate::commands::{self, CommandError, PipelineError, StageRun, StageSpec};
use crate::policy::Cap;
use bytes::Bytes;
use wasmtime::component::Resource;

/// The guest-visible form of a command error.
pub(crate) fn to_wit_error(e: CommandError) -> Error {
    match e {
        CommandError::Revoked => Error::Revoked,
        CommandError::RateLimited => Error::RateLimited,
        CommandError::Denied => Error::Denied,
        CommandError::MaxDepth(n) => Error::MaxDepth(n),
        CommandError::NotGranted(n) => Error::CommandNotGranted(n),
        CommandError::Unknown(n) => Error::UnknownCommand(n),
        CommandError::TooManyRunning(n) => Error::TooManyRunning(n),
        CommandError::Integrity(s) => Error::ArtifactIntegrity(s),
        CommandError::ArgvTooLarge(n) => Error::ArgvTooLarge(n),
        CommandError::StdinTooLarge(n) => Error::StdinTooLarge(n),
        CommandError::OutputTooLarge(n) => Error::OutputTooLarge(n),
        CommandError::Timeout(d) => Error::Timeout(d.as_millis() as u64),
        CommandError::Memory(n) => Error::MemoryLimit(n),
        CommandError::Fuel => Error::FuelExhausted,
        CommandError::Trap(s) => Error::Trap(s),
        CommandError::Refused(s) => Error::Refused(s),
    }
}

fn output(out: commands::CommandOutput) -> CommandOutput {
    CommandOutput {
        stdout: out.stdout.into(),
        stderr: out.stderr.into(),
        exit_code: out.exit_code,
    }
}

/// A guest's pipeline stage as the relay carries it.
fn stage(stage: PipelineStage) -> Stage {
    Stage {
        name: stage.name,
        argv: stage.argv,
        input: match stage.input {
            StageInput::Pipe => Source::Pipe,
            StageInput::Bytes(bytes) => Source::Bytes(bytes),
            StageInput::Session => Source::Session,
        },
        stdout: match stage.stdout {
            StageSink::Pipe => Sink::Pipe,
            StageSink::Capture => Sink::Capture,
            StageSink::Session => Sink::Session,
        },
    }
}

impl ServeAsync<Run> for Local {
    async fn serve(
        &mut self,
        Run { name, argv, stdin }: Run,
    ) -> Result<commands::CommandOutput, CommandError> {
        let Some((launcher, env)) = self.launcher(Cap::Commands) else {
            return Err(CommandError::Denied);
        };
        let running = launcher.run(env, Cap::Commands, &name, argv, Bytes::from(stdin));
        running.await
    }
}

impl ServeAsync<Pipeline> for Local {
    async fn serve(
        &mut self,
        Pipeline { stages }: Pipeline,
    ) -> Result<Vec<StageRun>, PipelineError> {
        let denied = PipelineError {
            index: 0,
            error: CommandError::Denied,
        };
        PipelineError::check_length(stages.len())?;
        // Checked before the session's streams are taken; the launcher is
        // borrowed only once the stages are converted.
        if self.launcher(Cap::Commands).is_none() {
            return Err(denied);
        }
        let mut specs = Vec::with_capacity(stages.len());
        for stage in stages {
            let input = match stage.input {
                Source::Pipe => commands::StageInput::Pipe,
                Source::Bytes(bytes) => commands::StageInput::Bytes(Bytes::from(bytes)),
                Source::Session => match self.session_input.take() {
                    Some(input) => commands::StageInput::Stream(input.open()),
                    None => commands::StageInput::Bytes(Bytes::new()),
                },
            };
            let stdout = match stage.stdout {
                Sink::Pipe => commands::StageSink::Pipe,
                Sink::Capture => commands::StageSink::Capture,
                Sink::Session => self
                    .session_output
                    .clone()
                    .map_or(commands::StageSink::Capture, commands::StageSink::Stream),
            };
            specs.push(StageSpec {
                name: stage.name,
                argv: stage.argv,
                input,
                stdout,
            });
        }
        let Some((launcher, env)) = self.launcher(Cap::Commands) else {
            return Err(denied);
        };
        launcher.pipeline(env, Cap::Commands, specs).await
    }
}

/// `run-many`: the caller must hold `parallel`; the input and width caps
/// hold here whatever the broker let through.
impl ServeAsync<RunMany> for Local {
    async fn serve(
        &mut self,
        RunMany {
            name,
            inputs,
            width,
        }: RunMany,
    ) -> Result<Fanned, CommandError> {
        use crate::limits::{FAN_MAX_WIDTH, FAN_WIDTH, PARALLEL_MAX_INPUTS};
        let Some((launcher, env)) = self.launcher(Cap::Parallel) else {
            return Err(CommandError::Denied);
        };
        if inputs.len() > PARALLEL_MAX_INPUTS {
            return Err(CommandError::Refused(format!(
                "run-command-many takes at most {PARALLEL_MAX_INPUTS} inputs; this call has {}",
                inputs.len()
            )));
        }
        let width = match width as usize {
            0 => FAN_WIDTH,
            w if w > FAN_MAX_WIDTH => {
                return Err(CommandError::Refused(format!(
                    "run-command-many runs at most {FAN_MAX_WIDTH} at once; width {w} asked"
                )));
            }
            w => w,
        };
        let tasks = inputs
            .into_iter()
            .map(|(argv, stdin)| (argv, Bytes::from(stdin)))
            .collect();
        Ok(launcher.many(env, Cap::Parallel, &name, tasks, width).await)
    }
}

/// A preview 1 module's `workbooks.exec`: the caller must hold `exec`.
impl ServeAsync<ModuleExec> for Local {
    async fn serve(
        &mut self,
        ModuleExec { name, argv, stdin }: ModuleExec,
    ) -> Result<commands::CommandOutput, CommandError> {
        let Some((launcher, env)) = self.launcher(Cap::Exec) else {
            return Err(CommandError::Denied);
        };
        launcher
            .run(env, Cap::Exec, &name, argv, Bytes::from(stdin))
            .await
    }
}

impl Local {
    /// `launch.start`: admitted through the ladder now, run in the
    /// background.
    fn start(&self, name: &str, argv: Vec<String>, stdin: Vec<u8>) -> Result<Job, CommandError> {
        let Some((launcher, env)) = self.launcher(Cap::Exec) else {
            return Err(CommandError::Denied);
        };
        launcher.start(env, Cap::Exec, name, argv, Bytes::from(stdin))
    }
}

impl LaunchView<'_> {
    /// Starts a job (here, or on the relay's serving side, which names it
    /// by its number) and holds it in the table.
    pub(super) async fn start_job(
        &mut self,
        name: String,
        argv: Vec<String>,
        stdin: Vec<u8>,
    ) -> wasmtime::Result<Result<Resource<Job>, CommandError>> {
        let job = match &self.ctx.0 {
            Backend::Local(local) => local.start(&name, argv, stdin),
            Backend::Relayed(relay) => ask_async(&**relay, Start { name, argv, stdin })
                .await
                .map(|job| Job::relayed(relay.clone(), job)),
        };
        Ok(match job {
            Ok(job) => Ok(self.table.push(job)?),
            Err(e) => Err(e),
        })
    }

    /// Waits for the job `this` to end, wherever it runs.
    pub(super) async fn wait_job(
        &mut self,
        this: &Resource<Job>,
    ) -> wasmtime::Result<Result<commands::CommandOutput, CommandError>> {
        let task = match &mut self.table.get_mut(this)?.0 {
            JobRun::Relayed { relay, job } => {
                let (relay, job) = (relay.clone(), *job);
                return Ok(ask_async(&*relay, JobWait { job }).await);
            }
            JobRun::Local { task, .. } => task.take(),
        };
        let Some(task) = task else {
            return Ok(Err(CommandError::Unknown("process already awaited".into())));
        };
        Ok(match task.await {
            Ok(r) => r,
            Err(e) if e.is_cancelled() => Err(CommandError::Trap("killed".into())),
            Err(e) => Err(CommandError::Trap(format!("process task failed: {e}"))),
        })
    }
}

impl Host for LaunchView<'_> {
    async fn run(
        &mut self,
        name: String,
        argv: Vec<String>,
        stdin: Vec<u8>,
    ) -> wasmtime::Result<Result<CommandOutput, Error>> {
        let ran = self.ctx.0.run_async(Run { name, argv, stdin }).await;
        Ok(ran.map(output).map_err(to_wit_error))
    }

    async fn pipeline(
        &mut self,
        stages: Vec<PipelineStage>,
    ) -> wasmtime::Result<Result<Vec<StageOutput>, StageFailure>> {
        let stages = stages.into_iter().map(stage).collect();
        let ran = self.ctx.0.run_async(Pipeline { stages }).await;
        Ok(match ran {
            Ok(runs) => Ok(runs
                .into_iter()
                .map(|run| StageOutput {
                    elapsed_us: run.output.elapsed.as_micros() as u64,
                    stdout_bytes: run.stdout_bytes,
                    output: output(run.output),
                })
                .collect()),
            Err(e) => Err(StageFailure {
                index: e.index,
                error: to_wit_error(e.error),
            }),
        })
    }

    async fn start(
        &mut self,
        name: String,
        argv: Vec<String>,
        stdin: Vec<u8>,
    ) -> wasmtime::Result<Result<Resource<Job>, Error>> {
        Ok(self
            .start_job(name, argv, stdin)
            .await?
            .map_err(to_wit_error))
    }

    async fn run_many(
        &mut self,
        name: String,
        inputs: Vec<TaskInput>,
        width: u32,
    ) -> wasmtime::Result<Result<Vec<TaskResult>, Error>> {
        let inputs = inputs.into_iter().map(|i| (i.argv, i.stdin)).collect();
        let call = RunMany {
            name,
            inputs,
            width,
        };
        let done = self.ctx.0.run_async(call).await.map_err(to_wit_error);
        Ok(done.map(|done| {
            done.into_iter()
                .map(|(out, dur)| TaskResult {
                    outcome: out.map(output).map_err(to_wit_error),
                    dur_ms: dur.as_millis() as u64,
                })
                .collect()
        }))
    }
}

impl HostJob for LaunchView<'_> {
    async fn wait(
        &mut self,
        this: Resource<Job>,
    ) -> wasmtime::Result<Result<CommandOutput, Error>> {
        let waited = self.wait_job(&this).await?;
        Ok(waited.map(output).map_err(to_wit_error))
    }

    fn kill(&mut self, this: Resource<Job>) -> wasmtime::Result<bool> {
        Ok(match &self.table.get_mut(&this)?.0 {
            JobRun::Relayed { relay, job } => ask(&**relay, JobKill { job: *job }),
            JobRun::Local {
                task: Some(task), ..
            } if !task.is_finished() => {
                task.abort();
                true
            }
            JobRun::Local { .. } => false,
        })
    }

    fn drop(&mut self, this: Resource<Job>) -> wasmtime::Result<()> {
        self.table.delete(this)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{LaunchCtx, Launcher, Piping, Running};
    use super::*;
    use crate::commands::{CommandEnv, CommandPolicy};
    use crate::limits::MAX_PIPELINE_STAGES;
    use crate::policy::{CapSet, Grant};
    use std::sync::{Arc, Mutex};
    use wasmtime::component::ResourceTable;

    /// A launcher that records which operation reached it and runs nothing.
    #[derive(Default)]
    struct Recorder(Mutex<Vec<(Cap, String)>>);

    impl Launcher for Recorder {
        fn run<'a>(
            &'a self,
            _: &'a CommandEnv,
            cap: Cap,
            name: &'a str,
            _: Vec<String>,
            _: Bytes,
        ) -> Running<'a> {
            self.0.lock().unwrap().push((cap, name.to_string()));
            Box::pin(async move { Err(CommandError::Unknown(name.to_string())) })
        }

        fn pipeline<'a>(
            &'a self,
            _: &'a CommandEnv,
            cap: Cap,
            stages: Vec<StageSpec>,
        ) -> Piping<'a> {
            // A stage that writes the session's stdout is marked, and writes
            // its name there.
            let names: Vec<String> = stages
                .iter()
                .map(|s| match &s.stdout {
                    commands::StageSink::Stream(out) => {
                        out.write_all(s.name.as_bytes()).unwrap();
                        format!("{}@session", s.name)
                    }
                    commands::StageSink::Pipe => format!("{}@pipe", s.name),
                    commands::StageSink::Capture => s.name.clone(),
                })
                .collect();
            self.0.lock().unwrap().push((cap, names.join("|")));
            Box::pin(async { Ok(Vec::new()) })
        }

        fn start(
            &self,
            _: &CommandEnv,
            cap: Cap,
            name: &str,
            _: Vec<String>,
            _: Bytes,
        ) -> Result<Job, CommandError> {
            self.0.lock().unwrap().push((cap, name.to_string()));
            Err(CommandError::Unknown(name.to_string()))
        }

        fn many<'a>(
            &'a self,
            _: &'a CommandEnv,
            cap: Cap,
            name: &'a str,
            tasks: Vec<(Vec<String>, Bytes)>,
            width: usize,
        ) -> super::super::Fanning<'a> {
            self.0
                .lock()
                .unwrap()
                .push((cap, format!("{name}×{}@{width}", tasks.len())));
            Box::pin(async { Vec::new() })
        }
    }

    fn stage(name: &str) -> PipelineStage {
        PipelineStage {
            name: name.into(),
            argv: Vec::new(),
            input: StageInput::Pipe,
            stdout: StageSink::Capture,
        }
    }

    #[tokio::test]
    async fn a_session_sink_reaches_the_sessions_stdout_only_where_it_has_one() {
        let launcher = Arc::new(Recorder::default());
        let mut table = ResourceTable::new();
        let session = |name: &str| PipelineStage {
            stdout: StageSink::Session,
            ..stage(name)
        };
        // Without one (any component but the shell), it is captured.
        let mut plain = ctx(&launcher, &[Cap::Commands]);
        let mut view = LaunchView {
            ctx: &mut plain,
            table: &mut table,
        };
        view.pipeline(vec![session("alone")])
            .await
            .unwrap()
            .unwrap();
        // With one, every stage asking gets the same stream.
        let out = crate::pipes::SessionOutput::capture(64);
        let mut shell = ctx(&launcher, &[Cap::Commands]).with_session_output(Some(out.clone()));
        let mut view = LaunchView {
            ctx: &mut shell,
            table: &mut table,
        };
        let piped = PipelineStage {
            stdout: StageSink::Pipe,
            ..stage("first")
        };
        view.pipeline(vec![piped, session("last")])
            .await
            .unwrap()
            .unwrap();
        view.pipeline(vec![session("again")])
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            *launcher.0.lock().unwrap(),
            [
                (Cap::Commands, "alone".to_string()),
                (Cap::Commands, "first@pipe|last@session".to_string()),
                (Cap::Commands, "again@session".to_string()),
            ]
        );
        assert_eq!(&out.take()[..], b"lastagain");
    }

    fn ctx(launcher: &Arc<Recorder>, caps: &[Cap]) -> LaunchCtx {
        let caps = CapSet::of(caps);
        let env = CommandEnv {
            tenant: "t".into(),
            session_id: "s".into(),
            caller_caps: caps,
            grant: Grant::profile("minimal"),
            dirs: Vec::new(),
            policy: CommandPolicy::default(),
            scope: None,
        };
        LaunchCtx::new(launcher.clone(), env, caps)
    }

    #[tokio::test]
    async fn each_operation_needs_its_own_cap_whatever_the_broker_asks() {
        let launcher = Arc::new(Recorder::default());
        let mut table = ResourceTable::new();
        let mut commands_only = ctx(&launcher, &[Cap::Commands]);
        let mut view = LaunchView {
            ctx: &mut commands_only,
            table: &mut table,
        };
        let started = view.start("spawned".into(), vec![], vec![]).await.unwrap();
        assert!(
            matches!(started, Err(Error::Denied)),
            "a commands broker spawned"
        );
        let ran = view.run("ran".into(), vec![], vec![]).await.unwrap();
        assert!(matches!(ran, Err(Error::UnknownCommand(_))), "{ran:?}");
        let piped = view.pipeline(vec![stage("a"), stage("b")]).await.unwrap();
        assert!(piped.is_ok(), "{piped:?}");
        let too_long = view
            .pipeline((0..=MAX_PIPELINE_STAGES).map(|_| stage("x")).collect())
            .await
            .unwrap();
        assert!(
            matches!(&too_long, Err(f) if matches!(f.error, Error::Refused(_))),
            "a pipeline past the stage limit reached the launcher"
        );

        let mut exec_only = ctx(&launcher, &[Cap::Exec]);
        let mut view = LaunchView {
            ctx: &mut exec_only,
            table: &mut table,
        };
        let ran = view
            .run("ran-by-exec".into(), vec![], vec![])
            .await
            .unwrap();
        assert!(
            matches!(ran, Err(Error::Denied)),
            "an exec broker ran to completion"
        );
        let piped = view.pipeline(vec![stage("piped-by-exec")]).await.unwrap();
        assert!(
            matches!(&piped, Err(f) if matches!(f.error, Error::Denied)),
            "an exec broker ran a pipeline"
        );
        let started = view.start("started".into(), vec![], vec![]).await.unwrap();
        assert!(
            matches!(started, Err(Error::UnknownCommand(_))),
            "{started:?}"
        );

        let mut nothing = LaunchCtx::default();
        let mut view = LaunchView {
            ctx: &mut nothing,
            table: &mut table,
        };
        let ran = view.run("ungranted".into(), vec![], vec![]).await.unwrap();
        assert!(matches!(ran, Err(Error::Denied)));
        let piped = view.pipeline(vec![stage("ungranted")]).await.unwrap();
        assert!(matches!(&piped, Err(f) if matches!(f.error, Error::Denied)));
        // Only the calls each cap covers reached the launcher.
        assert_eq!(
            *launcher.0.lock().unwrap(),
            [
                (Cap::Commands, "ran".to_string()),
                (Cap::Commands, "a|b".to_string()),
                (Cap::Exec, "started".to_string())
            ]
        );
    }

    #[tokio::test]
    async fn run_many_needs_parallel_and_holds_its_caps_whatever_the_broker_passes() {
        let launcher = Arc::new(Recorder::default());
        let mut table = ResourceTable::new();
        let input = || TaskInput {
            argv: Vec::new(),
            stdin: Vec::new(),
        };
        // commands and exec do not fan out.
        let mut no_parallel = ctx(&launcher, &[Cap::Commands, Cap::Exec]);
        let mut view = LaunchView {
            ctx: &mut no_parallel,
            table: &mut table,
        };
        let err = view
            .run_many("jq".into(), vec![input()], 1)
            .await
            .unwrap()
            .unwrap_err();
        assert!(matches!(err, Error::Denied), "{err:?}");
        // Past the input and width caps, as a swapped broker might send.
        let mut parallel = ctx(&launcher, &[Cap::Parallel]);
        let mut view = LaunchView {
            ctx: &mut parallel,
            table: &mut table,
        };
        let too_many = (0..1025).map(|_| input()).collect();
        let err = view.run_many("jq".into(), too_many, 1).await.unwrap();
        let err = err.unwrap_err();
        assert!(
            matches!(&err, Error::Refused(why) if why.contains("at most 1024 inputs")),
            "{err:?}"
        );
        let err = view
            .run_many("jq".into(), vec![input()], 65)
            .await
            .unwrap()
            .unwrap_err();
        assert!(
            matches!(&err, Error::Refused(why) if why.contains("width 65")),
            "{err:?}"
        );
        // Within them, the launcher is asked through parallel, width 0 as 16.
        view.run_many("jq".into(), vec![input(), input()], 0)
            .await
            .unwrap()
            .unwrap();
        let seen = launcher.0.lock().unwrap().clone();
        assert_eq!(seen, vec![(Cap::Parallel, "jq×2@16".to_string())]);
    }
}
