//! WASI 0.3 datagram calls held: `wasi03_udp_held N [twice]` binds one UDP
//! socket and makes N `receive` calls on it at once, each in flight before any
//! is answered (no datagram ever comes); prints one line, `pending P`
//! (the calls the host is holding) and the first error if some were
//! refused, and holds every call until stdin ends, while the host is
//! measured. With `twice` it drops the first wave and makes a second.

use std::future::Future;
use std::pin::Pin;
use std::task::Poll;
use test_programs_03::{args, out, read_stdin};
use wasip3::exports::cli::run::Guest;
use wasip3::sockets::types::{
    ErrorCode, IpAddressFamily, IpSocketAddress, Ipv4SocketAddress, UdpSocket,
};

/// One `receive` in flight.
type Call<'a> = Pin<Box<dyn Future<Output = Result<(Vec<u8>, IpSocketAddress), ErrorCode>> + 'a>>;

/// `want` receives on `socket`, each polled once: it starts, and the
/// host either answers at once (a refusal) or holds it. Returns the calls
/// held and the report line.
async fn wave(socket: &UdpSocket, want: usize) -> (Vec<Option<Call<'_>>>, String) {
    let mut calls: Vec<Option<Call<'_>>> = (0..want)
        .map(|_| Some(Box::pin(socket.receive()) as Call<'_>))
        .collect();
    let mut refused = None;
    std::future::poll_fn(|cx| {
        for call in calls.iter_mut() {
            if let Some(pending) = call
                && let Poll::Ready(answer) = pending.as_mut().poll(cx)
            {
                if let Err(e) = answer {
                    refused = refused.take().or(Some(e));
                }
                *call = None;
            }
        }
        Poll::Ready(())
    })
    .await;
    let pending = calls.iter().filter(|c| c.is_some()).count();
    let mut report = format!("pending {pending}");
    if let Some(e) = refused {
        report.push_str(&format!("; error {e:?}"));
    }
    report.push('\n');
    (calls, report)
}

struct Probe;

wasip3::cli::command::export!(Probe);

impl Guest for Probe {
    async fn run() -> Result<(), ()> {
        let want: usize = args().first().and_then(|a| a.parse().ok()).unwrap_or(100);
        let socket = UdpSocket::create(IpAddressFamily::Ipv4).map_err(|_| ())?;
        let any = Ipv4SocketAddress {
            port: 0,
            address: (0, 0, 0, 0),
        };
        if let Err(e) = socket.bind(IpSocketAddress::Ipv4(any)) {
            out(format!("bind {e:?}\n").as_bytes()).await;
            return Err(());
        }
        // The first wave is dropped (each call cancelled) before the
        // second starts: what the host gave the first is given back.
        let waves = if args().get(1).map(String::as_str) == Some("twice") {
            2
        } else {
            1
        };
        let mut calls = Vec::new();
        for _ in 0..waves {
            drop(calls);
            let (held, report) = wave(&socket, want).await;
            calls = held;
            out(report.as_bytes()).await;
        }
        read_stdin().await;
        drop(calls);
        Ok(())
    }
}

fn main() {
    unreachable!("a WASI 0.3 command runs through wasi:cli/run@0.3.0");
}
