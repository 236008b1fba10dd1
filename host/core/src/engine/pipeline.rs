//! Running a pipeline: every stage at once, joined by bounded pipes.
//!
//! This is what `launch.pipeline` (and so the shell) runs. Every stage is
//! admitted through the deny ladder before any starts, so a line naming an
//! unknown command runs nothing. Then each stage runs in its own store
//! with its own fuel, memory cap and deadline, exactly as `launch.run`
//! would run it, except that its stdin and stdout are the ends of
//! [`crate::pipes`] pipes: a writer waits while its reader is behind, and
//! one whose reader has exited ends at its next write
//! ([`crate::pipes::BROKEN_PIPE_EXIT`]). Only what leaves the pipeline is
//! captured under the output cap: a captured stdout (the last stage's, or a
//! redirected one) and each stage's stderr. The first stage refused or
//! stopped fails the pipeline; dropping the others tears their instances
//! down at once.
//!
//! A stage that cannot stream (an `os_process` command, or one whose
//! argument is folded into its stdin) reads its input whole, within the
//! stdin cap, and its output is written on into the pipe when it ends.

use super::Engine;
use super::launch::{budgets, shape, shape_args};
use crate::commands::ladder::{Resolved, Slot};
use crate::commands::registry::{ArgMode, Tier};
use crate::commands::{
    CommandEnv, CommandError, CommandOutput, PipelineError, StageInput, StageRun, StageSink,
    StageSpec,
};
use crate::limits::{MAX_STDIN_BYTES, PIPE_CAPACITY};
use crate::pipes::{BROKEN_PIPE_EXIT, PipeReader, SessionOutputError, pipe};
use crate::policy::Cap;
use crate::state::{Output, Stdin};
use bytes::Bytes;
use std::time::Instant;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// One admitted stage, wired.
struct Wired {
    resolved: Resolved,
    slot: Slot,
    argv: Vec<String>,
    stdin: Stdin,
    stdout: Output,
    /// The reader of the pipe from the stage before, when this stage reads
    /// elsewhere: held unread, so that writer ends when this stage does.
    unread: Option<PipeReader>,
}

impl Engine {
    /// Runs `stages` at once for `env` through `cap`; each stage's result
    /// in order, or the first stage refused or stopped.
    pub(crate) async fn run_pipeline(
        &self,
        env: &CommandEnv,
        cap: Cap,
        stages: Vec<StageSpec>,
    ) -> Result<Vec<StageRun>, PipelineError> {
        PipelineError::check_length(stages.len())?;
        let wired = self.admit_all(env, cap, stages)?;
        let running = wired.into_iter().enumerate().map(|(index, w)| async move {
            self.run_stage(env, w).await.map_err(|error| PipelineError {
                index: index as u32,
                error,
            })
        });
        futures::future::try_join_all(running).await
    }

    /// Admits every stage, in order, then joins each one's stdout to the
    /// next one's stdin where the next reads the pipe.
    fn admit_all(
        &self,
        env: &CommandEnv,
        cap: Cap,
        stages: Vec<StageSpec>,
    ) -> Result<Vec<Wired>, PipelineError> {
        let admitted = self
            .ladder()
            .admit_line(env, cap, stages.iter().map(|s| s.name.as_str()))
            .map_err(|(index, error)| PipelineError {
                index: index as u32,
                error,
            })?;
        let mut wired = Vec::with_capacity(stages.len());
        let last = stages.len().saturating_sub(1);
        let mut upstream: Option<PipeReader> = None;
        for (i, (stage, (resolved, slot))) in stages.into_iter().zip(admitted).enumerate() {
            let mut unread = None;
            let stdin = match stage.input {
                StageInput::Pipe => upstream.take().map_or(Stdin::Empty, Stdin::Pipe),
                StageInput::Bytes(bytes) => {
                    unread = upstream.take();
                    bytes.into()
                }
                StageInput::Stream(reader) => {
                    unread = upstream.take();
                    Stdin::Pipe(reader)
                }
            };
            let stdout = match stage.stdout {
                StageSink::Capture => Output::Capture,
                StageSink::Stream(out) => Output::Shared(out),
                StageSink::Pipe if i < last => {
                    let (writer, reader) = pipe(PIPE_CAPACITY, b"");
                    upstream = Some(reader);
                    Output::Pipe(writer)
                }
                StageSink::Pipe => Output::Discard,
            };
            wired.push(Wired {
                resolved,
                slot,
                argv: stage.argv,
                stdin,
                stdout,
                unread,
            });
        }
        Ok(wired)
    }

    /// Runs one wired stage to its end, then closes both its pipe ends (so
    /// its reader sees end of input and its writer a broken pipe) whoever
    /// else still holds them.
    async fn run_stage(&self, env: &CommandEnv, w: Wired) -> Result<StageRun, CommandError> {
        let start = Instant::now();
        let _slot = w.slot;
        let reader = match &w.stdin {
            Stdin::Pipe(r) => Some(r.clone()),
            _ => None,
        };
        let writer = match &w.stdout {
            Output::Pipe(w) => Some(w.clone()),
            _ => None,
        };
        // What the shared stream held before, to count this stage's part.
        let shared = match &w.stdout {
            Output::Shared(out) => Some((out.clone(), out.written())),
            _ => None,
        };
        let streams = w.resolved.tier != Tier::OsProcess && w.resolved.arg_mode == ArgMode::Argv;
        let result = if streams {
            match shape_args(&w.resolved, w.argv) {
                Ok(args) => {
                    self.run_instance(env, &w.resolved, args, w.stdin, w.stdout)
                        .await
                }
                Err(e) => Err(e),
            }
        } else {
            self.run_whole(env, &w.resolved, w.argv, w.stdin, &w.stdout)
                .await
        };
        for r in reader.iter().chain(&w.unread) {
            r.close();
        }
        if let Some(w) = &writer {
            w.close();
        }
        let mut output = result?;
        output.elapsed = start.elapsed();
        let stdout_bytes = match (&writer, &shared) {
            (Some(w), _) => w.written(),
            (None, Some((out, before))) => out.written() - before,
            (None, None) => output.stdout.len() as u64,
        };
        Ok(StageRun {
            output,
            stdout_bytes,
        })
    }

    /// Runs a stage that cannot stream: its input read whole (within the
    /// stdin cap), its output passed on when it ends.
    async fn run_whole(
        &self,
        env: &CommandEnv,
        resolved: &Resolved,
        argv: Vec<String>,
        stdin: Stdin,
        stdout: &Output,
    ) -> Result<CommandOutput, CommandError> {
        let input = read_whole(stdin).await?;
        let (args, input) = shape(resolved, argv, input)?;
        let mut out = if resolved.tier == Tier::OsProcess {
            let (timeout, fuel) = budgets(env);
            self.run_in_process(env, resolved, args, input, timeout, fuel)
                .await?
        } else {
            self.run_instance(env, resolved, args, input.into(), Output::Capture)
                .await?
        };
        match stdout {
            Output::Pipe(writer) => {
                let bytes = std::mem::take(&mut out.stdout);
                if writer.clone().write_all(&bytes).await.is_err() {
                    out.exit_code = BROKEN_PIPE_EXIT;
                }
            }
            Output::Shared(shared) => {
                let bytes = std::mem::take(&mut out.stdout);
                match shared.write_all(&bytes) {
                    Ok(()) => {}
                    Err(SessionOutputError::Broken(_)) => out.exit_code = BROKEN_PIPE_EXIT,
                    Err(SessionOutputError::OverCap(cap)) => {
                        return Err(CommandError::OutputTooLarge(cap as u64));
                    }
                    Err(e) => return Err(CommandError::Refused(e.to_string())),
                }
            }
            Output::Discard => out.stdout = Bytes::new(),
            Output::Capture | Output::Inherit => {}
        }
        Ok(out)
    }
}

/// All of `stdin`, refused past the stdin cap.
async fn read_whole(stdin: Stdin) -> Result<Bytes, CommandError> {
    let reader = match stdin {
        Stdin::Empty | Stdin::Inherit => return Ok(Bytes::new()),
        Stdin::Bytes(bytes) => return Ok(bytes),
        Stdin::Pipe(reader) => reader,
    };
    let mut all = Vec::new();
    reader
        .take(MAX_STDIN_BYTES as u64 + 1)
        .read_to_end(&mut all)
        .await
        .map_err(|e| CommandError::Refused(format!("reading stdin: {e}")))?;
    if all.len() > MAX_STDIN_BYTES {
        return Err(CommandError::StdinTooLarge(MAX_STDIN_BYTES as u64));
    }
    Ok(all.into())
}
