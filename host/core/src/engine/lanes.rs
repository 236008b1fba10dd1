//! The build broker (`guests/builder`): compilers that run in the
//! sandbox, never on the host. A build docks the broker under `minimal`
//! narrowed to `vfs` and `commands`, so the lane runs as a command through
//! `workbooks:engine/commands` (the deny ladder and cadence apply), and
//! the broker caps what it takes and gives back. The toolkit service's
//! lanes (`wat`, `js`) build through this.
//!
//! Invariant: one fresh instance per build, with fuel, [`BUILD_TIMEOUT`]
//! and [`BUILD_BROKER_MEMORY`] on; nothing is compiled by the host.

use super::Engine;
use crate::dock::Lane;
use crate::limits::{BUILD_BROKER_MEMORY, BUILD_TIMEOUT, COMMAND_FUEL, Deadline};
use crate::policy::{Cap, CapSet, Grant};
use crate::state::SessionOptions;

/// Why a build in the sandbox gave nothing back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LaneError {
    /// The language has no lane: the compiler it needs is not shipped.
    #[error("lane_unavailable: {0}")]
    Unavailable(String),
    /// The lane (or the broker) refused the source.
    #[error("the {lane} lane: {why}")]
    Refused {
        /// The lane.
        lane: &'static str,
        /// What it said.
        why: String,
    },
}

impl Engine {
    /// Builds `source` in `lang` (`wat`, `js`) with the build broker:
    /// docked under `minimal` narrowed to `vfs` and `commands`, with fuel,
    /// [`BUILD_TIMEOUT`] and [`BUILD_BROKER_MEMORY`] on, one fresh
    /// instance per build. A language with no lane is
    /// [`LaneError::Unavailable`] naming the compiler it lacks.
    pub async fn build_in_sandbox(
        &self,
        lang: &str,
        source: Vec<u8>,
    ) -> Result<Vec<u8>, LaneError> {
        let label = match lang {
            "wat" => "wat",
            "js" => "js",
            _ => "build",
        };
        let lane = |why: String| LaneError::Refused { lane: label, why };
        let grant = Grant::narrowed("minimal", CapSet::of(&[Cap::Vfs, Cap::Commands]))
            .map_err(|e| lane(e.to_string()))?;
        let docked = self
            .dock_on(&crate::embedded::BUILDER.artifact(), &grant, Lane::Call)
            .map_err(|e| lane(format!("the build broker: {e}")))?;
        let pre = docked
            .component()
            .ok_or_else(|| lane("the build broker is not a component".into()))?;
        let mut session = SessionOptions::new("build", "default");
        session.fuel = Some(COMMAND_FUEL);
        session.memory = Some(BUILD_BROKER_MEMORY);
        let (mut store, _) = self
            .new_store(docked.flavor, &grant, &session)
            .map_err(|e| lane(e.to_string()))?;
        store.data_mut().deadline = Deadline::after(BUILD_TIMEOUT);
        let call = async {
            let instance = pre.instantiate_async(&mut store).await?;
            let build = instance
                .get_typed_func::<(&str, &[u8]), (Result<Vec<u8>, String>,)>(&mut store, "build")?;
            let (answer,) = build.call_async(&mut store, (lang, &source)).await?;
            Ok::<_, wasmtime::Error>(answer)
        };
        let answer = tokio::time::timeout(BUILD_TIMEOUT, call)
            .await
            .map_err(|_| lane(format!("timed out after {BUILD_TIMEOUT:?}")))?
            .map_err(|e| lane(format!("the build broker failed: {e:#}")))?;
        answer.map_err(|why| match why.strip_prefix("lane_unavailable: ") {
            Some(what) => LaneError::Unavailable(what.to_string()),
            None => lane(why.strip_prefix("refused: ").unwrap_or(&why).to_string()),
        })
    }
}
