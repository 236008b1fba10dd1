//! # workbooks-agent — the agent service
//!
//! A service over the `workbooks` core: [`Agents`] holds an engine and
//! runs the loop component this crate ships ([`LOOP`]) in a role of its own
//! ([`EXTENSION`], a `workbooks::Extension`) through
//! `Engine::call_on`, serving its tools; the core names nothing
//! here. It owns the run's tools, the trace, replay, the signed
//! [`ledger`], sessions and the agent HTTP API ([`api`], feature `api`).
//!
//! ## The agent loop, run as a component
//!
//! The loop itself is `guests/agent` (exports `workbooks:engine/agent`):
//! the transcript, the step count, the exits, truncation, failure as text.
//! The host docks it in its role ([`EXTENSION`]) under a grant of `llm` alone, so the dock
//! composes it with the llm broker; this crate serves its two other
//! imports, `workbooks:host/tools` and `workbooks:host/telemetry`, and
//! nothing else links them.
//!
//! Invariants. The component holds no reach: each tool call runs here, as
//! its own task under that tool's grant (a shell line under `minimal`,
//! narrowed to `vfs` and `commands`, over the run's workdir only), and is
//! killed at its bound; the model reads `tool error: <name> timed out
//! after <t> (killed)`. There is no tool that runs a host command line.
//! Paths stay inside the workdir. The trace (`_steps.jsonl`, `events.org`)
//! is written by the host from what it ran, never by the component or the
//! model.

#![deny(missing_docs)]

#[cfg(feature = "api")]
pub mod api;
mod definition;
mod grant;
#[cfg(feature = "api")]
pub mod grants_api;
mod host;
pub mod ledger;
pub mod limits;
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
mod world;

pub use definition::{AgentDef, DefError, parse_org};
pub use grant::{AGENT_SUBJECT, GrantSeen, RunGrantError};
pub use host::{EXTENSION, LOOP, LoopError, LoopStatus};
pub use outside::{AgentServices, GitRemote, ImageEndpoint, ServicesError, TENANT};
pub use run::{AgentError, AgentOptions, AgentRecord, DEFAULT_SYSTEM, StepObserver};
pub use service::Agents;
pub use sessions::{LiveEvent, LiveRunError, SessionRecord, SessionStatus, Sessions, Subscription};
pub use trace::{StepEvent, TurnEvent};

pub use workdir::{RUN_WORKDIRS, RUNS_DIR, WORKDIR};

/// The crate's layering, checked: every top-level module is placed, and
/// each imports only from the modules before it.
#[cfg(test)]
mod layers {
    /// Lowest first.
    const LAYERS: &[&str] = &[
        "limits",
        "grant",
        "host",
        "definition",
        "ledger",
        "trace",
        "workdir",
        "outside",
        "service",
        "wb",
        "tools",
        "world",
        "run",
        "replay",
        "sessions",
        "openapi",
        "grants_api",
        "api",
    ];

    #[test]
    fn every_module_is_placed_and_none_imports_from_a_layer_above_it() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let checked = layers::check(&src, LAYERS, &[]).unwrap_or_else(|e| panic!("{e}"));
        assert!(checked >= 15, "checked only {checked} files");
    }
}
