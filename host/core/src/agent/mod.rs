//! The agent loop, run as a component.
//!
//! The loop itself is `guests/agent` (exports `workbooks:engine/agent`):
//! the transcript, the step count, the exits, truncation, failure as text.
//! The host docks it on [`Lane::Agent`](crate::dock::Lane::Agent) under a
//! grant of `llm` alone, so the dock composes it with the llm broker; this
//! module serves its two other imports, `workbooks:host/tools` and
//! `workbooks:host/telemetry`, and nothing else links them.
//!
//! Invariants. The component holds no reach: each tool call runs here, as
//! its own task under that tool's grant (a shell line under `minimal`,
//! narrowed to `vfs` and `commands`, over the run's workdir only), and is
//! killed at its bound; the model reads `tool error: <name> timed out
//! after <t> (killed)`. There is no tool that runs a host command line.
//! Paths stay inside the workdir. The trace (`_steps.jsonl`, `events.org`)
//! is written by the host from what it ran, never by the component or the
//! model.

#[cfg(feature = "api")]
pub mod api;
mod definition;
mod host;
#[cfg(feature = "api")]
mod openapi;
pub(crate) mod outside;
pub mod replay;
mod run;
mod sessions;
mod tools;
mod trace;
mod wb;
mod workdir;

pub use definition::{AgentDef, DefError, parse_org};
pub use outside::{AgentServices, GitRemote, ImageEndpoint, ServicesError, TENANT};
pub use run::{AgentError, AgentOptions, AgentRecord, DEFAULT_SYSTEM, RunStatus, StepObserver};
pub use sessions::{LiveEvent, SessionError, SessionRecord, SessionStatus, Sessions, Subscription};
pub use trace::{StepEvent, TurnEvent};

use crate::bindings::workbooks::host::{telemetry, tools as tools_wit};
use wasmtime::component::{HasSelf, Linker};

/// The folder of the home under which runs are kept, by tenant and id.
pub(crate) const RUNS_DIR: &str = "runs";

/// A run's working dir inside its folder: the one part of the home its
/// tools (and only its tools) may be shown.
pub(crate) const WORKDIR: &str = "workdir";

/// The tools and trace of the run a store serves; the default serves no
/// run (every call is answered with an error).
#[derive(Default)]
pub(crate) struct AgentCtx {
    run: Option<Box<run::RunCtx>>,
}

/// Links `tools` and `telemetry` for the agent component.
pub(crate) fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut AgentCtx,
) -> wasmtime::Result<()> {
    tools_wit::add_to_linker::<T, HasSelf<AgentCtx>>(linker, get)?;
    telemetry::add_to_linker::<T, HasSelf<AgentCtx>>(linker, get)
}
