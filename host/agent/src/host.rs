//! The loop component (`guests/agent`, exports `workbooks:engine/agent`)
//! as this service ships and runs it: its bytes ([`LOOP`]), its role
//! ([`EXTENSION`]: the service's own imports, `workbooks:host/tools` and
//! `workbooks:host/telemetry`, `wit/host/agent.wit`), their host side, and
//! one call of it ([`run_loop`]).
//!
//! The engine docks the loop in its role ([`EXTENSION`]) under `network` narrowed to
//! `llm` (so the dock composes it with the llm broker), with
//! [`AGENT_FUEL`] and [`AGENT_RUN_DEADLINE`], the run's tape of model
//! answers and token budget; this module serves the two other imports
//! from the run (a [`LoopRun`]), which the store holds for the call.
//!
//! Invariant: the loop holds no reach but `llm`; each tool call is made by
//! the run, on the host, never by the component. A store that holds no
//! run offers no tools and answers every call with an error.

use crate::limits::{AGENT_FUEL, AGENT_RUN_DEADLINE};
use bindings::exports::workbooks::engine::agent::RunStatus;
use bindings::workbooks::engine::llm_types::Usage;
use bindings::workbooks::host::{telemetry, tools};
use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use wasmtime::component::{HasSelf, Linker};
use workbooks::llm::TokenBudget;
use workbooks::llm::tape::SharedTape;
use workbooks::{Cap, CapSet, Engine, Extension, Grant, Role, SessionOptions, Shipped, StoreState};

/// The loop's own world: the service's imports and the loop's export.
mod bindings {
    wasmtime::component::bindgen!({
        path: ["../../wit", "../../wit/host"],
        world: "workbooks:host/agent",
        imports: { "workbooks:host/tools.call": async },
        exports: { default: async },
    });
}

pub use bindings::exports::workbooks::engine::agent::RunOptions as LoopOptions;
pub(crate) use bindings::workbooks::engine::llm_types::{ToolCall, ToolDef};
pub(crate) use tools::Outcome;

/// The loop component, built from `guests/agent` by this crate's build
/// script; registered with the engine so `wbx warm` compiles it too.
pub static LOOP: Shipped = Shipped::new(
    "workbooks:agent",
    include_bytes!(concat!(env!("OUT_DIR"), "/agent.wasm")),
);

/// The loop's role: `tools` and `telemetry`, linked for it alone.
pub static EXTENSION: Extension = Extension {
    name: "agent",
    interfaces: &["workbooks:host/tools", "workbooks:host/telemetry"],
    link,
};

fn link(linker: &mut Linker<StoreState>) -> wasmtime::Result<()> {
    tools::add_to_linker::<StoreState, HasSelf<LoopCtx>>(linker, context)?;
    telemetry::add_to_linker::<StoreState, HasSelf<LoopCtx>>(linker, context)
}

/// The loop's context in a store.
fn context(store: &mut StoreState) -> &mut LoopCtx {
    store.extension::<LoopCtx>()
}

/// One run's tools and telemetry, as the loop sees them.
pub(crate) trait LoopRun: Any + Send {
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

/// What one store of the loop serves: the run, while the loop runs.
#[derive(Default)]
struct LoopCtx {
    run: Option<Box<dyn LoopRun>>,
}

impl tools::Host for LoopCtx {
    fn definitions(&mut self) -> Vec<ToolDef> {
        self.run
            .as_ref()
            .map_or_else(Vec::new, |run| run.definitions())
    }

    async fn call(&mut self, step: u32, call: ToolCall) -> Outcome {
        match self.run.as_mut() {
            Some(run) => run.call(step, call).await,
            None => Outcome::Output("tool error: no agent run".into()),
        }
    }
}

impl telemetry::Host for LoopCtx {
    fn turn(&mut self, step: u32, finish_reason: String, tool_calls: u32, _usage: Option<Usage>) {
        // The tokens are the host's count of the completion, never the
        // loop's word for them: the run reads them from its own budget.
        if let Some(run) = self.run.as_mut() {
            run.turn(step, finish_reason, tool_calls);
        }
    }
}

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
pub(crate) struct LoopAnswer {
    pub(crate) status: LoopStatus,
    /// Model turns that called tools.
    pub(crate) steps: u32,
    /// The model's text, `done`'s argument, or the loop's own line.
    pub(crate) result: String,
}

/// What one call of the loop is asked.
pub(crate) struct LoopCall {
    /// The run's id (the store's session id).
    pub(crate) id: String,
    /// The tenant the run acts as.
    pub(crate) tenant: String,
    pub(crate) system: String,
    pub(crate) task: String,
    pub(crate) options: LoopOptions,
    /// Where the model's answers are recorded, or replayed from.
    pub(crate) tape: SharedTape,
    /// What the run may spend on the model.
    pub(crate) budget: Arc<TokenBudget>,
    /// The grant its model requests are judged by (its `llm` models, its
    /// expiry), read again at each request.
    pub(crate) scope: Option<workbooks::grants::Scope>,
}

/// Why the loop could not start: its grant (a host bug), its component,
/// its dock or its store.
#[derive(Debug, thiserror::Error)]
pub enum LoopError {
    /// The grant could not be formed (a host bug).
    #[error(transparent)]
    Policy(#[from] workbooks::PolicyError),
    /// The shipped component is not a valid artifact (a broken build).
    #[error("agent: {0}")]
    Artifact(String),
    /// The engine could not dock or set up the loop.
    #[error(transparent)]
    Call(#[from] workbooks::CallOnError),
}

/// Runs the loop once for `call`, its host imports served by `run`; hands
/// the run back with what it recorded, and the answer or the failure (a
/// trap, the deadline, fuel) as a line.
pub(crate) async fn run_loop<R: LoopRun>(
    engine: &Engine,
    call: LoopCall,
    run: R,
) -> Result<(Result<LoopAnswer, String>, Option<R>), LoopError> {
    let artifact = LOOP
        .artifact()
        .map_err(|e| LoopError::Artifact(e.to_string()))?;
    let grant = Grant::narrowed("network", CapSet::of(&[Cap::Llm]))?;
    let mut session = SessionOptions::new(call.id, call.tenant);
    session.fuel = Some(AGENT_FUEL);
    session.timeout = Some(AGENT_RUN_DEADLINE);
    session.llm.tape = Some(call.tape);
    session.llm.budget = Some(call.budget);
    session.scope = call.scope;
    let (system, task, options) = (call.system, call.task, call.options);
    let context = LoopCtx {
        run: Some(Box::new(run)),
    };
    let end = engine
        .call_on(
            artifact,
            &grant,
            Role::Extended(&EXTENSION),
            &session,
            context,
            |store, instance| {
                Box::pin(async move {
                    let agent = bindings::Agent::new(&mut *store, &instance)?;
                    let engine_agent = agent.workbooks_engine_agent();
                    engine_agent
                        .call_run(&mut *store, &system, &task, &options)
                        .await
                })
            },
        )
        .await?;
    let answer = end
        .answer
        .map(|r| LoopAnswer {
            status: match r.status {
                RunStatus::Finished => LoopStatus::Finished,
                RunStatus::Done => LoopStatus::Done,
                RunStatus::Stopped => LoopStatus::Stopped,
                RunStatus::Failed => LoopStatus::Failed,
            },
            steps: r.steps,
            result: r.result,
        })
        .map_err(|e| e.to_string());
    let run = end
        .context
        .and_then(|c| c.run)
        .and_then(|r| (r as Box<dyn Any>).downcast::<R>().ok())
        .map(|r| *r);
    Ok((answer, run))
}

#[cfg(test)]
mod tests {
    use super::*;
    use workbooks::DockError;

    fn engine(home: &std::path::Path) -> Engine {
        Engine::builder().home(home).build().unwrap()
    }

    #[test]
    fn the_loop_is_refused_off_its_lane_and_gains_no_cap_on_it() {
        let home = tempfile::tempdir().unwrap();
        let engine = engine(home.path());
        let artifact = LOOP.artifact().unwrap();
        let llm = Grant::narrowed("network", CapSet::of(&[Cap::Llm])).unwrap();
        // Off its role, the service's imports are a guest reaching for the
        // host's own: refused, by name, under every grant.
        for grant in [llm.clone(), Grant::profile("posix")] {
            let refused = engine.dock(artifact, &grant).unwrap_err();
            assert!(
                matches!(refused, DockError::HostPrimitive { .. }),
                "{refused}"
            );
            assert!(refused.to_string().contains("workbooks:host/"), "{refused}");
        }
        // In it, the role links tools and telemetry, and nothing else: the
        // loop still needs its grant's llm.
        let bare = Grant::narrowed("network", CapSet::EMPTY).unwrap();
        let refused = engine
            .dock_on(artifact, &bare, Role::Extended(&EXTENSION))
            .unwrap_err();
        assert!(refused.to_string().contains("llm"), "{refused}");
        engine
            .dock_on(artifact, &llm, Role::Extended(&EXTENSION))
            .unwrap();
    }

    #[test]
    fn a_lane_of_another_name_does_not_link_the_loops_imports() {
        static OTHER: Extension = Extension {
            name: "other",
            interfaces: &["workbooks:host/tools", "workbooks:host/telemetry"],
            link: |_| Ok(()),
        };
        let home = tempfile::tempdir().unwrap();
        let engine = engine(home.path());
        let artifact = LOOP.artifact().unwrap();
        let llm = Grant::narrowed("network", CapSet::of(&[Cap::Llm])).unwrap();
        // It claims the names but links nothing: the dock fails at link,
        // never instantiating a loop whose imports nobody serves.
        let refused = engine
            .dock_on(artifact, &llm, Role::Extended(&OTHER))
            .unwrap_err();
        assert!(matches!(refused, DockError::Link(_)), "{refused}");
    }
}
