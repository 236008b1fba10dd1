//! An HTTP handler for `wbx serve`: `/hello`, `/echo` (request body back),
//! `/big/BYTES` (a body of that size), `/slow/MS` (waits, then answers),
//! `/drip/MS` (answers at once, then streams a byte every 5 ms for MS),
//! `/count` (calls seen by this instance: always 1, a fresh instance per
//! request), `/spin` (computes forever without answering).
use std::sync::atomic::{AtomicU32, Ordering};

wit_bindgen::generate!({
    path: "../../wit",
    world: "wasi:http/proxy@0.2.12",
    generate_all,
});

use exports::wasi::http::incoming_handler::Guest;
use wasi::http::types::{
    Fields, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam,
};

static CALLS: AtomicU32 = AtomicU32::new(0);

fn read_body(req: &IncomingRequest) -> Vec<u8> {
    let mut out = Vec::new();
    let Ok(body) = req.consume() else { return out };
    let Ok(stream) = body.stream() else {
        return out;
    };
    while let Ok(chunk) = stream.blocking_read(65_536) {
        out.extend_from_slice(&chunk);
    }
    out
}

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

/// Answers at once, then writes a byte every few milliseconds for `ms`.
fn drip(out: ResponseOutparam, ms: u64) {
    let resp = OutgoingResponse::new(Fields::new());
    let _ = resp.set_status_code(200);
    let outgoing = resp.body().expect("body");
    ResponseOutparam::set(out, Ok(resp));
    let stream = outgoing.write().expect("stream");
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_millis(ms) {
        if stream.blocking_write_and_flush(b".").is_err() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    drop(stream);
    let _ = OutgoingBody::finish(outgoing, None);
}

struct Handler;

impl Guest for Handler {
    fn handle(request: IncomingRequest, out: ResponseOutparam) {
        let calls = CALLS.fetch_add(1, Ordering::SeqCst) + 1;
        let path = request.path_with_query().unwrap_or_default();
        let parts: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        match parts.as_slice() {
            ["hello"] => respond(out, 200, b"hello from wasm\n"),
            ["echo"] => {
                let body = read_body(&request);
                respond(out, 200, &body);
            }
            ["big", n] => respond(out, 200, &vec![b'x'; n.parse().unwrap_or(0)]),
            ["slow", ms] => {
                std::thread::sleep(std::time::Duration::from_millis(ms.parse().unwrap_or(0)));
                respond(out, 200, b"slow done\n");
            }
            ["drip", ms] => drip(out, ms.parse().unwrap_or(0)),
            ["count"] => respond(out, 200, format!("{calls}\n").as_bytes()),
            ["spin"] => {
                let mut x = 0u64;
                loop {
                    x = std::hint::black_box(x.wrapping_add(1));
                }
            }
            _ => respond(out, 404, b"not found\n"),
        }
    }
}

export!(Handler);

fn main() {}
