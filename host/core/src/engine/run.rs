//! Running a docked command once: a fresh store, instantiate, call
//! `wasi:cli/run`, collect exit code and output.
//!
//! Every way a run can end is a value: an exit code (zero or not, both
//! normal results), or a [`RunError`] naming what stopped it: its time
//! budget, its memory cap, its fuel, its stack, its output cap, or a trap.
//! The host is never at risk: the store is dropped after the run either way.

use crate::dock::{Cli, Docked, Guest};
use crate::engine::Engine;
use crate::limits::{Deadline, DeadlineExceeded, HOST_WAIT_GRACE, MemoryLimiter};
use crate::pipes::{BROKEN_PIPE_EXIT, BrokenPipe, SessionOutput};
use crate::state::{Captured, SessionError, SessionOptions, StoreState};
use bytes::Bytes;
use std::time::{Duration, Instant};
use wasmtime::Trap;
use wasmtime::component::ResourceTableError;
use wasmtime_wasi::I32Exit;

/// What a finished run produced.
#[derive(Debug, Clone)]
pub struct RunOutput {
    /// The exit code: 0 for success, the guest's code otherwise.
    pub exit_code: i32,
    /// Captured stdout (empty when passed through).
    pub stdout: Bytes,
    /// Captured stderr (empty when passed through).
    pub stderr: Bytes,
    /// Wall time of instantiate plus run.
    pub elapsed: Duration,
    /// Fuel the run consumed.
    pub fuel_used: u64,
}

/// Why a call did not finish with an exit code or a result.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The guest is not a command.
    #[error(
        "not a command: it exports neither wasi:cli/run (a component) nor _start (a core module)"
    )]
    NotACommand,
    /// The session could not be set up.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The call ran out of wall-clock time.
    #[error("timeout: the call exceeded its {} ms budget", budget.as_millis())]
    Timeout {
        /// The budget that ran out.
        budget: Duration,
    },
    /// The call tried to grow memory past the cap.
    #[error("memory_limit: growth to {requested} bytes refused (cap {limit} bytes)")]
    Memory {
        /// The cap on all memories and tables of the store.
        limit: usize,
        /// The total the refused growth asked for.
        requested: usize,
    },
    /// The call used all its fuel.
    #[error("fuel_exhausted: the call used all {budget} units of its fuel")]
    Fuel {
        /// The fuel it had.
        budget: u64,
    },
    /// The call overflowed its stack.
    #[error("stack_overflow: the call recursed past the wasm stack limit")]
    StackOverflow,
    /// The output passed its cap.
    #[error("output_limit: {stream} passed {limit} bytes")]
    OutputLimit {
        /// `stdout` or `stderr`.
        stream: &'static str,
        /// The cap.
        limit: usize,
    },
    /// The store's async table (WASI 0.3 tasks, subtasks, streams and
    /// futures) or its host resources were full: a guest holding too much
    /// in flight at once.
    #[error(
        "async_tasks: more than {limit} tasks, streams, futures or host resources in flight at once"
    )]
    AsyncTasks {
        /// The cap on live entries.
        limit: usize,
    },
    /// The guest trapped.
    #[error("trap: {0}")]
    Trap(String),
}

impl RunError {
    /// The snake_case name of the failure, the word its message starts
    /// with (as [`crate::CommandError::reason`] and the audit log name theirs).
    pub fn kind(&self) -> &'static str {
        match self {
            RunError::NotACommand => "not_a_command",
            RunError::Session(_) => "session",
            RunError::Timeout { .. } => "timeout",
            RunError::Memory { .. } => "memory_limit",
            RunError::Fuel { .. } => "fuel_exhausted",
            RunError::StackOverflow => "stack_overflow",
            RunError::OutputLimit { .. } => "output_limit",
            RunError::AsyncTasks { .. } => "async_tasks",
            RunError::Trap(_) => "trap",
        }
    }
}

/// What a guest is told when its calls led wasmtime into one of its own
/// defects (a `WasmtimeBug`, which ends the store): that error's text names
/// the build machine's paths, so it goes to the operator's log only.
pub(crate) const RUNTIME_DEFECT: &str = "the runtime reached a state it does not support \
     (a defect of wasmtime's that this guest's calls reached); the store is ended";

/// Whether `err` is a defect of wasmtime's that a guest's calls reached
/// (a `WasmtimeBug` anywhere in its chain): its text names the build
/// machine's paths, and the store it happened in is ended.
pub(crate) fn is_runtime_defect(err: &wasmtime::Error) -> bool {
    err.chain().any(|cause| cause.is::<wasmtime::WasmtimeBug>())
}

/// Names what stopped a call, from the error and the store's state.
pub(crate) fn classify(err: wasmtime::Error, state: &StoreState, fuel: Option<u64>) -> RunError {
    classify_with(err, &state.limiter, state.deadline, fuel)
}

/// Names what stopped a call, from the error, the store's memory limiter
/// and its deadline.
///
/// The budgets speak first (time, fuel, stack): their traps are exact. A
/// growth the limiter refused during this call explains only the traps a
/// refused allocation ends in (a Rust guest's allocator aborts with
/// `unreachable`) or a failure outside wasm code; any other trap is
/// reported as itself, refusal or not, so a guest that once handled a
/// refused growth is not blamed on memory for an unrelated fault.
pub(crate) fn classify_with(
    err: wasmtime::Error,
    limiter: &MemoryLimiter,
    deadline: Deadline,
    fuel: Option<u64>,
) -> RunError {
    if let Some(d) = err.downcast_ref::<DeadlineExceeded>() {
        return RunError::Timeout { budget: d.budget };
    }
    if is_runtime_defect(&err) {
        tracing::warn!(error = %err, "a guest reached a defect of wasmtime's");
        return RunError::Trap(RUNTIME_DEFECT.into());
    }
    let trap = err.downcast_ref::<Trap>().copied();
    match trap {
        Some(Trap::OutOfFuel) => {
            return RunError::Fuel {
                budget: fuel.unwrap_or(u64::MAX),
            };
        }
        Some(Trap::StackOverflow) => return RunError::StackOverflow,
        Some(Trap::Interrupt) => {
            return RunError::Timeout {
                budget: deadline.budget(),
            };
        }
        _ => {}
    }
    let full = err.chain().any(|cause| {
        matches!(
            cause.downcast_ref::<ResourceTableError>(),
            Some(ResourceTableError::Full)
        )
    });
    if full {
        return RunError::AsyncTasks {
            limit: crate::limits::MAX_TABLE_ENTRIES,
        };
    }
    if let Some(requested) = limiter.refused()
        && matches!(trap, None | Some(Trap::UnreachableCodeReached))
    {
        return RunError::Memory {
            limit: limiter.limit(),
            requested,
        };
    }
    match trap {
        Some(trap) => RunError::Trap(trap.to_string()),
        None => RunError::Trap(format!("{:#}", err.root_cause())),
    }
}

/// The first captured or shared stream written past its cap, as the error
/// that names it.
fn over_cap(captured: &Captured) -> Result<(), RunError> {
    match captured.passed_cap() {
        Some((stream, limit)) => Err(RunError::OutputLimit { stream, limit }),
        None => Ok(()),
    }
}

/// How a call ended, for both lanes: its exit code (a guest's exit, with
/// any code, is a normal end), or what stopped it. An output cap that was
/// passed speaks before a trap it may have caused.
pub(crate) fn settle(
    outcome: Result<wasmtime::Result<i32>, tokio::time::error::Elapsed>,
    budget: Duration,
    captured: &Captured,
    classify: impl FnOnce(wasmtime::Error) -> RunError,
) -> Result<i32, RunError> {
    let code = match outcome {
        Err(_) => return Err(RunError::Timeout { budget }),
        Ok(Ok(code)) => code,
        Ok(Err(e)) => match e.downcast_ref::<I32Exit>() {
            Some(I32Exit(code)) => *code,
            // A write into a pipe its reader left: the stage ends quietly.
            None if e.downcast_ref::<BrokenPipe>().is_some() => BROKEN_PIPE_EXIT,
            None => {
                over_cap(captured)?;
                return Err(classify(e));
            }
        },
    };
    over_cap(captured)?;
    Ok(code)
}

/// The output of a finished call.
pub(crate) fn output(
    exit_code: i32,
    captured: &Captured,
    elapsed: Duration,
    fuel: Option<u64>,
    fuel_left: u64,
) -> RunOutput {
    let take =
        |out: &Option<SessionOutput>| out.as_ref().map(SessionOutput::take).unwrap_or_default();
    RunOutput {
        exit_code,
        stdout: take(&captured.stdout),
        stderr: take(&captured.stderr),
        elapsed,
        fuel_used: fuel.unwrap_or(u64::MAX).saturating_sub(fuel_left),
    }
}

impl Engine {
    /// Runs a docked command once in a fresh store: a component's
    /// `wasi:cli/run` (0.2 or 0.3), or a core module's `_start`.
    pub async fn run(&self, docked: &Docked, opts: SessionOptions) -> Result<RunOutput, RunError> {
        let budget = opts
            .timeout
            .unwrap_or_else(|| docked.grant().profile.effective.timeout());
        let (pre, command) = match &docked.guest {
            Guest::Module { pre, command } => {
                if !command {
                    return Err(RunError::NotACommand);
                }
                return self.run_module(docked, pre, opts, budget).await;
            }
            Guest::Component { pre, command } => (pre, command.as_ref()),
        };
        let command = command.ok_or(RunError::NotACommand)?;
        let (mut store, captured) = self.new_store(docked.flavor, docked.grant(), &opts)?;
        store.data_mut().deadline = Deadline::after(budget);
        let start = Instant::now();
        // The whole call sits under one timeout: at 0.3 a guest awaiting
        // a host future that never resolves runs no wasm, so only this
        // stops it (the epoch check stops a busy one, at either version).
        let outcome = tokio::time::timeout(budget + HOST_WAIT_GRACE, async {
            let status = match command {
                Cli::Wasi02(command) => {
                    let cmd = command.instantiate_async(&mut store).await?;
                    cmd.wasi_cli_run().call_run(&mut store).await?
                }
                Cli::Wasi03 => {
                    let instance = pre.instantiate_async(&mut store).await?;
                    let cmd = wasmtime_wasi::p3::bindings::Command::new(&mut store, &instance)?;
                    store
                        .run_concurrent(async |acc| cmd.wasi_cli_run().call_run(acc).await)
                        .await??
                }
            };
            Ok(if status.is_ok() { 0 } else { 1 })
        })
        .await;
        let elapsed = start.elapsed();
        let code = settle(outcome, budget, &captured, |e| {
            classify(e, store.data(), opts.fuel)
        })?;
        let left = store.get_fuel().unwrap_or(0);
        Ok(output(code, &captured, elapsed, opts.fuel, left))
    }
}
