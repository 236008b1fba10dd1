//! The isolation tiers a fabric task can run at, and why a tier is not
//! live here. The tier follows the shape and trust of what runs: a kernel
//! runs at `instance` (the hot loop lives in memory), a first-party
//! command at `instance`, a third-party one a rung stronger; asking for a
//! weaker tier than a command's own never weakens it.
//!
//! Threat: a tier that silently fell back to a weaker one would run
//! third-party code with less isolation than its operator chose. So a tier
//! that cannot run here is an error that says why ([`TierUnavailable`]),
//! never a quiet downgrade.

pub(crate) mod ceilings;
pub(crate) mod root;
mod syscalls;

pub use ceilings::forbid_new_threads;

use crate::commands::Tier;
use std::path::PathBuf;
use std::sync::Arc;

/// Why a tier cannot run here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tier unavailable: {} ({why})", tier.name())]
pub struct TierUnavailable {
    /// The tier asked for.
    pub tier: Tier,
    /// Why it is not live.
    pub why: String,
}

/// The `node` tier, which the engine does not run itself: its tasks go
/// to other machines. A service above the core implements it (the
/// fabric, over its bus) and puts it in the [`TierEnv`] it resolves with.
pub trait RemoteTier: std::fmt::Debug + Send + Sync {
    /// Whether it can take tasks here, and if not, why (for the operator).
    fn available(&self) -> Result<(), String>;
}

/// What the tiers need from the machine.
#[derive(Debug, Clone, Default)]
pub struct TierEnv {
    /// The binary the `os_process` and `container` tiers start
    /// ([`crate::EngineBuilder::child_binary`]).
    pub child: Option<PathBuf>,
    /// The bubblewrap binary, when found.
    pub bwrap: Option<PathBuf>,
    /// The `node` tier, when a service above the engine runs one.
    pub remote: Option<Arc<dyn RemoteTier>>,
}

impl TierEnv {
    /// Finds `bwrap` on `PATH` (or at `WB_BWRAP`).
    pub(crate) fn find_bwrap() -> Option<PathBuf> {
        if let Some(path) = std::env::var_os("WB_BWRAP") {
            let path = PathBuf::from(path);
            return path.is_file().then_some(path);
        }
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|dir| dir.join("bwrap"))
            .find(|p| p.is_file())
    }

    /// Says whether `tier` can run here, and why not.
    pub fn resolve(&self, tier: Tier) -> Result<(), TierUnavailable> {
        let unavailable = |why: &str| {
            Err(TierUnavailable {
                tier,
                why: why.to_string(),
            })
        };
        match tier {
            Tier::Instance => Ok(()),
            Tier::OsProcess if self.child.is_none() => unavailable(
                "this engine has no child binary to start (EngineBuilder::child_binary)",
            ),
            Tier::OsProcess => Ok(()),
            Tier::Container if self.bwrap.is_none() => {
                unavailable("bubblewrap not found: install bwrap, or set WB_BWRAP")
            }
            Tier::Container if self.child.is_none() => {
                unavailable("this engine has no child binary to start inside the sandbox")
            }
            Tier::Container => Ok(()),
            Tier::Node => match &self.remote {
                None => unavailable("this engine has no remote tier to send tasks to"),
                Some(remote) => remote.available().or_else(|why| unavailable(&why)),
            },
        }
    }
}
