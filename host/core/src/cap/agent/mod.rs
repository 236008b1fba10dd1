//! The host side of the agent component's two host imports,
//! `workbooks:host/tools` and `workbooks:host/telemetry` (`wit/host/agent.wit`).
//!
//! The engine links them only on [`Lane::Agent`](crate::dock::Lane::Agent),
//! for the agent loop it ships. What a call does belongs to whoever runs
//! the loop (the agent service): it puts an [`AgentRun`] into the store's
//! [`AgentCtx`] before the loop starts and takes it back after.
//!
//! Invariant: a store's context serves no run by default; then the loop is
//! offered no tools and every call is answered with an error, never run.

mod host;

use crate::cap::bindings::workbooks::host::{telemetry, tools};
use std::future::Future;
use std::pin::Pin;
use wasmtime::component::{HasSelf, Linker};

pub use crate::cap::bindings::workbooks::engine::llm_types::{ToolCall, ToolDef};
pub use tools::Outcome;

/// One agent run's tools and telemetry, as the loop sees them.
pub trait AgentRun: std::any::Any + Send {
    /// The tools the run may call.
    fn definitions(&self) -> Vec<ToolDef>;
    /// Runs one call of model turn `step`; every failure is text for the
    /// model, in the outcome.
    fn call(
        &mut self,
        step: u32,
        call: ToolCall,
    ) -> Pin<Box<dyn Future<Output = Outcome> + Send + '_>>;
    /// Notes one model turn as it ends: its step, why the model stopped
    /// and how many tools it called.
    fn turn(&mut self, step: u32, finish_reason: String, tool_calls: u32);
}

/// The run a store serves; the default serves none.
#[derive(Default)]
pub struct AgentCtx {
    /// The run, while the loop runs.
    pub run: Option<Box<dyn AgentRun>>,
}

/// Links `tools` and `telemetry` for the agent component.
pub(crate) fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut AgentCtx,
) -> wasmtime::Result<()> {
    tools::add_to_linker::<T, HasSelf<AgentCtx>>(linker, get)?;
    telemetry::add_to_linker::<T, HasSelf<AgentCtx>>(linker, get)
}
