//! The host side of each cap word, one folder per word with the same
//! anatomy: `mod.rs` states what the cap owns, its WIT interface and its
//! invariant, holds the per-store context (deny-all by default) and its
//! `add_to_linker`; `host.rs` implements the generated host trait. Caps do
//! not reach into each other; only [`crate::dock`] links them.

pub mod agent;
#[expect(
    missing_docs,
    reason = "generated from the WIT, which documents each item; `ToolCall` and `ToolDef` are public"
)]
pub(crate) mod bindings;
pub(crate) mod browse;
pub(crate) mod exchange;
pub(crate) mod kv;
pub(crate) mod launch;
pub mod llm;
pub(crate) mod net;
pub(crate) mod net_types;
pub(crate) mod queue;
pub(crate) mod relay;
pub mod secrets;
pub(crate) mod session_info;
pub(crate) mod shadow;
pub(crate) mod unit;
pub(crate) mod vfs;
