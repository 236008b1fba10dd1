//! An HTTP handler that fetches for its caller: `/fetch/AUTHORITY/PATH`
//! sends a `wasi:http` GET of `http://AUTHORITY/PATH` and reads its body to
//! the end, answering `STATUS BYTES`, `STATUS BYTES then ERROR` when the
//! body failed part way, or 502 and the request's error; `/hello` answers
//! without reaching anything.

wit_bindgen::generate!({
    path: "../../wit",
    world: "wasi:http/proxy@0.2.12",
    generate_all,
});

use exports::wasi::http::incoming_handler::Guest;
use wasi::http::outgoing_handler;
use wasi::http::types::{
    Fields, IncomingRequest, OutgoingBody, OutgoingRequest, OutgoingResponse, ResponseOutparam,
    Scheme,
};

fn respond(out: ResponseOutparam, status: u16, body: &[u8]) {
    let resp = OutgoingResponse::new(Fields::new());
    let _ = resp.set_status_code(status);
    let outgoing = resp.body().expect("body");
    ResponseOutparam::set(out, Ok(resp));
    let stream = outgoing.write().expect("stream");
    for chunk in body.chunks(4096) {
        if stream.blocking_write_and_flush(chunk).is_err() {
            return;
        }
    }
    drop(stream);
    let _ = OutgoingBody::finish(outgoing, None);
}

/// A GET of `http://authority/path`, its body read to the end: the line
/// to answer, or the request's own error.
fn fetch(authority: &str, path: &str) -> Result<String, String> {
    let request = OutgoingRequest::new(Fields::new());
    let _ = request.set_scheme(Some(&Scheme::Http));
    let _ = request.set_authority(Some(authority));
    let _ = request.set_path_with_query(Some(&format!("/{path}")));
    let sent = outgoing_handler::handle(request, None).map_err(|e| format!("{e:?}"))?;
    sent.subscribe().block();
    let response = match sent.get() {
        Some(Ok(Ok(r))) => r,
        answer => return Err(format!("{answer:?}")),
    };
    let status = response.status();
    let body = response.consume().map_err(|()| "no body".to_string())?;
    let stream = body.stream().map_err(|()| "no stream".to_string())?;
    let mut bytes = 0;
    loop {
        match stream.blocking_read(65_536) {
            Ok(chunk) => bytes += chunk.len(),
            Err(wasi::io::streams::StreamError::Closed) => break,
            Err(wasi::io::streams::StreamError::LastOperationFailed(e)) => {
                // Its first line: a host built with backtraces adds one.
                let why = e.to_debug_string();
                let why = why.lines().next().unwrap_or_default();
                return Ok(format!("{status} {bytes} then {why}"));
            }
        }
    }
    Ok(format!("{status} {bytes}"))
}

struct Handler;

impl Guest for Handler {
    fn handle(request: IncomingRequest, out: ResponseOutparam) {
        let path = request.path_with_query().unwrap_or_default();
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        match parts.as_slice() {
            ["hello"] => respond(out, 200, b"hello from wasm\n"),
            ["fetch", authority, rest @ ..] => match fetch(authority, &rest.join("/")) {
                Ok(line) => respond(out, 200, format!("{line}\n").as_bytes()),
                Err(e) => respond(out, 502, format!("{e}\n").as_bytes()),
            },
            _ => respond(out, 404, b"not found\n"),
        }
    }
}

export!(Handler);

fn main() {}
