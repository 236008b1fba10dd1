//! A WASI 0.3 HTTP handler (`wasi:http/handler@0.3.0`): `/echo` answers
//! the request's body, `/big` more bytes than the engine lets a response
//! carry, `/hang` never answers, `/count` how many requests this instance
//! has seen, `/inflight` (after 300 ms) the most requests this instance
//! held at once, `/linger` leaves a task ticking for ever after it answers
//! and `/ticks` says how far it got, `/chatty` after writing 1 MiB to
//! stderr and working for 20 ms, `/wrong-end` leads wasmtime 48.0.8 into
//! its wrong-end defect (as the probe `wasi03_cancel_wrong_end`), which
//! ends the instance; anything else, its method and path.

use wasip3::exports::http::handler::Guest;
use wasip3::http::types::{ErrorCode, Fields, Request, Response};
use wasip3::wit_bindgen::StreamResult;
use wasip3::{wit_future, wit_stream};

use std::sync::atomic::{AtomicU64, Ordering::SeqCst};

struct Probe;

static SEEN: AtomicU64 = AtomicU64::new(0);
static IN_FLIGHT: AtomicU64 = AtomicU64::new(0);
static MOST_IN_FLIGHT: AtomicU64 = AtomicU64::new(0);
static TICKS: AtomicU64 = AtomicU64::new(0);

wasip3::http::service::export!(Probe);

/// A response whose body is `bytes`, streamed by a task of its own once
/// the response is returned.
fn respond(bytes: Vec<u8>) -> Response {
    let (mut tx, rx) = wit_stream::new::<u8>();
    let (_trailers_tx, trailers_rx) = wit_future::new(|| Ok(None));
    let (response, _sent) = Response::new(Fields::new(), Some(rx), trailers_rx);
    wasip3::spawn_local(async move {
        tx.write_all(bytes).await;
    });
    response
}

impl Guest for Probe {
    async fn handle(request: Request) -> Result<Response, ErrorCode> {
        let seen = SEEN.fetch_add(1, SeqCst) + 1;
        let path = request.get_path_with_query().unwrap_or_default();
        let method = format!("{:?}", request.get_method());
        match path.as_str() {
            "/echo" => {
                let (_done_tx, done_rx) = wit_future::new(|| Ok(()));
                let (mut body, _trailers) = Request::consume_body(request, done_rx);
                let mut all = Vec::new();
                while let (StreamResult::Complete(_), bytes) =
                    body.read(Vec::with_capacity(8192)).await
                {
                    all.extend(bytes);
                }
                Ok(respond(all))
            }
            "/big" => Ok(respond(vec![b'x'; 9 << 20])),
            "/count" => Ok(respond(format!("{seen}\n").into_bytes())),
            "/linger" => {
                // Work left running after the answer: ticks for ever.
                wasip3::spawn_local(async {
                    loop {
                        wasip3::clocks::monotonic_clock::wait_for(10_000_000).await;
                        TICKS.fetch_add(1, SeqCst);
                    }
                });
                Ok(respond(b"lingering\n".to_vec()))
            }
            "/ticks" => Ok(respond(format!("{}\n", TICKS.load(SeqCst)).into_bytes())),
            "/chatty" => {
                test_programs_03::err(&vec![b'.'; 1 << 20]).await;
                // Then 20 ms of work, so the host's epoch checks see it run.
                let start = wasip3::clocks::monotonic_clock::now();
                while wasip3::clocks::monotonic_clock::now() - start < 20_000_000 {}
                Ok(respond(b"said a lot\n".to_vec()))
            }
            "/inflight" => {
                let now = IN_FLIGHT.fetch_add(1, SeqCst) + 1;
                MOST_IN_FLIGHT.fetch_max(now, SeqCst);
                wasip3::clocks::monotonic_clock::wait_for(300_000_000).await;
                IN_FLIGHT.fetch_sub(1, SeqCst);
                let most = MOST_IN_FLIGHT.load(SeqCst);
                Ok(respond(format!("{most}\n").into_bytes()))
            }
            "/wrong-end" => {
                use test_programs_03::unit_stream;
                let (read_end, write_end) = unit_stream::new();
                unit_stream::write(write_end);
                unit_stream::cancel_read(write_end);
                unit_stream::drop_readable(write_end);
                unit_stream::read(read_end);
                Ok(respond(b"the runtime let this pass\n".to_vec()))
            }
            "/hang" => {
                wasip3::clocks::monotonic_clock::wait_for(3_600_000_000_000).await;
                Ok(respond(Vec::new()))
            }
            _ => Ok(respond(format!("{method} {path}\n").into_bytes())),
        }
    }
}

fn main() {
    unreachable!("a WASI 0.3 handler is called through wasi:http/handler@0.3.0");
}
