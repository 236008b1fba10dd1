//! WASI 0.3 connections held: `wasi03_accepts_hold [drop|release]`
//! listens on `127.0.0.1` at a port the system picks, prints `listening
//! PORT`, then takes every connection its peers make and keeps each one
//! (with `drop`, drops each at once, as a server done with it would). Once
//! at least one came, it stops when none has come for three seconds (or
//! after a minute with none at all) and prints `accepted N`. With
//! `release`, the first three quiet seconds instead drop every connection
//! held, print `released N` and wait on for more.

use std::future::Future;
use std::pin::pin;
use std::task::Poll;
use test_programs_03::{args, out};
use wasip3::exports::cli::run::Guest;
use wasip3::sockets::types::{IpAddressFamily, IpSocketAddress, Ipv4SocketAddress, TcpSocket};

/// How long a quiet listener waits for one more connection, in nanoseconds.
const QUIET_NS: u64 = 3_000_000_000;
/// How long it waits for the first.
const FIRST_NS: u64 = 60_000_000_000;

/// `work`'s output, or `None` when `ns` nanoseconds pass first (`work` is
/// then dropped, which cancels a pending read).
async fn within<F: Future>(work: F, ns: u64) -> Option<F::Output> {
    let mut work = pin!(work);
    let mut timer = pin!(wasip3::clocks::monotonic_clock::wait_for(ns));
    std::future::poll_fn(|cx| {
        if let Poll::Ready(done) = work.as_mut().poll(cx) {
            return Poll::Ready(Some(done));
        }
        if timer.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        Poll::Pending
    })
    .await
}

struct Probe;

wasip3::cli::command::export!(Probe);

impl Guest for Probe {
    async fn run() -> Result<(), ()> {
        let mode = args().first().cloned().unwrap_or_default();
        let keep = mode != "drop";
        let mut release = mode == "release";
        let listener = TcpSocket::create(IpAddressFamily::Ipv4).map_err(|_| ())?;
        let loopback = IpSocketAddress::Ipv4(Ipv4SocketAddress {
            port: 0,
            address: (127, 0, 0, 1),
        });
        if let Err(e) = listener.bind(loopback) {
            out(format!("bind Err({e:?})\n").as_bytes()).await;
            return Err(());
        }
        let mut accept = match listener.listen() {
            Ok(accept) => accept,
            Err(e) => {
                out(format!("listen Err({e:?})\n").as_bytes()).await;
                return Err(());
            }
        };
        let port = match listener.get_local_address() {
            Ok(IpSocketAddress::Ipv4(at)) => at.port,
            _ => 0,
        };
        out(format!("listening {port}\n").as_bytes()).await;
        let mut held = Vec::new();
        let mut accepted = 0;
        loop {
            let wait = if accepted == 0 { FIRST_NS } else { QUIET_NS };
            match within(accept.next(), wait).await {
                Some(Some(peer)) => {
                    accepted += 1;
                    if keep {
                        held.push(peer);
                    }
                }
                None if std::mem::take(&mut release) => {
                    let released = held.len();
                    held.clear();
                    out(format!("released {released}\n").as_bytes()).await;
                }
                Some(None) | None => break,
            }
        }
        out(format!("accepted {accepted}\n").as_bytes()).await;
        drop(listener);
        Ok(())
    }
}

fn main() {
    unreachable!("a WASI 0.3 command runs through wasi:cli/run@0.3.0");
}
