//! Opens the file `f` of the first preopen again and again through WASI
//! 0.3 and holds every descriptor: argv[1] is how many; prints `opened N`,
//! then the first error if one stopped it. With argv[2] `together` it
//! makes every call at once, each in flight before any is answered; with
//! `cancelled` it first makes N at once and drops them all in flight,
//! then opens one at a time.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use test_programs_03::{args, out};
use wasip3::exports::cli::run::Guest;
use wasip3::filesystem::preopens::get_directories;
use wasip3::filesystem::types::{Descriptor, DescriptorFlags, ErrorCode, OpenFlags, PathFlags};

/// One open of `f` in `dir`.
async fn open(dir: &Descriptor) -> Result<Descriptor, ErrorCode> {
    dir.open_at(
        PathFlags::empty(),
        "f".into(),
        OpenFlags::empty(),
        DescriptorFlags::READ,
    )
    .await
}

/// Every call in `calls` polled together until all are answered.
async fn all<T>(calls: Vec<Pin<Box<dyn Future<Output = T> + '_>>>) -> Vec<T> {
    let mut calls: Vec<_> = calls.into_iter().map(Some).collect();
    let mut answers: Vec<Option<T>> = calls.iter().map(|_| None).collect();
    std::future::poll_fn(|cx| {
        for (call, answer) in calls.iter_mut().zip(answers.iter_mut()) {
            if let Some(pending) = call
                && let Poll::Ready(done) = pending.as_mut().poll(cx)
            {
                *answer = Some(done);
                *call = None;
            }
        }
        if calls.iter().all(Option::is_none) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    answers.into_iter().flatten().collect()
}

/// Starts `want` opens at once, each polled once (in flight, where the
/// host has not answered it yet), then drops them all: a call in flight
/// is cancelled.
async fn cancel_all(dir: &Descriptor, want: usize) {
    let mut calls: Vec<_> = (0..want).map(|_| Box::pin(open(dir))).collect();
    std::future::poll_fn(|cx| {
        for call in &mut calls {
            let _ = call.as_mut().poll(cx);
        }
        Poll::Ready(())
    })
    .await;
}

struct Probe;

wasip3::cli::command::export!(Probe);

impl Guest for Probe {
    async fn run() -> Result<(), ()> {
        let want: usize = args().first().and_then(|a| a.parse().ok()).unwrap_or(100);
        let dirs = get_directories();
        let Some((dir, _)) = dirs.first() else {
            out(b"no preopen\n").await;
            return Err(());
        };
        let mut held = Vec::with_capacity(want);
        let mut stopped = None;
        let mode = args().get(1).cloned().unwrap_or_default();
        if mode == "cancelled" {
            cancel_all(dir, want).await;
        }
        if mode == "together" {
            let calls = (0..want).map(|_| Box::pin(open(dir)) as Pin<Box<dyn Future<Output = _>>>);
            for opened in all(calls.collect()).await {
                match opened {
                    Ok(file) => held.push(file),
                    Err(e) => stopped = stopped.or(Some(e)),
                }
            }
        } else {
            for _ in 0..want {
                match open(dir).await {
                    Ok(file) => held.push(file),
                    Err(e) => {
                        stopped = Some(e);
                        break;
                    }
                }
            }
        }
        let mut report = format!("opened {}\n", held.len());
        if let Some(e) = stopped {
            report.push_str(&format!("error {e:?}\n"));
        }
        out(report.as_bytes()).await;
        Ok(())
    }
}

fn main() {
    unreachable!("a WASI 0.3 command runs through wasi:cli/run@0.3.0");
}
