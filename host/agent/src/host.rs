use crate::run::RunCtx;
use crate::trace::TurnEvent;
use std::future::Future;
use std::pin::Pin;
use workbooks::{AgentRun, Outcome, ToolCall, ToolDef};

impl AgentRun for RunCtx {
    fn definitions(&self) -> Vec<ToolDef> {
        crate::tools::definitions(self.toolbox.exec)
            .into_iter()
            .map(|t| ToolDef {
                name: t.name.to_string(),
                description: t.description.to_string(),
                parameters: t.parameters.to_string(),
            })
            .collect()
    }

    fn call(
        &mut self,
        step: u32,
        call: ToolCall,
    ) -> Pin<Box<dyn Future<Output = Outcome> + Send + '_>> {
        Box::pin(async move {
            let ran = RunCtx::call(self, step, call).await;
            match ran.finished {
                Some(result) => Outcome::Finished(result),
                None => Outcome::Output(ran.output),
            }
        })
    }

    fn turn(&mut self, step: u32, finish_reason: String, tool_calls: u32) {
        let turn = TurnEvent {
            step,
            finish_reason,
            tool_calls,
            tokens: self.budget.take_last(),
        };
        self.turns.push(turn);
    }
}
