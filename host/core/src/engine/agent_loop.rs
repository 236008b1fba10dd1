//! One call of the agent loop the engine ships (`guests/agent`, exports
//! `workbooks:engine/agent`).
//!
//! The engine docks the loop on [`Lane::Agent`] under `network` narrowed
//! to `llm` (so the dock composes it with the llm broker), with
//! [`AGENT_FUEL`] and [`AGENT_RUN_DEADLINE`], the caller's tape of model
//! answers and token budget, and the caller's [`AgentRun`] serving the
//! loop's two host imports (`tools`, `telemetry`). Everything else about
//! a run (its tools, trace, ledger, replay) belongs to the agent service,
//! which holds an engine and calls this.
//!
//! Invariant: the loop holds no reach but `llm`; each tool call is made
//! by the caller's `AgentRun`, on the host, never by the component.

use super::Engine;
use crate::cap::agent::{AgentCtx, AgentRun};
use crate::cap::bindings::exports::workbooks::engine::agent::{
    GuestIndices, RunStatus as WitStatus,
};
use crate::cap::llm::TokenBudget;
use crate::cap::llm::tape::SharedTape;
use crate::dock::{DockError, Lane};
use crate::limits::{AGENT_FUEL, AGENT_RUN_DEADLINE, Deadline};
use crate::policy::{Cap, CapSet, Grant, PolicyError};
use crate::state::{SessionError, SessionOptions};
use std::sync::Arc;

/// What one call of the loop is asked.
pub struct LoopCall {
    /// The run's id (the store's session id).
    pub id: String,
    /// The tenant the run acts as.
    pub tenant: String,
    /// The system prompt, whole.
    pub system: String,
    /// The task.
    pub task: String,
    /// The model, its turns at most, its temperature and the characters
    /// of one tool's output it is shown (the loop's own `run-options`).
    pub options: LoopOptions,
    /// Where the model's answers are recorded, or replayed from.
    pub tape: SharedTape,
    /// What the run may spend on the model.
    pub budget: Arc<TokenBudget>,
}

pub use crate::cap::bindings::exports::workbooks::engine::agent::RunOptions as LoopOptions;

/// How a run of the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoopStatus {
    /// The model answered without calling a tool.
    Finished,
    /// The model called `done`.
    Done,
    /// The step budget ran out.
    Stopped,
    /// The model could not be asked, or the loop itself failed.
    Failed,
}

/// What the loop answered.
#[derive(Debug, Clone)]
pub struct LoopAnswer {
    /// How it ended.
    pub status: LoopStatus,
    /// Model turns that called tools.
    pub steps: u32,
    /// The model's text, `done`'s argument, or the loop's own line.
    pub result: String,
}

/// The end of one call: the answer, or why the component failed (a trap,
/// the deadline, fuel), and the caller's run handed back.
pub struct LoopEnd {
    /// The answer, or the failure as a line.
    pub answer: Result<LoopAnswer, String>,
    /// The `AgentRun` the call was given, with what it recorded.
    pub run: Option<Box<dyn AgentRun>>,
}

/// Why the loop could not start.
#[derive(Debug, thiserror::Error)]
pub enum LoopError {
    /// The grant could not be formed (a host bug).
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// The agent component could not be docked.
    #[error("agent: {0}")]
    Dock(#[from] DockError),
    /// The store could not be set up.
    #[error("agent: {0}")]
    Session(#[from] SessionError),
}

impl Engine {
    /// Runs the shipped agent loop once for `call`, its host imports
    /// served by `run`; see the module doc for what the engine bounds.
    pub async fn run_agent_loop(
        &self,
        call: LoopCall,
        run: Box<dyn AgentRun>,
    ) -> Result<LoopEnd, LoopError> {
        let grant = Grant::narrowed("network", CapSet::of(&[Cap::Llm]))?;
        let docked = self.dock_on(&crate::embedded::AGENT.artifact(), &grant, Lane::Agent)?;
        let pre = docked
            .component()
            .ok_or_else(|| DockError::Link("the agent is not a component".into()))?;
        let indices = GuestIndices::new(pre)
            .map_err(|e| DockError::Link(format!("the agent does not export agent: {e:#}")))?;
        let mut session = SessionOptions::new(call.id.clone(), call.tenant.clone());
        session.fuel = Some(AGENT_FUEL);
        let (mut store, _) = self.new_store(docked.flavor, &grant, &session)?;
        let state = store.data_mut();
        state.deadline = Deadline::after(AGENT_RUN_DEADLINE);
        state.caps.llm.tape = Some(call.tape);
        state.caps.llm.budget = Some(call.budget);
        state.agent = AgentCtx { run: Some(run) };
        let called = async {
            let instance = pre.instantiate_async(&mut store).await?;
            let agent = indices.load(&mut store, &instance)?;
            agent
                .call_run(&mut store, &call.system, &call.task, &call.options)
                .await
        }
        .await;
        let answer = match called {
            Ok(r) => Ok(LoopAnswer {
                status: match r.status {
                    WitStatus::Finished => LoopStatus::Finished,
                    WitStatus::Done => LoopStatus::Done,
                    WitStatus::Stopped => LoopStatus::Stopped,
                    WitStatus::Failed => LoopStatus::Failed,
                },
                steps: r.steps,
                result: r.result,
            }),
            Err(e) => Err(super::run::classify(e, store.data(), Some(AGENT_FUEL)).to_string()),
        };
        Ok(LoopEnd {
            answer,
            run: store.data_mut().agent.run.take(),
        })
    }
}
