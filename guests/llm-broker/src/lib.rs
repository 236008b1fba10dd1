//! The llm broker: serves `workbooks:engine/llm` by writing the
//! OpenAI-compatible chat/completions request and reading the reply here,
//! inside the sandbox, so the model's untrusted JSON is never parsed by the
//! host. The host primitive `workbooks:host/llm` posts the bytes to
//! the operator's endpoint with the key added and keeps every bound; this
//! component never sees the key or the URL.

mod openai;

wit_bindgen::generate!({
    path: ["../../wit", "../../wit/host"],
    world: "workbooks:host/llm-broker",
    generate_all,
});

use exports::workbooks::engine::llm::{ChatRequest, ChatResponse, Guest, LlmError};
use workbooks::host::llm::{self as host, PostError};

struct Llm;

impl Guest for Llm {
    fn chat(request: ChatRequest) -> Result<ChatResponse, LlmError> {
        let model = request
            .model
            .clone()
            .filter(|m| !m.is_empty())
            .unwrap_or_else(host::default_model);
        let body = openai::request_json(&request, &model);
        let reply = host::post(body.as_bytes()).map_err(from_post)?;
        openai::read_reply(reply.status, &reply.body)
    }
}

fn from_post(e: PostError) -> LlmError {
    match e {
        PostError::NotConfigured => LlmError::NotConfigured,
        PostError::Revoked => LlmError::Revoked,
        PostError::RateLimited => LlmError::RateLimited,
        PostError::Timeout(ms) => LlmError::Timeout(ms),
        PostError::HardTimeout => LlmError::HardTimeout,
        PostError::Transport(why) => LlmError::Transport(why),
        PostError::TooLarge(n) => LlmError::TooLarge(n),
    }
}

export!(Llm);
