use super::AgentCtx;
use crate::cap::bindings::workbooks::engine::llm_types::{ToolCall, ToolDef, Usage};
use crate::cap::bindings::workbooks::host::{telemetry, tools};

impl tools::Host for AgentCtx {
    fn definitions(&mut self) -> Vec<ToolDef> {
        self.run
            .as_ref()
            .map_or_else(Vec::new, |run| run.definitions())
    }

    async fn call(&mut self, step: u32, call: ToolCall) -> tools::Outcome {
        match self.run.as_mut() {
            Some(run) => run.call(step, call).await,
            None => tools::Outcome::Output("tool error: no agent run".into()),
        }
    }
}

impl telemetry::Host for AgentCtx {
    fn turn(&mut self, step: u32, finish_reason: String, tool_calls: u32, _usage: Option<Usage>) {
        // The tokens are the host's count of the completion, never the
        // loop's word for them: the run reads them from its own budget.
        if let Some(run) = self.run.as_mut() {
            run.turn(step, finish_reason, tool_calls);
        }
    }
}
