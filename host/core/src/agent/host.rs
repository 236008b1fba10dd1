use super::AgentCtx;
use super::trace::TurnEvent;
use crate::bindings::workbooks::engine::llm_types::{ToolCall, ToolDef, Usage};
use crate::bindings::workbooks::host::{telemetry, tools};

impl tools::Host for AgentCtx {
    fn definitions(&mut self) -> Vec<ToolDef> {
        let Some(run) = self.run.as_ref() else {
            return Vec::new();
        };
        super::tools::definitions(run.toolbox.exec)
            .into_iter()
            .map(|t| ToolDef {
                name: t.name.to_string(),
                description: t.description.to_string(),
                parameters: t.parameters.to_string(),
            })
            .collect()
    }

    async fn call(&mut self, step: u32, call: ToolCall) -> tools::Outcome {
        let Some(run) = self.run.as_mut() else {
            return tools::Outcome::Output("tool error: no agent run".into());
        };
        let ran = run.call(step, call).await;
        match ran.finished {
            Some(result) => tools::Outcome::Finished(result),
            None => tools::Outcome::Output(ran.output),
        }
    }
}

impl telemetry::Host for AgentCtx {
    fn turn(&mut self, step: u32, finish_reason: String, tool_calls: u32, _usage: Option<Usage>) {
        // The tokens are the host's count of the completion, never the
        // loop's word for them.
        if let Some(run) = self.run.as_mut() {
            let turn = TurnEvent {
                step,
                finish_reason,
                tool_calls,
                tokens: run.budget.take_last(),
            };
            run.turns.push(turn);
        }
    }
}
