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

/// Where fabric tasks run, weakest boundary first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FabricTier {
    /// A fresh store per task in this process.
    Instance,
    /// A child `wbx` process per task.
    OsProcess,
    /// A worker on another process or machine, through NATS JetStream.
    Node,
    /// A child `wbx` per task inside a bubblewrap sandbox: no network, a
    /// root of nothing but its program and system libraries (see
    /// `tier::root`), its own `/tmp`, its own pid namespace, no home:
    /// its parent hands it the compiled code and serves its storage caps
    /// (`cap::relay`); under OS ceilings on system calls, threads, memory,
    /// CPU time and new processes (none), see `tier::ceilings`.
    Container,
}

impl FabricTier {
    /// Parses `instance`, `os_process`, `node` or `container`.
    pub fn parse(s: &str) -> Option<FabricTier> {
        match s {
            "instance" => Some(FabricTier::Instance),
            "os_process" | "os-process" => Some(FabricTier::OsProcess),
            "node" => Some(FabricTier::Node),
            "container" => Some(FabricTier::Container),
            _ => None,
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            FabricTier::Instance => "instance",
            FabricTier::OsProcess => "os_process",
            FabricTier::Node => "node",
            FabricTier::Container => "container",
        }
    }

    /// The tier a command registered at `tier` runs at when `self` is
    /// asked for: the stronger of the two.
    pub fn at_least(self, tier: Tier) -> FabricTier {
        let own = match tier {
            Tier::Instance => FabricTier::Instance,
            Tier::OsProcess => FabricTier::OsProcess,
        };
        self.max(own)
    }
}

/// Why a tier cannot run here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tier unavailable: {} ({why})", tier.name())]
pub struct TierUnavailable {
    /// The tier asked for.
    pub tier: FabricTier,
    /// Why it is not live.
    pub why: String,
}

/// What the tiers need from the machine.
#[derive(Debug, Clone, Default)]
pub struct TierEnv {
    /// The `wbx` binary child processes run.
    pub wbx: Option<PathBuf>,
    /// The bubblewrap binary, when found.
    pub bwrap: Option<PathBuf>,
    /// The NATS server the node tier submits to.
    pub nats: Option<String>,
    /// Whether the node tier is built in (it is the fabric's, above the
    /// engine, and a build may leave it out).
    pub node: bool,
}

impl TierEnv {
    /// Finds `bwrap` on `PATH` (or at `WB_BWRAP`).
    pub fn find_bwrap() -> Option<PathBuf> {
        if let Some(path) = std::env::var_os("WB_BWRAP") {
            let path = PathBuf::from(path);
            return path.is_file().then_some(path);
        }
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|dir| dir.join("bwrap"))
            .find(|p| p.is_file())
    }

    /// Says whether `tier` can run here, and why not.
    pub fn resolve(&self, tier: FabricTier) -> Result<(), TierUnavailable> {
        let unavailable = |why: &str| {
            Err(TierUnavailable {
                tier,
                why: why.to_string(),
            })
        };
        match tier {
            FabricTier::Instance => Ok(()),
            FabricTier::OsProcess if self.wbx.is_none() => {
                unavailable("this engine has no wbx binary to start (EngineBuilder::wbx_binary)")
            }
            FabricTier::OsProcess => Ok(()),
            FabricTier::Container if self.bwrap.is_none() => {
                unavailable("bubblewrap not found: install bwrap, or set WB_BWRAP")
            }
            FabricTier::Container if self.wbx.is_none() => {
                unavailable("this engine has no wbx binary to start inside the sandbox")
            }
            FabricTier::Container => Ok(()),
            FabricTier::Node if self.nats.is_none() => {
                unavailable("no NATS server: pass --nats URL (and run `wbx worker --nats URL`)")
            }
            FabricTier::Node if self.node => Ok(()),
            FabricTier::Node => unavailable("this build has no node tier (built without `node`)"),
        }
    }
}
