//! Commands that run elsewhere: what a tier that sends a task to another
//! engine (the fabric's node tier) needs from this one. The sending side
//! admits each task here exactly as a local run would be admitted (the
//! deny ladder, the command's shape); the receiving side runs the bytes it
//! was sent, which it has checked against their hash, with no registry
//! lookup, under the task's grant and budgets.

use super::Commands;
use super::launch::shape;
use crate::artifact::Artifact;
use crate::commands::ladder::Resolved;
use crate::commands::{ArgMode, CommandEnv, CommandError, CommandOutput, Tier};
use crate::policy::Cap;
use bytes::Bytes;

/// A command admitted by this engine's ladder, ready to send: its bytes,
/// its tier, and the argv and stdin it receives.
#[derive(Debug, Clone)]
pub struct Admitted {
    /// The command's component or module.
    pub artifact: Artifact,
    /// The tier it is registered at.
    pub tier: Tier,
    /// Its argv, with its built-in prefix and argument mode applied.
    pub argv: Vec<String>,
    /// Its stdin, likewise.
    pub stdin: Bytes,
}

impl Commands<'_> {
    /// Admits command `name` for `env` as a call through `cap` would be
    /// (revocation, rate limit, allowlist, registry), and shapes its argv
    /// and stdin; the concurrency slot is given back at once, as the task
    /// runs elsewhere.
    pub fn admit(
        self,
        env: &CommandEnv,
        cap: Cap,
        name: &str,
        argv: Vec<String>,
        stdin: Bytes,
    ) -> Result<Admitted, CommandError> {
        let (resolved, _slot) = self.engine.ladder().admit(env, cap, name)?;
        let (argv, stdin) = shape(&resolved, argv, stdin)?;
        Ok(Admitted {
            artifact: resolved.artifact,
            tier: resolved.tier,
            argv,
            stdin,
        })
    }

    /// Runs `artifact`, whose bytes the caller has verified, as a command
    /// for `env` at `tier` (an `os_process` one from a copy in this
    /// engine's store), on an argv and stdin already shaped: a task another
    /// engine admitted. Revocation and the rate limit of `env`'s tenant
    /// are checked here too.
    pub async fn run_sent(
        self,
        env: &CommandEnv,
        artifact: Artifact,
        tier: Tier,
        argv: Vec<String>,
        stdin: Bytes,
    ) -> Result<CommandOutput, CommandError> {
        self.engine
            .cadence()
            .admit(&env.tenant, "exec")
            .map_err(|d| match d {
                crate::cadence::Denial::Revoked => CommandError::Revoked,
                _ => CommandError::RateLimited,
            })?;
        let path = match tier {
            Tier::Instance => None,
            Tier::OsProcess => Some(self.engine.registry().stash(&artifact).map_err(|e| {
                CommandError::Refused(format!("node: cannot store the artifact: {e}"))
            })?),
            Tier::Node | Tier::Container => {
                return Err(CommandError::Refused(format!(
                    "node: a sent command runs at instance or os_process, not {}",
                    tier.name()
                )));
            }
        };
        let resolved = Resolved {
            artifact,
            prefix: None,
            packaged: Vec::new(),
            arg_mode: ArgMode::Argv,
            tier,
            path,
            stubs: crate::policy::Stubs::NONE,
            ceiling: None,
        };
        self.engine.run_resolved(env, &resolved, argv, stdin).await
    }
}
