//! Commands: the content-addressed registry, the built-ins, the deny
//! ladder, and the types every run speaks in. The engine runs them
//! (`engine::launch`); this module imports neither the engine nor the
//! stores, so the caps and the engine can both build on it.
//!
//! A command is a wasm32-wasip2 command component (or a WASI preview 1 core
//! module): argv and stdin in; stdout, stderr and an exit code out. A
//! non-zero exit is a normal result. Every run goes through the deny
//! ladder ([`ladder`]), in order: revoked, rate_limited, denied
//! (default-deny: the caller must hold `commands` or `exec`), max_depth
//! (deeper than [`MAX_DEPTH`]), command_not_granted (the caller's
//! allowlist), unknown_command; then the per-tenant concurrency cap.
//! Each denial is audited. A run gets a fresh store from the cached
//! pre-instantiation and the command envelope: fuel 5e9, 30 s wall clock,
//! argv ≤ 256 KiB, stdin ≤ 64 MiB, output ≤ 8 MiB each stream, the
//! caller's preopened directories only. Arguments are passed as argv
//! entries, never joined into text a shell would read.

pub mod builtin;
pub mod frames;
pub(crate) mod ladder;
pub mod listing;
pub mod packed;
pub mod registry;

pub use registry::{ArgMode, Entry, Origin, Registry, RegistryError, Tier};

use crate::pipes::{PipeReader, SessionOutput};
use crate::policy::{CapSet, Grant};
use crate::preopen::Preopen;
use bytes::Bytes;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

/// Deepest command chain: a command run by a command run by ... stops here.
pub const MAX_DEPTH: u32 = 8;
pub use crate::limits::MAX_CONCURRENT_PER_TENANT;
/// Spawned, not yet awaited processes one tenant may hold (`exec`).
pub const MAX_LIVE_PROCESSES_PER_TENANT: u32 = 32;
/// Wall-clock budget of one command.
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(30);

/// How commands started from a session may run.
#[derive(Debug, Clone, Default)]
pub struct CommandPolicy {
    /// The grant the commands run under; the session's own when `None`.
    pub stage_grant: Option<Grant>,
    /// Only these names may run; any when `None`.
    pub allowlist: Option<Arc<BTreeSet<String>>>,
    /// How deep in a command chain the session already is (0 at the top).
    pub depth: u32,
    /// Wall-clock budget of each command ([`COMMAND_TIMEOUT`] when `None`).
    pub timeout: Option<Duration>,
    /// Fuel of each command ([`crate::limits::COMMAND_FUEL`] when `None`).
    pub fuel: Option<u64>,
    /// Memory cap of each command in place of its profile's (operator
    /// set); the profile's when `None`.
    pub memory: Option<usize>,
    /// The environment of each command: exactly these pairs, none of the
    /// host's (shared: every stage and child holds the same list).
    pub env: Arc<[(String, String)]>,
}

/// Who asks to run a command, and under what terms.
#[derive(Debug, Clone)]
pub struct CommandEnv {
    /// The tenant whose revocation, rate and quotas apply.
    pub tenant: String,
    /// The session id commands report (and whose volumes they reach).
    pub session_id: String,
    /// The caps of the caller, for default-deny.
    pub caller_caps: CapSet,
    /// The grant the command runs under.
    pub grant: Grant,
    /// Host directories the command may see.
    pub dirs: Vec<Preopen>,
    /// Allowlist, depth, budgets.
    pub policy: CommandPolicy,
    /// The caller's network scope, which its commands run under too
    /// (`None`: unscoped).
    pub scope: Option<crate::grants::Scope>,
}

/// What a finished command produced.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct CommandOutput {
    /// Its stdout.
    pub stdout: Bytes,
    /// Its stderr.
    pub stderr: Bytes,
    /// Its exit code.
    pub exit_code: i32,
    /// Wall time from the ladder's admission to the end.
    pub elapsed: Duration,
}

/// Where a pipeline stage reads its stdin from.
#[derive(Debug, Clone)]
pub(crate) enum StageInput {
    /// The previous stage's stdout, through a bounded pipe (end of input
    /// at once for the first stage).
    Pipe,
    /// These bytes (a `<` redirection).
    Bytes(Bytes),
    /// A stream the host holds (the line's own stdin).
    Stream(PipeReader),
}

/// One stage of a pipeline.
#[derive(Debug, Clone)]
pub(crate) struct StageSpec {
    /// The command name.
    pub name: String,
    /// Its arguments, without the name.
    pub argv: Vec<String>,
    /// Where its stdin comes from.
    pub input: StageInput,
    /// Where its stdout goes.
    pub stdout: StageSink,
}

/// Where a pipeline stage's stdout goes.
#[derive(Debug, Clone)]
pub(crate) enum StageSink {
    /// Into the next stage's stdin through a bounded pipe (into nothing
    /// when the next stage reads elsewhere, or there is none).
    Pipe,
    /// Kept, within the capture cap, and returned with its output.
    Capture,
    /// A stream the host holds (the line's own stdout), written as the
    /// stage produces.
    Stream(SessionOutput),
}

/// What one stage of a pipeline did: its output (stdout only when
/// captured) and how many bytes it wrote to each stream.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct StageRun {
    /// Exit code, captured stdout, stderr, wall time.
    pub output: CommandOutput,
    /// Bytes it wrote to stdout, piped or captured.
    pub stdout_bytes: u64,
}

/// Why a pipeline did not run to its stages' exit codes: the first stage
/// (by index) that was refused or stopped, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[error("stage {index}: {error}")]
pub struct PipelineError {
    /// The stage's index in the pipeline.
    pub index: u32,
    /// What refused or stopped it.
    pub error: CommandError,
}

impl PipelineError {
    /// Refuses a pipeline of more than
    /// [`crate::limits::MAX_PIPELINE_STAGES`] stages, at the first stage
    /// past the limit.
    pub(crate) fn check_length(stages: usize) -> Result<(), PipelineError> {
        use crate::limits::MAX_PIPELINE_STAGES;
        if stages <= MAX_PIPELINE_STAGES {
            return Ok(());
        }
        Err(PipelineError {
            index: MAX_PIPELINE_STAGES as u32,
            error: CommandError::Refused(format!(
                "a pipeline has at most {MAX_PIPELINE_STAGES} stages; this one has {stages}"
            )),
        })
    }
}

/// Why a command did not run to an exit code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CommandError {
    /// The tenant is revoked.
    #[error("revoked: the tenant is revoked")]
    Revoked,
    /// The tenant is over its rate limit.
    #[error("rate_limited: the tenant is over its rate limit")]
    RateLimited,
    /// The caller holds neither `commands` nor `exec`.
    #[error("denied: running commands is not granted")]
    Denied,
    /// The chain is too deep.
    #[error("max_depth: command chains stop at depth {0}")]
    MaxDepth(u32),
    /// Not on the allowlist.
    #[error("command_not_granted: `{0}` is not on the allowlist")]
    NotGranted(String),
    /// Not registered.
    #[error("unknown_command: `{0}`")]
    Unknown(String),
    /// Too many commands of this tenant are running.
    #[error("too_many_running: at most {0} at once")]
    TooManyRunning(u32),
    /// The stored bytes do not match their hash.
    #[error("artifact_integrity: {0}")]
    Integrity(String),
    /// argv over the limit.
    #[error("argv_too_large: over {0} bytes")]
    ArgvTooLarge(u64),
    /// stdin over the limit.
    #[error("stdin_too_large: over {0} bytes")]
    StdinTooLarge(u64),
    /// stdout or stderr over the limit.
    #[error("output_too_large: over {0} bytes")]
    OutputTooLarge(u64),
    /// Out of wall-clock time.
    #[error("timeout: over its {} ms budget", .0.as_millis())]
    Timeout(Duration),
    /// Hit the memory cap.
    #[error("memory_limit: over {0} bytes")]
    Memory(u64),
    /// Out of fuel.
    #[error("fuel_exhausted")]
    Fuel,
    /// Trapped.
    #[error("trap: {0}")]
    Trap(String),
    /// Could not be loaded, docked or started.
    #[error("refused: {0}")]
    Refused(String),
}

impl CommandError {
    /// The snake_case name of the failure, as in the audit log.
    pub fn reason(&self) -> &'static str {
        match self {
            CommandError::Revoked => "revoked",
            CommandError::RateLimited => "rate_limited",
            CommandError::Denied => "denied",
            CommandError::MaxDepth(_) => "max_depth",
            CommandError::NotGranted(_) => "command_not_granted",
            CommandError::Unknown(_) => "unknown_command",
            CommandError::TooManyRunning(_) => "too_many_running",
            CommandError::Integrity(_) => "artifact_integrity",
            CommandError::ArgvTooLarge(_) => "argv_too_large",
            CommandError::StdinTooLarge(_) => "stdin_too_large",
            CommandError::OutputTooLarge(_) => "output_too_large",
            CommandError::Timeout(_) => "timeout",
            CommandError::Memory(_) => "memory_limit",
            CommandError::Fuel => "fuel_exhausted",
            CommandError::Trap(_) => "trap",
            CommandError::Refused(_) => "refused",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{CommandError, PipelineError};
    use crate::limits::MAX_PIPELINE_STAGES;

    #[test]
    fn a_pipeline_one_stage_past_the_limit_is_refused_at_that_stage() {
        assert!(PipelineError::check_length(MAX_PIPELINE_STAGES).is_ok());
        let err = PipelineError::check_length(MAX_PIPELINE_STAGES + 1).unwrap_err();
        assert_eq!(err.index as usize, MAX_PIPELINE_STAGES);
        assert!(
            matches!(&err.error, CommandError::Refused(why) if why.contains("at most 32 stages; this one has 33")),
            "{err}"
        );
    }
}
