//! `wbx serve` and `Engine::server`: a fresh instance per request, capped
//! responses, per-client rate limits, revocation in flight.

use crate::common::own_engine;
use guest_artifacts::*;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use workbooks::{Artifact, Engine, ServeOptions};

guest_artifacts::foreach_serve!(assert_test_exists);

async fn get(addr: std::net::SocketAddr, path: &str) -> (u16, String) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await.unwrap();
    let text = String::from_utf8_lossy(&buf).into_owned();
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}

async fn start(e: &Engine, opts: ServeOptions) -> std::net::SocketAddr {
    let server = e
        .server(&Artifact::from_file(SERVE_HANDLER).unwrap(), opts)
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.run(listener));
    addr
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_handler() {
    let home = tempfile::tempdir().unwrap();
    let e = own_engine(home.path());
    let addr = start(&e, ServeOptions::default()).await;
    assert_eq!(get(addr, "/hello").await, (200, "hello from wasm\n".into()));
    // Each request meets a fresh instance.
    assert_eq!(get(addr, "/count").await.1, "1\n");
    assert_eq!(get(addr, "/count").await.1, "1\n");
    assert_eq!(get(addr, "/big/1000").await.1.len(), 1000);
    let (status, body) = get(addr, &format!("/big/{}", (8 << 20) + 1)).await;
    assert_eq!(
        (status, body.as_str()),
        (502, "response larger than the engine's cap\n")
    );
    assert_eq!(get(addr, "/nope").await.0, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_are_rate_limited_and_slow_handlers_time_out() {
    let home = tempfile::tempdir().unwrap();
    let e = own_engine(home.path());
    let opts = ServeOptions {
        per_client_per_minute: 3,
        timeout: Some(Duration::from_millis(500)),
        ..ServeOptions::default()
    };
    let addr = start(&e, opts).await;
    assert_eq!(get(addr, "/hello").await.0, 200);
    assert_eq!(get(addr, "/slow/5000").await.0, 504);
    assert_eq!(get(addr, "/hello").await.0, 200);
    assert_eq!(get(addr, "/hello").await.0, 429);
    assert_eq!(
        e.cadence().audit().summary().counts.get("rate_limited"),
        Some(&1)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revocation_stops_requests_in_flight() {
    let home = tempfile::tempdir().unwrap();
    let e = own_engine(home.path());
    let opts = ServeOptions {
        tenant: "acme".into(),
        timeout: Some(Duration::from_secs(30)),
        ..ServeOptions::default()
    };
    let addr = start(&e, opts).await;
    let slow = tokio::spawn(async move { get(addr, "/slow/5000").await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let revoked_at = Instant::now();
    e.cadence().revocations().revoke("acme").unwrap();
    let (status, _) = slow.await.unwrap();
    assert_eq!(status, 403);
    assert!(
        revoked_at.elapsed() < Duration::from_secs(3),
        "the request ran on"
    );
    assert_eq!(get(addr, "/hello").await.0, 403);
    e.cadence().revocations().unrevoke("acme").unwrap();
    assert_eq!(get(addr, "/hello").await.0, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revocation_cuts_a_body_that_never_pauses() {
    let home = tempfile::tempdir().unwrap();
    let e = own_engine(home.path());
    let opts = ServeOptions {
        tenant: "drip-co".into(),
        timeout: Some(Duration::from_secs(30)),
        ..ServeOptions::default()
    };
    let addr = start(&e, opts).await;
    // A byte every 5 ms: the revocation check must not wait for a lull.
    let dripping = tokio::spawn(async move { get(addr, "/drip/5000").await });
    tokio::time::sleep(Duration::from_millis(500)).await;
    let revoked_at = Instant::now();
    e.cadence().revocations().revoke("drip-co").unwrap();
    assert_eq!(dripping.await.unwrap().0, 403);
    assert!(
        revoked_at.elapsed() < Duration::from_secs(3),
        "the body streamed on"
    );
}

#[test]
fn wbx_serve_answers_on_its_port() {
    let home = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_wbx"))
        .args([
            "serve",
            "--listen",
            &format!("127.0.0.1:{port}"),
            SERVE_HANDLER,
        ])
        .env("WB_HOME", home.path())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let addr: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let mut answer = None;
    for _ in 0..100 {
        if std::net::TcpStream::connect(addr).is_ok() {
            answer = Some(rt.block_on(get(addr, "/hello")));
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap();
    let _ = child.wait();
    assert_eq!(answer, Some((200, "hello from wasm\n".to_string())));
}
