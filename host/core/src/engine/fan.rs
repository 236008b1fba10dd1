//! Commands fanned over many inputs at a tier: the part of the fabric the
//! engine itself runs, for the `parallel` cap (`launch.run-many`) and for
//! the fabric above it. Every task goes through the same deny ladder,
//! envelope and budgets as a single command run by the same tenant, at
//! no weaker tier than the command's own.

use super::CHILD_GRACE;
use super::Commands;
use crate::commands::{CommandEnv, CommandError, CommandOutput, Tier};
use crate::limits::FAN_MAX_WIDTH;
use crate::policy::Cap;
use crate::tier::TierEnv;
use bytes::Bytes;
use futures::StreamExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// How one fan-out of a command runs.
#[derive(Debug, Clone, Copy)]
pub struct Fan<'a> {
    /// Tasks in flight at once (clamped to 1..=[`FAN_MAX_WIDTH`]).
    pub width: usize,
    /// The tier asked for; a command registered at a stronger one runs
    /// there.
    pub tier: Tier,
    /// Budget of each task.
    pub timeout: Duration,
    /// Counts tasks as they finish, for a progress display.
    pub finished: Option<&'a AtomicUsize>,
}

impl Commands<'_> {
    /// What the tiers can use in this engine; no remote tier, which the
    /// engine does not run itself (see [`crate::tier::RemoteTier`]).
    pub fn tier_env(self) -> TierEnv {
        TierEnv {
            child: self.engine.child_binary().map(Into::into),
            bwrap: TierEnv::find_bwrap(),
            remote: None,
        }
    }

    /// Runs command `name` on every `(argv, stdin)` for `env` through
    /// `cap`, `fan.width` at a time, at no weaker tier than `fan.tier`;
    /// each task's outcome and wall time, in input order.
    pub async fn fan(
        self,
        env: &CommandEnv,
        cap: Cap,
        name: &str,
        tasks: Vec<(Vec<String>, Bytes)>,
        fan: &Fan<'_>,
    ) -> Vec<(Result<CommandOutput, CommandError>, Duration)> {
        let mut env = env.clone();
        env.policy.timeout = Some(fan.timeout);
        let mut done = futures::stream::iter(tasks.into_iter().enumerate())
            .map(|(index, (argv, stdin))| {
                let env = &env;
                async move {
                    let start = Instant::now();
                    let out = tokio::time::timeout(
                        fan.timeout + CHILD_GRACE,
                        self.run_at(env, cap, fan.tier, name, argv, stdin),
                    )
                    .await
                    .unwrap_or(Err(CommandError::Timeout(fan.timeout)));
                    if let Some(count) = fan.finished {
                        count.fetch_add(1, Ordering::Relaxed);
                    }
                    (index, out, start.elapsed())
                }
            })
            .buffer_unordered(fan.width.clamp(1, FAN_MAX_WIDTH))
            .collect::<Vec<_>>()
            .await;
        done.sort_by_key(|(index, _, _)| *index);
        done.into_iter().map(|(_, out, dur)| (out, dur)).collect()
    }

    /// Runs one command task at no weaker tier than `tier` or the
    /// command's own.
    async fn run_at(
        self,
        env: &CommandEnv,
        cap: Cap,
        tier: Tier,
        name: &str,
        argv: Vec<String>,
        stdin: Bytes,
    ) -> Result<CommandOutput, CommandError> {
        let (resolved, _slot) = self.engine.ladder().admit(env, cap, name)?;
        match tier.at_least(resolved.tier) {
            Tier::Instance => self.engine.run_resolved(env, &resolved, argv, stdin).await,
            Tier::OsProcess => {
                self.engine
                    .run_isolated(env, &resolved, argv, stdin, false)
                    .await
            }
            Tier::Container => {
                self.engine
                    .run_isolated(env, &resolved, argv, stdin, true)
                    .await
            }
            Tier::Node => Err(CommandError::Refused(
                self.tier_env()
                    .resolve(Tier::Node)
                    .err()
                    .map(|e| e.to_string())
                    .unwrap_or_default(),
            )),
        }
    }
}
