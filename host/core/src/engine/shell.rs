//! Running a command line through the shell broker component.
//!
//! The shell (`guests/shell`, embedded) parses the line inside the sandbox
//! and runs each stage through the `commands` interface. The shell itself
//! is docked with a fixed first-party grant (`vfs` for redirections over
//! the preopens, `commands` to run stages); every stage runs under the
//! caller's grant, through the deny ladder, one level deep.

use super::Commands;
use crate::artifact::Artifact;
use crate::cap::bindings::exports::workbooks::engine::shell::{Error as ShellError, GuestIndices};
use crate::commands::{CommandError, CommandPolicy, StageInput, StageSink, StageSpec};
use crate::dock::DockError;
use crate::embedded;
use crate::engine::run::{RunError, classify};
use crate::limits::Deadline;
use crate::limits::{MAX_CAPTURED_OUTPUT_BYTES, PIPE_CAPACITY};
use crate::pipes::{SessionInput, SessionOutput, pipe};
use crate::policy::{Cap, CapSet, Grant, PolicyError, Resolution, Stubs};
use crate::state::{Preopen, SessionError, SessionOptions, Stdin};
use bytes::Bytes;
use serde::Serialize;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Wall-clock budget of a whole line (each stage also has its own).
pub const LINE_TIMEOUT: Duration = Duration::from_secs(600);

/// Fuel of the shell component for one line, by default: far more than
/// parsing and wiring any line takes, and a bound on a line built to keep
/// the shell itself busy.
pub const SHELL_FUEL: u64 = crate::limits::COMMAND_FUEL;

/// How to run a command line.
#[derive(Debug, Clone)]
pub struct LineOptions {
    /// The profile the stages run under.
    pub profile: String,
    /// Caps narrower than the profile's for the stages.
    pub caps: Option<CapSet>,
    /// The tenant whose revocation, rate limit and quotas apply.
    pub tenant: String,
    /// The session id stages report.
    pub session_id: String,
    /// Host directories visible to redirections and stages.
    pub dirs: Vec<Preopen>,
    /// The line's stdin: it streams into the first stage that reads stdin.
    pub stdin: Stdin,
    /// Where the line's stdout goes: kept and returned (the default), or
    /// written through to the host process's stdout as it is produced.
    pub stdout: LineStdout,
    /// The environment of every stage (exactly these pairs; the line's own
    /// `NAME=value` words stay shell variables).
    pub env: Vec<(String, String)>,
    /// Wall-clock budget of each stage (30 s by default).
    pub stage_timeout: Option<Duration>,
    /// Fuel of each stage (5e9 by default).
    pub stage_fuel: Option<u64>,
    /// Memory cap of each stage in place of the profile's (operator set).
    pub stage_memory: Option<usize>,
    /// Only these command names may run; any when `None`.
    pub allowlist: Option<BTreeSet<String>>,
    /// Fuel of the shell itself for the whole line ([`SHELL_FUEL`] when
    /// `None`); each stage has its own.
    pub shell_fuel: Option<u64>,
    /// The grant's scopes every stage runs under (the destinations its
    /// network caps may reach, its expiry); `None` is unscoped (the floor
    /// alone).
    pub scope: Option<crate::grants::Scope>,
}

impl Default for LineOptions {
    fn default() -> Self {
        Self {
            profile: "compute".into(),
            caps: None,
            tenant: "default".into(),
            session_id: "run".into(),
            dirs: Vec::new(),
            stdin: Stdin::Empty,
            stdout: LineStdout::Capture,
            env: Vec::new(),
            stage_timeout: None,
            stage_fuel: None,
            stage_memory: None,
            allowlist: None,
            shell_fuel: None,
            scope: None,
        }
    }
}

/// Where a line's stdout goes. The last stage of each pipeline (unless
/// redirected) writes it directly, as it produces.
#[derive(Debug, Clone, Default)]
pub enum LineStdout {
    /// Kept, within the output cap ([`MAX_CAPTURED_OUTPUT_BYTES`] for the
    /// whole line), and returned in [`LineOutcome::stdout`].
    #[default]
    Capture,
    /// Written through to the host process's stdout, with no cap (as a
    /// shell's would be); [`LineOutcome::stdout`] is then empty.
    Inherit,
    /// Written through to this writer (a client's stdout across a
    /// socket, say), with no cap, as `Inherit` is; [`LineOutcome::stdout`]
    /// is then empty.
    Writer(SessionOutput),
}

/// What one stage did.
#[derive(Debug, Clone, Serialize)]
pub struct StageReport {
    /// The command name and arguments.
    pub argv: Vec<String>,
    /// Its exit code.
    pub exit: i32,
    /// Wall time of the stage in microseconds.
    pub elapsed_us: u64,
    /// Bytes written to stdout.
    pub stdout_bytes: u64,
    /// Bytes written to stderr.
    pub stderr_bytes: u64,
}

/// What a line produced.
#[derive(Debug, Clone, Serialize)]
pub struct LineOutcome {
    /// Its stdout.
    #[serde(serialize_with = "lossy")]
    pub stdout: Bytes,
    /// Every stage's stderr, in order.
    #[serde(serialize_with = "lossy")]
    pub stderr: Bytes,
    /// The exit code of the last stage that ran.
    pub exit: i32,
    /// The stages that ran.
    pub stages: Vec<StageReport>,
    /// Wall time of the whole line in microseconds.
    pub elapsed_us: u64,
}

fn lossy<S: serde::Serializer>(b: &Bytes, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&String::from_utf8_lossy(b))
}

/// Why a line did not run to an exit code.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    /// The profile or caps were refused.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// The shell broker could not be docked.
    #[error(transparent)]
    Dock(#[from] DockError),
    /// The shell's session could not be set up.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The shell itself faulted.
    #[error("shell: {0}")]
    Run(#[from] RunError),
    /// The line does not parse.
    #[error("syntax error: {0}")]
    Syntax(String),
    /// The line uses syntax outside the subset.
    #[error("unsupported syntax: {0}")]
    Unsupported(String),
    /// A redirection names a path outside the preopened directories.
    #[error("outside_sandbox: {0}")]
    OutsideSandbox(String),
    /// A redirection failed.
    #[error("redirection failed: {0}")]
    Redirect(String),
    /// A stage did not run.
    #[error("{name}: {error}")]
    Command {
        /// The stage's command name.
        name: String,
        /// Why it did not run.
        error: CommandError,
    },
}

/// The line's stdin as the stream its first reading stage gets.
fn line_input(stdin: Stdin) -> Option<SessionInput> {
    match stdin {
        Stdin::Empty => None,
        // Preloaded, its writer gone: these bytes, then end of input.
        Stdin::Bytes(bytes) => Some(SessionInput::Pipe(pipe(PIPE_CAPACITY, &bytes).1)),
        Stdin::Inherit => Some(SessionInput::ProcessStdin),
        Stdin::Pipe(reader) => Some(SessionInput::Pipe(reader)),
    }
}

fn shell_artifact() -> Artifact {
    embedded::SHELL.artifact()
}

fn from_wit(e: crate::cap::bindings::workbooks::engine::command_types::Error) -> CommandError {
    use crate::cap::bindings::workbooks::engine::command_types::Error as E;
    match e {
        E::Revoked => CommandError::Revoked,
        E::RateLimited => CommandError::RateLimited,
        E::Denied => CommandError::Denied,
        E::MaxDepth(n) => CommandError::MaxDepth(n),
        E::CommandNotGranted(n) => CommandError::NotGranted(n),
        E::UnknownCommand(n) => CommandError::Unknown(n),
        E::TooManyRunning(n) => CommandError::TooManyRunning(n),
        E::ArtifactIntegrity(s) => CommandError::Integrity(s),
        E::ArgvTooLarge(n) => CommandError::ArgvTooLarge(n),
        E::StdinTooLarge(n) => CommandError::StdinTooLarge(n),
        E::OutputTooLarge(n) => CommandError::OutputTooLarge(n),
        E::Timeout(ms) => CommandError::Timeout(Duration::from_millis(ms)),
        E::MemoryLimit(n) => CommandError::Memory(n),
        E::FuelExhausted => CommandError::Fuel,
        E::Trap(s) => CommandError::Trap(s),
        E::Refused(s) => CommandError::Refused(s),
    }
}

impl Commands<'_> {
    /// Runs a command line: the shell parses it inside the sandbox, each
    /// stage runs as a registered command under `opts.profile`.
    pub async fn run_line(self, line: &str, opts: LineOptions) -> Result<LineOutcome, LineError> {
        let start = Instant::now();
        let stage_grant = match opts.caps {
            Some(caps) => Grant::narrowed(&opts.profile, caps)?,
            None => Grant::profile(&opts.profile),
        };
        let shell_grant = Grant {
            profile: Resolution {
                requested: stage_grant.profile.requested.clone(),
                effective: stage_grant.profile.effective,
            },
            caps: CapSet::of(&[Cap::Vfs, Cap::Commands]),
            stubs: Stubs::NONE,
        };
        let docked = self.engine.dock(&shell_artifact(), &shell_grant)?;
        let shell_fuel = opts.shell_fuel.unwrap_or(SHELL_FUEL);
        let mut session = SessionOptions::new(opts.session_id, opts.tenant);
        session.fuel = Some(shell_fuel);
        session.dirs = opts.dirs;
        session.scope = opts.scope;
        session.commands = CommandPolicy {
            stage_grant: Some(stage_grant),
            allowlist: opts.allowlist.map(Arc::new),
            depth: 0,
            timeout: opts.stage_timeout,
            fuel: opts.stage_fuel,
            memory: opts.stage_memory,
            env: opts.env.into(),
        };
        crate::environ::check(&session.commands.env).map_err(SessionError::from)?;
        session.pipeline_stdin = line_input(opts.stdin);
        let stdout = match opts.stdout {
            LineStdout::Capture => SessionOutput::capture(MAX_CAPTURED_OUTPUT_BYTES),
            LineStdout::Inherit => SessionOutput::inherit(),
            LineStdout::Writer(out) => out,
        };
        session.pipeline_stdout = Some(stdout.clone());
        let (mut store, _) = self
            .engine
            .new_store(docked.flavor, &shell_grant, &session)?;
        store.data_mut().deadline = Deadline::after(LINE_TIMEOUT);
        let pre = docked
            .component()
            .ok_or_else(|| DockError::Link("the shell broker is not a component".into()))?;
        let indices = GuestIndices::new(pre).map_err(|e| {
            DockError::Link(format!("the shell broker does not export shell: {e:#}"))
        })?;
        let outcome = tokio::time::timeout(LINE_TIMEOUT, async {
            let instance = pre.instantiate_async(&mut store).await?;
            let shell = indices.load(&mut store, &instance)?;
            shell.call_run(&mut store, line).await
        })
        .await;
        let result = match outcome {
            Err(_) => {
                return Err(RunError::Timeout {
                    budget: LINE_TIMEOUT,
                }
                .into());
            }
            Ok(Err(e)) => return Err(classify(e, store.data(), Some(shell_fuel)).into()),
            Ok(Ok(r)) => r,
        };
        let out = result.map_err(|e| match e {
            ShellError::Syntax(s) => LineError::Syntax(s),
            ShellError::Unsupported(s) => LineError::Unsupported(s),
            ShellError::OutsideSandbox(s) => LineError::OutsideSandbox(s),
            ShellError::Redirect(s) => LineError::Redirect(s),
            ShellError::Command((name, e)) => LineError::Command {
                name,
                error: from_wit(e),
            },
        })?;
        Ok(LineOutcome {
            stdout: stdout.take(),
            stderr: Bytes::from(out.stderr),
            exit: out.exit_code,
            stages: out
                .stages
                .into_iter()
                .map(|s| StageReport {
                    argv: s.argv,
                    exit: s.exit_code,
                    elapsed_us: s.elapsed_us,
                    stdout_bytes: s.stdout_bytes,
                    stderr_bytes: s.stderr_bytes,
                })
                .collect(),
            elapsed_us: start.elapsed().as_micros() as u64,
        })
    }
}

/// The caller of a command the host runs directly (the CLI, an embedder):
/// the grant and stage settings of `opts`, holding `commands`; and the
/// line's stdin.
pub fn host_env(opts: LineOptions) -> Result<(crate::commands::CommandEnv, Stdin), LineError> {
    let grant = match opts.caps {
        Some(caps) => Grant::narrowed(&opts.profile, caps)?,
        None => Grant::profile(&opts.profile),
    };
    let env = crate::commands::CommandEnv {
        tenant: opts.tenant,
        session_id: opts.session_id,
        caller_caps: grant.caps.with(Cap::Commands),
        grant,
        dirs: opts.dirs,
        policy: CommandPolicy {
            stage_grant: None,
            allowlist: opts.allowlist.map(Arc::new),
            depth: 0,
            timeout: opts.stage_timeout,
            fuel: opts.stage_fuel,
            memory: opts.stage_memory,
            env: opts.env.into(),
        },
        scope: opts.scope,
    };
    crate::environ::check(&env.policy.env).map_err(SessionError::from)?;
    Ok((env, opts.stdin))
}

impl Commands<'_> {
    /// Runs one command by name, directly (no shell parsing), with the
    /// stage settings of `opts`. The caller is the host, so only revocation,
    /// the rate limit, the allowlist and the registry can refuse it.
    pub async fn run(
        self,
        name: &str,
        argv: Vec<String>,
        opts: LineOptions,
    ) -> Result<crate::commands::CommandOutput, LineError> {
        let (env, stdin) = host_env(opts)?;
        // Bytes go in as they are, within the stdin cap every stage's bytes
        // are held to; a stream is read as the command goes.
        let input = match stdin {
            Stdin::Bytes(bytes) => StageInput::Bytes(bytes),
            stdin => match line_input(stdin) {
                Some(input) => StageInput::Stream(input.open()),
                None => StageInput::Bytes(Bytes::new()),
            },
        };
        let stage = StageSpec {
            name: name.to_string(),
            argv,
            input,
            stdout: StageSink::Capture,
        };
        let mut runs = self
            .engine
            .run_pipeline(&env, Cap::Commands, vec![stage])
            .await
            .map_err(|e| LineError::Command {
                name: name.to_string(),
                error: e.error,
            })?;
        Ok(runs.pop().map(|run| run.output).unwrap_or_default())
    }
}
