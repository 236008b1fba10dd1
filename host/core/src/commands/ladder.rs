//! The deny ladder in front of every command run, and the per-tenant
//! concurrency slots.

use super::registry::Registry;
use super::registry::{ArgMode, RegistryError, Tier};
use super::{CommandEnv, CommandError, MAX_CONCURRENT_PER_TENANT, MAX_DEPTH, builtin};
use crate::artifact::Artifact;
use crate::cadence::{Cadence, Denial};
use crate::policy::Cap;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// How a grant's names name the commands `commands` and `exec` run.
const SCOPED_AS: crate::grants::CapNoun = crate::grants::CapNoun {
    cap: "commands",
    noun: "command",
};

/// A command found by name, ready to run.
pub(crate) struct Resolved {
    pub(crate) artifact: Artifact,
    /// A built-in's applet word (`sort` is `wbox sort`).
    pub(crate) prefix: Option<&'static str>,
    /// A registered command's packaged arguments.
    pub(crate) packaged: Vec<String>,
    pub(crate) arg_mode: ArgMode,
    pub(crate) tier: Tier,
    /// The store file, for tiers that run it in another process.
    pub(crate) path: Option<PathBuf>,
    /// The deny brokers its registration asks for (`#+STUB:`).
    pub(crate) stubs: crate::policy::Stubs,
    /// The caps its registration allows it at most (`command register
    /// --profile/--caps`); `None`: the caller's grant.
    pub(crate) ceiling: Option<crate::policy::CapSet>,
}

impl Resolved {
    /// The grant a run of this command gets from its caller's: narrowed to
    /// its recorded ceiling, never widened, with its stubs.
    pub(crate) fn grant(&self, caller: &crate::policy::Grant) -> crate::policy::Grant {
        let mut grant = caller.clone().with_stubs(self.stubs);
        if let Some(ceiling) = self.ceiling {
            grant.caps = grant.caps.intersect(ceiling);
        }
        grant
    }
}

/// Per-tenant counters with a cap; a slot is given back when dropped.
#[derive(Debug, Default)]
pub(crate) struct Slots {
    held: Mutex<HashMap<String, u32>>,
}

/// One held slot.
pub(crate) struct Slot {
    slots: Arc<Slots>,
    tenant: String,
}

impl Slots {
    /// Takes a slot for `tenant` if fewer than `cap` are held.
    pub(crate) fn take(self: &Arc<Self>, tenant: &str, cap: u32) -> Option<Slot> {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let n = held.entry(tenant.to_string()).or_default();
        if *n >= cap {
            return None;
        }
        *n += 1;
        Some(Slot {
            slots: self.clone(),
            tenant: tenant.to_string(),
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = self.slots.held.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = held.get_mut(&self.tenant) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                held.remove(&self.tenant);
            }
        }
    }
}

/// What the ladder reads: the cadence it audits to, the registry it
/// resolves from and the concurrency slots it hands out.
pub(crate) struct Ladder<'a> {
    pub(crate) cadence: &'a Cadence,
    pub(crate) registry: &'a Registry,
    pub(crate) slots: &'a Arc<Slots>,
}

impl Ladder<'_> {
    /// Applies the deny ladder for `env` asking to run `name` through the
    /// `cap` (commands or exec) interface; on success returns the command
    /// and the concurrency slot it holds while it runs.
    pub(crate) fn admit(
        &self,
        env: &CommandEnv,
        cap: Cap,
        name: &str,
    ) -> Result<(Resolved, Slot), CommandError> {
        self.cadence.revocations().refresh();
        self.admit_as_read(env, cap, name)
    }

    /// [`Ladder::admit`] for every stage of one line, in order: the
    /// revocation file is read once for the whole line; every other step
    /// runs for each stage. On a refusal, the index of the stage refused.
    pub(crate) fn admit_line<'n>(
        &self,
        env: &CommandEnv,
        cap: Cap,
        names: impl IntoIterator<Item = &'n str>,
    ) -> Result<Vec<(Resolved, Slot)>, (usize, CommandError)> {
        self.cadence.revocations().refresh();
        names
            .into_iter()
            .enumerate()
            .map(|(i, name)| self.admit_as_read(env, cap, name).map_err(|e| (i, e)))
            .collect()
    }

    /// The ladder against the revocation list as last read.
    fn admit_as_read(
        &self,
        env: &CommandEnv,
        cap: Cap,
        name: &str,
    ) -> Result<(Resolved, Slot), CommandError> {
        const BROKER: &str = "exec";
        let cadence = self.cadence;
        let deny = |denial: Denial, detail: &str| cadence.deny(&env.tenant, BROKER, denial, detail);
        cadence
            .admit_as_read(&env.tenant, BROKER)
            .map_err(|d| match d {
                Denial::Revoked => CommandError::Revoked,
                _ => CommandError::RateLimited,
            })?;
        if !env.caller_caps.contains(cap) {
            deny(Denial::Denied, name);
            return Err(CommandError::Denied);
        }
        if env.policy.depth + 1 > MAX_DEPTH {
            deny(Denial::Guard("max_depth"), name);
            return Err(CommandError::MaxDepth(MAX_DEPTH));
        }
        if let Some(allow) = &env.policy.allowlist
            && !allow.contains(name)
        {
            deny(Denial::Guard("command_not_granted"), name);
            return Err(CommandError::NotGranted(name.to_string()));
        }
        if let Some(scope) = &env.scope {
            let scoped = scope.now().map_err(|e| {
                deny(Denial::Guard(e.reason()), &e.to_string());
                CommandError::Refused(e.to_string())
            })?;
            scoped.judge_named(SCOPED_AS, name).map_err(|why| {
                deny(Denial::Guard("out_of_scope"), &why);
                CommandError::Refused(why)
            })?;
        }
        let resolved = match self.resolve(name) {
            Ok(Some(r)) => r,
            Ok(None) => {
                deny(Denial::Guard("unknown_command"), name);
                return Err(CommandError::Unknown(name.to_string()));
            }
            Err(e) => {
                deny(Denial::Guard("artifact_integrity"), name);
                return Err(e);
            }
        };
        let slot = self
            .slots
            .take(&env.tenant, MAX_CONCURRENT_PER_TENANT)
            .ok_or_else(|| {
                deny(Denial::Guard("too_many_running"), name);
                CommandError::TooManyRunning(MAX_CONCURRENT_PER_TENANT)
            })?;
        Ok((resolved, slot))
    }

    /// Looks a name up: built-ins first (they cannot be shadowed), then the
    /// registry, whose bytes are verified against their hash.
    fn resolve(&self, name: &str) -> Result<Option<Resolved>, CommandError> {
        if let Some(b) = builtin::resolve(name) {
            return Ok(Some(Resolved {
                artifact: b.artifact,
                prefix: b.prefix,
                packaged: Vec::new(),
                arg_mode: ArgMode::Argv,
                tier: Tier::Instance,
                path: None,
                stubs: crate::policy::Stubs::NONE,
                ceiling: None,
            }));
        }
        let registry = self.registry;
        let Some(entry) = registry.get(name).map_err(|e| match e {
            RegistryError::Corrupt { .. } => CommandError::Integrity(e.to_string()),
            e => CommandError::Refused(e.to_string()),
        })?
        else {
            return Ok(None);
        };
        let artifact = registry
            .load(&entry)
            .map_err(|e| CommandError::Integrity(e.to_string()))?;
        Ok(Some(Resolved {
            stubs: entry.stub_set(),
            ceiling: entry.ceiling(),
            path: Some(registry.path_of(&entry)),
            artifact,
            prefix: None,
            packaged: entry.prefix,
            arg_mode: entry.arg_mode,
            tier: entry.tier,
        }))
    }
}
