//! A scripted OpenAI-compatible chat/completions server on loopback: each
//! request takes the next scripted answer (the last one repeats) and is
//! kept, headers and JSON body, for the test to read.

use serde_json::{Value, json};
use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One scripted answer.
#[derive(Clone, Debug)]
pub enum Answer {
    /// A status, extra header lines, and a body.
    Raw(u16, String, String),
    /// Accept the request and never answer.
    Hang,
    /// Wait, then answer.
    After(Duration, Box<Answer>),
    /// A model that never stops talking: as many words as the request's
    /// `max_tokens` allows (8 192, a whole context, when it names none),
    /// then a call of the shell tool so the loop goes on; with `usage`,
    /// it says what it spent (a 100-token prompt and every word).
    Ramble {
        /// Whether the reply carries `usage`.
        usage: bool,
    },
}

/// The answer a rambling model gives `request`.
fn rambled(request: &Value, usage: bool) -> Answer {
    let words = request["max_tokens"].as_u64().unwrap_or(8192);
    let content = "blah ".repeat(words as usize);
    let mut body = json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "scripted-model",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
            "role": "assistant",
            "content": content,
            "tool_calls": [{"id": "r", "type": "function", "function": {"name": "shell", "arguments": "{\"pipeline\":\"true\"}"}}],
        }}],
    });
    if usage {
        body["usage"] =
            json!({"prompt_tokens": 100, "completion_tokens": words, "total_tokens": 100 + words});
    }
    Answer::Raw(200, String::new(), body.to_string())
}

/// A 200 completion whose message is `message`, finishing for `finish`.
pub fn completion(message: Value, finish: &str) -> Answer {
    let body = json!({
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "scripted-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    });
    Answer::Raw(200, String::new(), body.to_string())
}

/// A final text answer.
pub fn text(content: &str) -> Answer {
    completion(json!({"role": "assistant", "content": content}), "stop")
}

/// One turn calling `calls`: (id, tool name, arguments as written).
pub fn tool_calls(calls: &[(&str, &str, &str)]) -> Answer {
    let calls: Vec<Value> = calls
        .iter()
        .map(|(id, name, args)| {
            json!({"id": id, "type": "function", "function": {"name": name, "arguments": args}})
        })
        .collect();
    completion(
        json!({"role": "assistant", "content": null, "tool_calls": calls}),
        "tool_calls",
    )
}

/// A request as the server read it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Value,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn messages(&self) -> &Vec<Value> {
        self.body["messages"].as_array().expect("messages")
    }
}

pub struct ModelServer {
    pub addr: SocketAddr,
    pub seen: Arc<Mutex<Vec<Seen>>>,
}

impl ModelServer {
    /// The base URL (`…/v1`).
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().expect("seen").clone()
    }
}

/// A request's path and headers (names lowercased), read up to the blank
/// line that ends them.
pub async fn read_head(s: &mut TcpStream) -> Option<(String, Vec<(String, String)>)> {
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while !buf.ends_with(b"\r\n\r\n") {
        if s.read(&mut byte).await.ok()? == 0 {
            return None;
        }
        buf.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&buf).into_owned();
    let mut lines = head.split("\r\n");
    let path = lines.next()?.split(' ').nth(1)?.to_string();
    let headers = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
        .collect();
    Some((path, headers))
}

async fn read_request(s: &mut TcpStream) -> Option<Seen> {
    let (path, headers) = read_head(s).await?;
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).await.ok()?;
    Some(Seen {
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(Value::Null),
    })
}

/// Starts a server answering with `script` in order (the last answer
/// repeats once the others are spent).
pub async fn start(script: Vec<Answer>) -> ModelServer {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let seen = Arc::new(Mutex::new(Vec::new()));
    let script = Arc::new(Mutex::new(VecDeque::from(script)));
    let kept = seen.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut s, _)) = listener.accept().await else {
                return;
            };
            let (seen, script) = (kept.clone(), script.clone());
            tokio::spawn(async move {
                let Some(req) = read_request(&mut s).await else {
                    return;
                };
                let request = req.body.clone();
                seen.lock().expect("seen").push(req);
                let mut answer = {
                    let mut q = script.lock().expect("script");
                    if q.len() > 1 {
                        q.pop_front()
                    } else {
                        q.front().cloned()
                    }
                };
                while let Some(Answer::After(wait, then)) = answer {
                    tokio::time::sleep(wait).await;
                    answer = Some(*then);
                }
                if let Some(Answer::Ramble { usage }) = answer {
                    answer = Some(rambled(&request, usage));
                }
                match answer {
                    Some(Answer::Raw(status, extra, body)) => {
                        let head = format!(
                            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n",
                            body.len()
                        );
                        let _ = s.write_all(head.as_bytes()).await;
                        let _ = s.write_all(body.as_bytes()).await;
                        let _ = s.shutdown().await;
                    }
                    Some(Answer::Hang | Answer::After(..) | Answer::Ramble { .. }) | None => {
                        tokio::time::sleep(Duration::from_secs(3600)).await;
                    }
                }
            });
        }
    });
    ModelServer { addr, seen }
}
