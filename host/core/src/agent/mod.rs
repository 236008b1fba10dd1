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
mod service;
mod sessions;
mod tools;
mod trace;
mod wb;
mod workdir;

pub use definition::{AgentDef, DefError, parse_org};
pub use outside::{AgentServices, GitRemote, ImageEndpoint, ServicesError, TENANT};
pub use run::{AgentError, AgentOptions, AgentRecord, DEFAULT_SYSTEM, RunStatus, StepObserver};
pub use service::Agents;
pub use sessions::{LiveEvent, SessionError, SessionRecord, SessionStatus, Sessions, Subscription};
pub use trace::{StepEvent, TurnEvent};

pub(crate) use crate::preopen::{RUNS_DIR, WORKDIR};
