//! The build broker (`guests/builder`), which this crate ships: compilers
//! that run in the sandbox, never on the host. A build docks the broker
//! under `minimal` narrowed to `vfs` and `commands`, so the lane runs as a
//! command through `workbooks:engine/commands` (the deny ladder and
//! cadence apply), and the broker caps what it takes and gives back. The
//! lanes (`wat`, `js`) build through this.
//!
//! Invariant: one fresh instance per build, with fuel, [`BUILD_TIMEOUT`]
//! and [`BUILD_BROKER_MEMORY`] on; nothing is compiled by the host.

use crate::limits::{BUILD_BROKER_MEMORY, BUILD_TIMEOUT};
use workbooks::limits::COMMAND_FUEL;
use workbooks::{Cap, CapSet, Engine, Grant, Role, SessionOptions, Shipped};

/// The build broker, built from `guests/builder` by this crate's build
/// script; registered with the engine so `wbx warm` compiles it too.
pub static BUILDER: Shipped = Shipped::new(
    "workbooks:builder",
    include_bytes!(concat!(env!("OUT_DIR"), "/builder.wasm")),
);

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

/// Builds `source` in `lang` (`wat`, `js`) with the build broker on
/// `engine`: docked under `minimal` narrowed to `vfs` and `commands`, with
/// fuel, [`BUILD_TIMEOUT`] and [`BUILD_BROKER_MEMORY`] on, one fresh
/// instance per build. A language with no lane is
/// [`LaneError::Unavailable`] naming the compiler it lacks.
pub async fn build_in_sandbox(
    engine: &Engine,
    lang: &str,
    source: Vec<u8>,
) -> Result<Vec<u8>, LaneError> {
    let label = match lang {
        "wat" => "wat",
        "js" => "js",
        _ => "build",
    };
    let lane = |why: String| LaneError::Refused { lane: label, why };
    let artifact = BUILDER
        .artifact()
        .map_err(|e| lane(format!("the build broker: {e}")))?;
    let grant = Grant::narrowed("minimal", CapSet::of(&[Cap::Vfs, Cap::Commands]))
        .map_err(|e| lane(e.to_string()))?;
    let mut session = SessionOptions::new("build", "default");
    session.fuel = Some(COMMAND_FUEL);
    session.memory = Some(BUILD_BROKER_MEMORY);
    session.timeout = Some(BUILD_TIMEOUT);
    let lang = lang.to_string();
    let call = engine.call_on(
        artifact,
        &grant,
        Role::Call,
        &session,
        (),
        |store, instance| {
            Box::pin(async move {
                let build = instance.get_typed_func::<(&str, &[u8]), (Result<Vec<u8>, String>,)>(
                    &mut *store,
                    "build",
                )?;
                let (answer,) = build.call_async(&mut *store, (&lang, &source)).await?;
                Ok(answer)
            })
        },
    );
    let called = tokio::time::timeout(BUILD_TIMEOUT, call)
        .await
        .map_err(|_| lane(format!("timed out after {BUILD_TIMEOUT:?}")))?
        .map_err(|e| lane(format!("the build broker: {e}")))?;
    let answer = called
        .answer
        .map_err(|e| lane(format!("the build broker failed: {e}")))?;
    answer.map_err(|why| match why.strip_prefix("lane_unavailable: ") {
        Some(what) => LaneError::Unavailable(what.to_string()),
        None => lane(why.strip_prefix("refused: ").unwrap_or(&why).to_string()),
    })
}
