//! WASI 0.3 requests held: `wasi03_requests_hold N HOST:PORT [each]`
//! sends N `wasi:http` requests (`GET /bytes/1`, plain http) to
//! `HOST:PORT`. By default it starts every `send` at once, each in flight
//! before any is answered, and holds them: after two seconds it prints one
//! line, `pending P; refused R` (R answered `connection-limit-reached`)
//! and the first other answer if there was one, then keeps every call
//! until its stdin ends. With `each` it awaits each answer and drops it
//! before the next, and prints `answered A; refused R` the same way.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use test_programs_03::{args, out, read_stdin};
use wasip3::clocks::monotonic_clock;
use wasip3::exports::cli::run::Guest;
use wasip3::http::client::send;
use wasip3::http::types::{ErrorCode, Fields, Request, Response, Scheme};
use wasip3::wit_future;

struct Probe;

wasip3::cli::command::export!(Probe);

/// One `send` in flight.
type Call = Pin<Box<dyn Future<Output = Result<Response, ErrorCode>>>>;

/// How many, where, and whether to await each answer.
fn parsed(args: Vec<String>) -> (usize, String, bool) {
    let want = args.first().and_then(|a| a.parse().ok()).unwrap_or(100);
    let authority = args.get(1).cloned().unwrap_or_default();
    (
        want,
        authority,
        args.get(2).is_some_and(|mode| mode == "each"),
    )
}

/// A `GET /bytes/1` to `authority`.
fn request(authority: &str) -> Request {
    let (_trailers_tx, trailers_rx) = wit_future::new(|| Ok(None));
    let (request, _sent) = Request::new(Fields::new(), None, trailers_rx, None);
    let _ = request.set_scheme(Some(&Scheme::Http));
    let _ = request.set_authority(Some(authority));
    let _ = request.set_path_with_query(Some("/bytes/1"));
    request
}

/// What the answers came to: `done` answered (or pending), the refusals
/// and the first other answer.
#[derive(Default)]
struct Tally {
    done: usize,
    refused: usize,
    other: Option<String>,
}

impl Tally {
    /// Counts one answer; a response is dropped at once.
    fn answer(&mut self, answer: Result<Response, ErrorCode>) {
        match answer {
            Ok(_) => self.done += 1,
            Err(ErrorCode::ConnectionLimitReached) => self.refused += 1,
            Err(e) => self.other = self.other.take().or(Some(format!("{e:?}"))),
        }
    }

    fn line(&self, done: &str) -> String {
        let mut line = format!("{done} {}; refused {}", self.done, self.refused);
        if let Some(other) = &self.other {
            line.push_str(&format!("; other {other}"));
        }
        line.push('\n');
        line
    }
}

/// Polls every call still held once, counting the answered ones into
/// `tally` (as other answers, with `pending` false) and dropping them.
async fn poll_each(calls: &mut [Option<Call>], tally: &mut Tally) {
    std::future::poll_fn(|cx| {
        for call in calls.iter_mut() {
            if let Some(pending) = call
                && let Poll::Ready(answer) = pending.as_mut().poll(cx)
            {
                match answer {
                    Ok(_) => tally.other = tally.other.take().or(Some("answered".into())),
                    refused => tally.answer(refused),
                }
                *call = None;
            }
        }
        Poll::Ready(())
    })
    .await;
}

impl Guest for Probe {
    async fn run() -> Result<(), ()> {
        let (want, authority, each) = parsed(args());
        let mut tally = Tally::default();
        if each {
            for _ in 0..want {
                tally.answer(send(request(&authority)).await);
            }
            out(tally.line("answered").as_bytes()).await;
            return Ok(());
        }
        let mut calls: Vec<Option<Call>> = (0..want)
            .map(|_| Some(Box::pin(send(request(&authority))) as Call))
            .collect();
        poll_each(&mut calls, &mut tally).await;
        monotonic_clock::wait_for(2_000_000_000).await;
        poll_each(&mut calls, &mut tally).await;
        tally.done = calls.iter().filter(|c| c.is_some()).count();
        out(tally.line("pending").as_bytes()).await;
        read_stdin().await;
        drop(calls);
        Ok(())
    }
}

fn main() {
    unreachable!("a WASI 0.3 command runs through wasi:cli/run@0.3.0");
}
