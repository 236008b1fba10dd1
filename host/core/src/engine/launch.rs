//! Running commands: the deny ladder, then the resolved command in its
//! envelope, on the tier it asks for. This is the [`Launcher`] behind the
//! `launch` primitive, the shell and the core-module lane.

use super::Commands;
use super::Engine;
use crate::cadence::Denial;
use crate::cap::launch::{Fanning, Job, Launcher, Piping, Running};
use crate::commands::ladder::{Resolved, Slot};
use crate::commands::registry::{ArgMode, Tier};
use crate::commands::{
    COMMAND_TIMEOUT, CommandEnv, CommandError, CommandOutput, CommandPolicy,
    MAX_LIVE_PROCESSES_PER_TENANT, StageSpec,
};
use crate::engine::run::RunError;
use crate::limits::{COMMAND_FUEL, MAX_ARGV_BYTES, MAX_CAPTURED_OUTPUT_BYTES, MAX_STDIN_BYTES};
use crate::policy::Cap;
use crate::state::{Output, SessionError, SessionOptions, Stdin};
use bytes::Bytes;
use std::time::Instant;

/// The argv and stdin a command receives, after its built-in prefix and
/// its argument mode are applied.
pub(crate) fn shape(
    resolved: &Resolved,
    argv: Vec<String>,
    stdin: Bytes,
) -> Result<(Vec<String>, Bytes), CommandError> {
    let (args, stdin) = match resolved.arg_mode {
        ArgMode::Argv => (argv, stdin),
        ArgMode::Stdin1 => {
            // The argument becomes the first line of stdin, as the tool
            // expects; it still never passes through a shell.
            let mut folded = argv.join(" ").into_bytes();
            folded.push(b'\n');
            folded.extend_from_slice(&stdin);
            (Vec::new(), Bytes::from(folded))
        }
    };
    let args = shape_args(resolved, args)?;
    if stdin.len() > MAX_STDIN_BYTES {
        return Err(CommandError::StdinTooLarge(MAX_STDIN_BYTES as u64));
    }
    Ok((args, stdin))
}

/// The argv a command receives when its stdin is left alone: its built-in
/// prefix, within the argv limit.
pub(crate) fn shape_args(
    resolved: &Resolved,
    mut args: Vec<String>,
) -> Result<Vec<String>, CommandError> {
    if let Some(prefix) = resolved.prefix {
        args.insert(0, prefix.to_string());
    }
    if !resolved.packaged.is_empty() {
        args.splice(0..0, resolved.packaged.iter().cloned());
    }
    let argv_bytes: usize = args.iter().map(|a| a.len() + 1).sum();
    if argv_bytes > MAX_ARGV_BYTES {
        return Err(CommandError::ArgvTooLarge(MAX_ARGV_BYTES as u64));
    }
    Ok(args)
}

/// A run failure as the command broker reports it.
impl From<RunError> for CommandError {
    fn from(e: RunError) -> Self {
        match e {
            RunError::Timeout { budget } => CommandError::Timeout(budget),
            RunError::Memory { limit, .. } => CommandError::Memory(limit as u64),
            RunError::Fuel { .. } => CommandError::Fuel,
            RunError::OutputLimit { limit, .. } => CommandError::OutputTooLarge(limit as u64),
            RunError::StackOverflow => CommandError::Trap("stack overflow".into()),
            RunError::Trap(t) => CommandError::Trap(t),
            // The command broker's WIT has no word of its own for it.
            tasks @ RunError::AsyncTasks { .. } => CommandError::Trap(tasks.to_string()),
            RunError::Session(SessionError::ArgvTooLarge(_)) => {
                CommandError::ArgvTooLarge(MAX_ARGV_BYTES as u64)
            }
            RunError::Session(SessionError::StdinTooLarge(_)) => {
                CommandError::StdinTooLarge(MAX_STDIN_BYTES as u64)
            }
            other @ (RunError::NotACommand | RunError::Session(_)) => {
                CommandError::Refused(other.to_string())
            }
        }
    }
}

/// The wall-clock budget and fuel of each command `env` runs.
pub(crate) fn budgets(env: &CommandEnv) -> (std::time::Duration, u64) {
    (
        env.policy.timeout.unwrap_or(COMMAND_TIMEOUT),
        env.policy.fuel.unwrap_or(COMMAND_FUEL),
    )
}

/// The policy handed to a command's own session: one level deeper, the
/// same allowlist and budgets, running its children under its own grant.
pub(crate) fn child_policy(env: &CommandEnv) -> CommandPolicy {
    CommandPolicy {
        stage_grant: None,
        allowlist: env.policy.allowlist.clone(),
        depth: env.policy.depth + 1,
        timeout: env.policy.timeout,
        fuel: env.policy.fuel,
        memory: env.policy.memory,
        env: env.policy.env.clone(),
    }
}

impl Commands<'_> {
    /// Runs `name` for `env` through the `cap` interface: the deny ladder,
    /// then the command in its envelope.
    pub async fn run_as(
        self,
        env: &CommandEnv,
        cap: Cap,
        name: &str,
        argv: Vec<String>,
        stdin: Bytes,
    ) -> Result<CommandOutput, CommandError> {
        let (resolved, slot) = self.engine.ladder().admit(env, cap, name)?;
        self.run_admitted(env, &resolved, slot, argv, stdin).await
    }

    /// Runs a command the ladder admitted, holding its concurrency slot to
    /// the end; `elapsed` counts from here.
    async fn run_admitted(
        self,
        env: &CommandEnv,
        resolved: &Resolved,
        _slot: Slot,
        argv: Vec<String>,
        stdin: Bytes,
    ) -> Result<CommandOutput, CommandError> {
        let start = Instant::now();
        let mut out = self.engine.run_resolved(env, resolved, argv, stdin).await?;
        out.elapsed = start.elapsed();
        Ok(out)
    }
}

impl Engine {
    /// Runs a resolved command for `env`.
    pub(crate) async fn run_resolved(
        &self,
        env: &CommandEnv,
        resolved: &Resolved,
        argv: Vec<String>,
        stdin: Bytes,
    ) -> Result<CommandOutput, CommandError> {
        let (args, stdin) = shape(resolved, argv, stdin)?;
        if resolved.tier == Tier::OsProcess {
            let (timeout, fuel) = budgets(env);
            return self
                .run_in_process(env, resolved, args, stdin, timeout, fuel)
                .await;
        }
        self.run_instance(env, resolved, args, stdin.into(), Output::Capture)
            .await
    }

    /// Docks a resolved command under the caller's grant narrowed to the
    /// command's ceiling, with its stubs; a refusal is the command's.
    pub(crate) fn dock_resolved(
        &self,
        env: &CommandEnv,
        resolved: &Resolved,
    ) -> Result<std::sync::Arc<crate::dock::Docked>, CommandError> {
        let grant = resolved.grant(&env.grant);
        self.dock(&resolved.artifact, &grant)
            .map_err(|e| CommandError::Refused(e.to_string()))
    }

    /// Runs a resolved command in process on shaped `args`, its stdin and
    /// stdout as given, its stderr captured.
    pub(crate) async fn run_instance(
        &self,
        env: &CommandEnv,
        resolved: &Resolved,
        args: Vec<String>,
        stdin: Stdin,
        stdout: Output,
    ) -> Result<CommandOutput, CommandError> {
        let (timeout, fuel) = budgets(env);
        let docked = self.dock_resolved(env, resolved)?;
        let mut opts = SessionOptions::new(env.session_id.clone(), env.tenant.clone());
        opts.args = args;
        opts.env = env.policy.env.to_vec();
        opts.stdin = stdin;
        opts.stdout = stdout;
        opts.stderr = Output::Capture;
        opts.dirs = env.dirs.clone();
        opts.timeout = Some(timeout);
        opts.fuel = Some(fuel);
        opts.memory = env.policy.memory;
        opts.commands = child_policy(env);
        opts.scope = env.scope.clone();
        let out = self.run(&docked, opts).await.map_err(CommandError::from)?;
        for stream in [&out.stdout, &out.stderr] {
            if stream.len() > MAX_CAPTURED_OUTPUT_BYTES {
                return Err(CommandError::OutputTooLarge(
                    MAX_CAPTURED_OUTPUT_BYTES as u64,
                ));
            }
        }
        Ok(CommandOutput {
            stdout: out.stdout,
            stderr: out.stderr,
            exit_code: out.exit_code,
            elapsed: out.elapsed,
        })
    }
}

impl Launcher for Engine {
    fn run<'a>(
        &'a self,
        env: &'a CommandEnv,
        cap: Cap,
        name: &'a str,
        argv: Vec<String>,
        stdin: Bytes,
    ) -> Running<'a> {
        Box::pin(self.commands().run_as(env, cap, name, argv, stdin))
    }

    fn pipeline<'a>(&'a self, env: &'a CommandEnv, cap: Cap, stages: Vec<StageSpec>) -> Piping<'a> {
        Box::pin(self.run_pipeline(env, cap, stages))
    }

    fn many<'a>(
        &'a self,
        env: &'a CommandEnv,
        cap: Cap,
        name: &'a str,
        tasks: Vec<(Vec<String>, Bytes)>,
        width: usize,
    ) -> Fanning<'a> {
        Box::pin(async move {
            let fan = super::Fan {
                width,
                tier: crate::commands::Tier::Instance,
                timeout: budgets(env).0,
                finished: None,
            };
            self.commands().fan(env, cap, name, tasks, &fan).await
        })
    }

    fn start(
        &self,
        env: &CommandEnv,
        cap: Cap,
        name: &str,
        argv: Vec<String>,
        stdin: Bytes,
    ) -> Result<Job, CommandError> {
        let (resolved, slot) = self.ladder().admit(env, cap, name)?;
        let Some(live) = self
            .process_slots()
            .take(&env.tenant, MAX_LIVE_PROCESSES_PER_TENANT)
        else {
            self.cadence().deny(
                &env.tenant,
                "exec",
                Denial::Guard("too_many_live_processes"),
                name,
            );
            return Err(CommandError::TooManyRunning(MAX_LIVE_PROCESSES_PER_TENANT));
        };
        let (engine, env) = (self.clone(), env.clone());
        let task = tokio::spawn(async move {
            engine
                .commands()
                .run_admitted(&env, &resolved, slot, argv, stdin)
                .await
        });
        Ok(Job::new(task, live))
    }
}
