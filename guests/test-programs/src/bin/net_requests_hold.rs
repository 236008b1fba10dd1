//! Sends `wasi:http` requests (`GET /bytes/1`, plain http) to argv[2]
//! (`HOST:PORT`); argv[1] is how many. By default it sends every one
//! without waiting for any answer and holds them: after two seconds it
//! prints one line, `pending P; refused R` (R answered
//! `connection-limit-reached`) and the first other answer if there was
//! one, then keeps every request until its stdin ends. With argv[3]
//! `each` it waits for each answer and drops it before the next, and
//! prints `answered A; refused R` the same way.
use test_programs::wasi::clocks::monotonic_clock;
use test_programs::wasi::http::outgoing_handler::{self, FutureIncomingResponse};
use test_programs::wasi::http::types::{ErrorCode, Fields, OutgoingRequest, Scheme};

/// One request sent to `authority`, or the answer refusing it at once.
fn send(authority: &str) -> Result<FutureIncomingResponse, String> {
    let request = OutgoingRequest::new(Fields::new());
    let _ = request.set_scheme(Some(&Scheme::Http));
    let _ = request.set_authority(Some(authority));
    let _ = request.set_path_with_query(Some("/bytes/1"));
    outgoing_handler::handle(request, None).map_err(|e| format!("{e:?}"))
}

/// The line for `done` answered (or pending), `refused` and another answer.
fn report(done: &str, n: usize, refused: usize, other: Option<String>) -> String {
    let mut line = format!("{done} {n}; refused {refused}");
    if let Some(answer) = other {
        line.push_str(&format!("; other {answer}"));
    }
    line
}

fn main() {
    let args = test_programs::args();
    let want: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(100);
    let authority = args.get(1).cloned().unwrap_or_default();
    let (mut refused, mut other) = (0, None);
    if args.get(2).map(String::as_str) == Some("each") {
        let mut answered = 0;
        for _ in 0..want {
            let response = send(&authority).map(|sent| {
                sent.subscribe().block();
                sent.get()
            });
            match response {
                Ok(Some(Ok(Ok(_)))) => answered += 1,
                Ok(Some(Ok(Err(ErrorCode::ConnectionLimitReached)))) => refused += 1,
                answer => other = other.or(Some(format!("{answer:?}"))),
            }
        }
        println!("{}", report("answered", answered, refused, other));
        return;
    }
    let mut sent = Vec::with_capacity(want);
    for _ in 0..want {
        match send(&authority) {
            Ok(response) => sent.push(response),
            Err(e) => other = other.or(Some(e)),
        }
    }
    monotonic_clock::subscribe_duration(2_000_000_000).block();
    let mut pending = 0;
    // A response is seen once its pollable is polled; a request still
    // unanswered after a millisecond is not waited for longer.
    for response in &sent {
        let answered = response.subscribe();
        let soon = monotonic_clock::subscribe_duration(1_000_000);
        let _ = test_programs::wasi::io::poll::poll(&[&answered, &soon]);
        match response.get() {
            None => pending += 1,
            Some(Ok(Err(ErrorCode::ConnectionLimitReached))) => refused += 1,
            Some(answer) => other = other.or(Some(format!("{answer:?}"))),
        }
    }
    println!("{}", report("pending", pending, refused, other));
    test_programs::wait_for_stdin_end();
    drop(sent);
}
