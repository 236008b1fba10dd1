//! The OpenAI-compatible chat/completions wire format, both ways.

use crate::workbooks::engine::llm_types::{
    ChatRequest, ChatResponse, FinishReason, LlmError, Message, Role, ToolCall, Usage,
};
use serde_json::{Map, Value, json};

/// Characters of an error body kept in an error.
const ERROR_EXCERPT_CHARS: usize = 300;

fn role_word(role: Role) -> &'static str {
    match role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    }
}

fn message_json(m: &Message) -> Value {
    let mut o = Map::new();
    o.insert("role".into(), role_word(m.role).into());
    // An assistant turn that only called tools has no content.
    let content = if m.content.is_empty() && !m.tool_calls.is_empty() {
        Value::Null
    } else {
        m.content.clone().into()
    };
    o.insert("content".into(), content);
    if !m.tool_calls.is_empty() {
        let calls: Vec<Value> = m
            .tool_calls
            .iter()
            .map(|c| {
                json!({
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                })
            })
            .collect();
        o.insert("tool_calls".into(), calls.into());
    }
    if let Some(id) = &m.tool_call_id {
        o.insert("tool_call_id".into(), id.clone().into());
    }
    Value::Object(o)
}

/// The request body for `model`.
pub(crate) fn request_json(r: &ChatRequest, model: &str) -> String {
    let mut o = Map::new();
    o.insert("model".into(), model.into());
    o.insert(
        "messages".into(),
        r.messages
            .iter()
            .map(message_json)
            .collect::<Vec<_>>()
            .into(),
    );
    if !r.tools.is_empty() {
        let tools: Vec<Value> = r
            .tools
            .iter()
            .map(|t| {
                let params = serde_json::from_str::<Value>(&t.parameters)
                    .unwrap_or_else(|_| json!({"type": "object", "properties": {}}));
                json!({
                    "type": "function",
                    "function": {"name": t.name, "description": t.description, "parameters": params},
                })
            })
            .collect();
        o.insert("tools".into(), tools.into());
    }
    if let Some(t) = r.temperature {
        // f32 to the nearest short decimal, so 0.4 is sent as 0.4.
        let t: f64 = format!("{t}").parse().unwrap_or(f64::from(t));
        o.insert("temperature".into(), t.into());
    }
    Value::Object(o).to_string()
}

fn excerpt(text: &str) -> String {
    text.chars().take(ERROR_EXCERPT_CHARS).collect()
}

/// The message of an `{"error": ...}` body, if it has one.
fn error_message(v: &Value) -> Option<String> {
    let e = v.get("error")?;
    Some(match e {
        Value::String(s) => s.clone(),
        _ => e
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| e.to_string()),
    })
}

fn finish_reason(v: Option<&Value>) -> FinishReason {
    match v.and_then(Value::as_str) {
        Some("stop") | None => FinishReason::Stop,
        Some("tool_calls") | Some("function_call") => FinishReason::ToolCalls,
        Some("length") => FinishReason::Length,
        Some("content_filter") => FinishReason::ContentFilter,
        Some(other) => FinishReason::Other(other.to_string()),
    }
}

fn tool_calls(v: Option<&Value>) -> Result<Vec<ToolCall>, LlmError> {
    let Some(Value::Array(calls)) = v else {
        return Ok(Vec::new());
    };
    calls
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let f = c
                .get("function")
                .ok_or_else(|| LlmError::Malformed(format!("tool call {i} has no function")))?;
            let name = f
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| LlmError::Malformed(format!("tool call {i} has no name")))?;
            // Arguments are a JSON string on the wire; some endpoints send the
            // object itself.
            let arguments = match f.get("arguments") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            };
            let id = c
                .get("id")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| format!("call_{i}"));
            Ok(ToolCall {
                id,
                name: name.to_string(),
                arguments,
            })
        })
        .collect()
}

/// Reads the endpoint's answer.
pub(crate) fn read_reply(status: u16, body: &[u8]) -> Result<ChatResponse, LlmError> {
    let text = String::from_utf8_lossy(body);
    let parsed: Result<Value, _> = serde_json::from_slice(body);
    if !(200..300).contains(&status) {
        let why = parsed
            .ok()
            .as_ref()
            .and_then(error_message)
            .unwrap_or_else(|| excerpt(&text));
        return Err(LlmError::Status((status, excerpt(&why))));
    }
    let v = parsed.map_err(|e| LlmError::Malformed(format!("not JSON: {e}")))?;
    if let Some(why) = error_message(&v) {
        let code = v
            .pointer("/error/code")
            .and_then(Value::as_u64)
            .and_then(|c| u16::try_from(c).ok())
            .unwrap_or(502);
        return Err(LlmError::Status((code, excerpt(&why))));
    }
    let choice = v
        .pointer("/choices/0")
        .ok_or_else(|| LlmError::Malformed("no choices".into()))?;
    let m = choice
        .get("message")
        .ok_or_else(|| LlmError::Malformed("the choice has no message".into()))?;
    let content = match m.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    };
    let message = Message {
        role: Role::Assistant,
        content,
        tool_calls: tool_calls(m.get("tool_calls"))?,
        tool_call_id: None,
    };
    let usage = v.get("usage").map(|u| {
        let n = |k: &str| u.get(k).and_then(Value::as_u64).unwrap_or(0);
        Usage {
            prompt_tokens: n("prompt_tokens"),
            completion_tokens: n("completion_tokens"),
            total_tokens: n("total_tokens"),
        }
    });
    Ok(ChatResponse {
        message,
        finish_reason: finish_reason(choice.get("finish_reason")),
        model: v
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        usage,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exports::workbooks::engine::llm::ChatRequest as Request;

    fn msg(role: Role, content: &str) -> Message {
        Message {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
        }
    }

    #[test]
    fn a_request_is_the_openai_shape_with_null_content_beside_tool_calls() {
        let mut assistant = msg(Role::Assistant, "");
        assistant.tool_calls.push(ToolCall {
            id: "c1".into(),
            name: "shell".into(),
            arguments: r#"{"pipeline":"true"}"#.into(),
        });
        let mut answer = msg(Role::Tool, "ok");
        answer.tool_call_id = Some("c1".into());
        let r: Request = ChatRequest {
            model: None,
            messages: vec![msg(Role::System, "s"), assistant, answer],
            tools: Vec::new(),
            temperature: Some(0.4),
        };
        let v: Value = serde_json::from_str(&request_json(&r, "m")).unwrap();
        assert_eq!(v["model"], "m");
        assert_eq!(v["temperature"], json!(0.4));
        assert!(v.get("tools").is_none());
        assert!(v["messages"][1]["content"].is_null());
        assert_eq!(v["messages"][1]["tool_calls"][0]["type"], "function");
        assert_eq!(
            v["messages"][1]["tool_calls"][0]["function"]["arguments"],
            r#"{"pipeline":"true"}"#
        );
        assert_eq!(v["messages"][2]["tool_call_id"], "c1");
    }

    #[test]
    fn replies_read_as_the_wire_says_and_errors_keep_their_message() {
        let ok = br#"{"model":"x","choices":[{"message":{"content":null,"tool_calls":[{"id":"a","function":{"name":"done","arguments":{"result":"r"}}}]},"finish_reason":"tool_calls"}]}"#;
        let r = read_reply(200, ok).unwrap();
        assert_eq!(r.message.tool_calls[0].arguments, r#"{"result":"r"}"#);
        assert!(matches!(r.finish_reason, FinishReason::ToolCalls));
        assert!(r.usage.is_none());
        match read_reply(503, br#"{"error":{"message":"busy"}}"#) {
            Err(LlmError::Status((503, m))) => assert_eq!(m, "busy"),
            other => panic!("{other:?}"),
        }
        match read_reply(200, br#"{"error":{"code":429,"message":"later"}}"#) {
            Err(LlmError::Status((429, m))) => assert_eq!(m, "later"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            read_reply(200, b"{}"),
            Err(LlmError::Malformed(_))
        ));
        assert!(matches!(
            read_reply(200, b"<html>"),
            Err(LlmError::Malformed(_))
        ));
    }
}
