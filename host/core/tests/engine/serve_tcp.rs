//! `TcpServer`: the host listens, a fresh
//! instance handles each connection's request bytes; clients are rate
//! limited, requests and replies capped, and a revocation stops requests
//! in flight.

use crate::common::{own_engine, text};
use guest_artifacts::*;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use workbooks::limits::SERVE_TCP_MAX_REQUEST_BYTES;
use workbooks::{Artifact, Engine, ServeError, ServeOptions};

async fn start(e: &Engine, opts: ServeOptions) -> std::net::SocketAddr {
    let server =
        workbooks::TcpServer::new(e, &Artifact::from_file(SERVE_TCP).unwrap(), opts).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.run(listener));
    addr
}

/// Sends `request`, closes the sending half, and reads the reply until the
/// server closes (an error on the way counts as the end).
async fn exchange(addr: std::net::SocketAddr, request: &[u8]) -> Vec<u8> {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let _ = s.write_all(request).await;
    let _ = s.shutdown().await;
    let mut reply = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(20), s.read_to_end(&mut reply)).await;
    reply
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(crate) async fn serve_tcp() {
    let home = tempfile::tempdir().unwrap();
    let e = own_engine(home.path());
    let addr = start(&e, ServeOptions::default()).await;
    assert_eq!(text(&exchange(addr, b"hello").await), "got 5: HELLO");
    assert_eq!(text(&exchange(addr, b"").await), "got 0: ");
    // A reply past the engine's cap is never sent.
    assert_eq!(exchange(addr, b"big").await, b"");
    // A request of exactly the cap reaches the guest; one byte more does not.
    let at_cap = vec![b'a'; SERVE_TCP_MAX_REQUEST_BYTES];
    let reply = exchange(addr, &at_cap).await;
    assert!(text(&reply).starts_with(&format!("got {SERVE_TCP_MAX_REQUEST_BYTES}: AAA")));
    let over = vec![b'a'; SERVE_TCP_MAX_REQUEST_BYTES + 1];
    assert_eq!(exchange(addr, &over).await, b"");
    let summary = e.cadence().audit().summary();
    for reason in ["response_too_large", "request_too_large"] {
        assert!(
            summary.counts.contains_key(reason),
            "{reason} not audited: {:?}",
            summary.counts
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_connections_are_capped_per_client_and_a_slot_given_back_is_taken_again() {
    let home = tempfile::tempdir().unwrap();
    let e = own_engine(home.path());
    let opts = ServeOptions {
        max_connections_per_client: 2,
        ..ServeOptions::default()
    };
    let addr = start(&e, opts).await;
    // Two connections that send nothing yet hold both of this client's slots.
    let mut held = Vec::new();
    for _ in 0..2 {
        held.push(tokio::net::TcpStream::connect(addr).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        exchange(addr, b"third").await,
        b"",
        "a third connection was served"
    );
    assert!(e.cadence().audit().summary().counts["too_many_connections"] >= 1);
    // A held connection is still served, and its slot comes back after.
    let mut first = held.remove(0);
    first.write_all(b"held").await.unwrap();
    first.shutdown().await.unwrap();
    let mut reply = Vec::new();
    first.read_to_end(&mut reply).await.unwrap();
    assert_eq!(text(&reply), "got 4: HELD");
    drop(first);
    let mut served = false;
    for _ in 0..50 {
        if text(&exchange(addr, b"again").await) == "got 5: AGAIN" {
            served = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(served, "the slot given back was never taken again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tcp_client_over_its_rate_is_closed_before_the_guest_runs() {
    let home = tempfile::tempdir().unwrap();
    let e = own_engine(home.path());
    let opts = ServeOptions {
        per_client_per_minute: 2,
        ..ServeOptions::default()
    };
    let addr = start(&e, opts).await;
    assert_eq!(text(&exchange(addr, b"a").await), "got 1: A");
    assert_eq!(text(&exchange(addr, b"b").await), "got 1: B");
    assert_eq!(exchange(addr, b"c").await, b"");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revocation_stops_a_tcp_request_in_flight_and_refuses_the_next() {
    let home = tempfile::tempdir().unwrap();
    let e = own_engine(home.path());
    let opts = ServeOptions {
        tenant: "tcp-co".into(),
        timeout: Some(Duration::from_secs(60)),
        fuel: Some(u64::MAX),
        ..ServeOptions::default()
    };
    let addr = start(&e, opts).await;
    let spinning = tokio::spawn(async move { exchange(addr, b"spin").await });
    tokio::time::sleep(Duration::from_millis(300)).await;
    let revoked_at = Instant::now();
    e.cadence().revocations().revoke("tcp-co").unwrap();
    assert_eq!(spinning.await.unwrap(), b"");
    assert!(
        revoked_at.elapsed() < Duration::from_secs(3),
        "the spinning request outlived its revocation by {:?}",
        revoked_at.elapsed()
    );
    assert_eq!(exchange(addr, b"after").await, b"");
    e.cadence().revocations().unrevoke("tcp-co").unwrap();
    assert_eq!(text(&exchange(addr, b"back").await), "got 4: BACK");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tcp_client_that_never_finishes_its_request_is_cut_off() {
    let home = tempfile::tempdir().unwrap();
    let e = own_engine(home.path());
    let opts = ServeOptions {
        header_timeout: Duration::from_millis(300),
        ..ServeOptions::default()
    };
    let addr = start(&e, opts).await;
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(b"never ends").await.unwrap();
    let started = Instant::now();
    let mut reply = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut reply)).await;
    assert!(read.is_ok(), "still open after 5 s");
    assert!(reply.is_empty());
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[test]
fn a_component_without_the_tcp_handler_export_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let e = own_engine(home.path());
    let err = workbooks::TcpServer::new(
        &e,
        &Artifact::from_file(CLI_HELLO).unwrap(),
        ServeOptions::default(),
    )
    .unwrap_err();
    assert!(matches!(err, ServeError::NotATcpHandler), "{err}");
}
