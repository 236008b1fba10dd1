//! The agent loop: ask the model, run the tools it asks for, append their
//! results, ask again. The transcript is the whole state: `[system, task]`,
//! then per step the assistant message (role, content and tool calls only)
//! and one tool message per call, its text cut to the run's limit.
//!
//! Exits: no tool calls (the model's text is the result), the `done` tool
//! (its argument is), the step budget (`stopped: reached max_steps (N)`)
//! and a failed model turn (`error: ...`). Nothing here traps on any of
//! them. This component holds no reach of its own: the model is behind
//! `workbooks:engine/llm` (the llm broker), every tool runs in the host
//! under the tool's own grant and bound, and the host writes the trace.

wit_bindgen::generate!({
    path: ["../../wit", "../../wit/host"],
    world: "workbooks:host/agent",
    generate_all,
});

use exports::workbooks::engine::agent::{Guest, RunOptions, RunRecord, RunStatus};
use workbooks::engine::llm;
use workbooks::engine::llm_types::{ChatRequest, FinishReason, LlmError, Message, Role};
use workbooks::host::{telemetry, tools};

struct Agent;

fn message(role: Role, content: String) -> Message {
    Message {
        role,
        content,
        tool_calls: Vec::new(),
        tool_call_id: None,
    }
}

/// The first `max` characters of `text`.
fn cut(mut text: String, max: u32) -> String {
    if let Some((at, _)) = text.char_indices().nth(max as usize) {
        text.truncate(at);
    }
    text
}

fn finish_word(r: &FinishReason) -> String {
    match r {
        FinishReason::Stop => "stop".into(),
        FinishReason::ToolCalls => "tool_calls".into(),
        FinishReason::Length => "length".into(),
        FinishReason::ContentFilter => "content_filter".into(),
        FinishReason::Other(s) => s.clone(),
    }
}

/// The result text of a failed model turn.
fn failure(e: &LlmError) -> String {
    match e {
        LlmError::NotConfigured => "error: llm not configured".into(),
        LlmError::Revoked => "error: llm: tenant revoked".into(),
        LlmError::RateLimited => "error: llm: rate limited".into(),
        LlmError::Timeout(ms) => format!("error: llm timeout after {ms} ms"),
        LlmError::HardTimeout => "error: llm_hard_timeout".into(),
        LlmError::Status((code, why)) => format!("error: llm status {code}: {why}"),
        LlmError::Transport(why) => format!("error: llm transport: {why}"),
        LlmError::Malformed(why) => format!("error: llm reply malformed: {why}"),
        LlmError::TooLarge(n) => format!("error: llm exchange larger than {n} bytes"),
    }
}

impl Guest for Agent {
    fn run(system: String, task: String, options: RunOptions) -> RunRecord {
        // The request holds the transcript: each turn appends to it, so
        // nothing is copied to ask again.
        let mut request = ChatRequest {
            model: options.model.clone(),
            messages: vec![message(Role::System, system), message(Role::User, task)],
            tools: tools::definitions(),
            temperature: options.temperature,
        };
        let mut steps = 0u32;
        loop {
            let reply = match llm::chat(&request) {
                Ok(reply) => reply,
                Err(e) => {
                    return RunRecord {
                        result: failure(&e),
                        steps,
                        status: RunStatus::Failed,
                    };
                }
            };
            let calls = reply.message.tool_calls;
            let step = steps + 1;
            telemetry::turn(
                step,
                &finish_word(&reply.finish_reason),
                calls.len() as u32,
                reply.usage,
            );
            if calls.is_empty() {
                return RunRecord {
                    result: reply.message.content,
                    steps,
                    status: RunStatus::Finished,
                };
            }
            let mut answers = Vec::with_capacity(calls.len());
            for call in &calls {
                match tools::call(step, call) {
                    tools::Outcome::Finished(result) => {
                        return RunRecord {
                            result,
                            steps: step,
                            status: RunStatus::Done,
                        };
                    }
                    tools::Outcome::Output(text) => answers.push(Message {
                        role: Role::Tool,
                        content: cut(text, options.max_tool_output),
                        tool_calls: Vec::new(),
                        tool_call_id: Some(call.id.clone()),
                    }),
                }
            }
            // The assistant message is kept as role, content and tool calls.
            request.messages.push(Message {
                role: Role::Assistant,
                content: reply.message.content,
                tool_calls: calls,
                tool_call_id: None,
            });
            request.messages.extend(answers);
            steps = step;
            if steps >= options.max_steps {
                return RunRecord {
                    result: format!("stopped: reached max_steps ({})", options.max_steps),
                    steps,
                    status: RunStatus::Stopped,
                };
            }
        }
    }
}

export!(Agent);

#[cfg(test)]
mod tests {
    use super::cut;

    #[test]
    fn cutting_counts_characters_and_never_splits_one() {
        assert_eq!(cut("héllo".into(), 2), "hé");
        assert_eq!(cut("abc".into(), 10), "abc");
        assert_eq!(cut("€€€".into(), 0), "");
    }
}
