//! The front door `serve-api` and `mcp --listen` serve through
//! (`workbooks::serve::Front`), with a connection upgraded to another
//! protocol (a WebSocket on `serve-api`): it holds its slot for as long as
//! it lives and is never taken for one waiting for headers.

use crate::common::own_engine;
use crate::serve::{closed_within, connect_from};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The request that upgrades a connection to the test's echo protocol.
const UPGRADE: &[u8] =
    b"GET /upgrade HTTP/1.1\r\nHost: t\r\nConnection: upgrade\r\nUpgrade: echo\r\n\r\n";

/// Answers `/upgrade` with `101 Switching Protocols` and then echoes what
/// comes over the upgraded connection; answers anything else `hello`.
async fn echo_or_hello(
    mut req: http::Request<hyper::body::Incoming>,
) -> Result<http::Response<http_body_util::Full<bytes::Bytes>>, std::convert::Infallible> {
    if req.uri().path() != "/upgrade" {
        let hello = bytes::Bytes::from_static(b"hello\n");
        return Ok(http::Response::new(http_body_util::Full::new(hello)));
    }
    let upgrade = hyper::upgrade::on(&mut req);
    tokio::spawn(async move {
        let Ok(upgraded) = upgrade.await else { return };
        let mut io = hyper_util::rt::TokioIo::new(upgraded);
        let mut buf = [0u8; 64];
        while let Ok(n @ 1..) = io.read(&mut buf).await {
            if io.write_all(&buf[..n]).await.is_err() {
                return;
            }
        }
    });
    let switching = http::Response::builder()
        .status(http::StatusCode::SWITCHING_PROTOCOLS)
        .header(http::header::CONNECTION, "upgrade")
        .header(http::header::UPGRADE, "echo")
        .body(http_body_util::Full::default())
        .unwrap();
    Ok(switching)
}

/// Sends `word` over the upgraded `conn` and reads its echo.
async fn echoed(conn: &mut tokio::net::TcpStream, word: &[u8]) -> Vec<u8> {
    conn.write_all(word).await.unwrap();
    let mut back = vec![0u8; word.len()];
    tokio::time::timeout(Duration::from_secs(5), conn.read_exact(&mut back))
        .await
        .expect("no echo within 5 s")
        .expect("the upgraded connection was closed");
    back
}

/// A connection from `source` that has sent one header line and no more.
async fn trickling(source: &str, addr: std::net::SocketAddr) -> tokio::net::TcpStream {
    let mut s = connect_from(source, addr).await;
    s.write_all(b"GET /hello HTTP/1.1\r\n").await.unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    s
}

/// At a cap of two connections, one upgraded and echoing, a whole request
/// sheds the connection still sending headers, never the upgraded one;
/// and the upgraded one keeps counting: two more connections trickling
/// headers do not both fit beside it, the older is shed at once. Were the
/// slot given back at the upgrade, both would fit (the first is within
/// its ten-second header timeout), and the upgraded connection could be
/// shed for a newcomer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upgraded_connection_holds_its_slot_and_is_never_shed_for_one_waiting() {
    use workbooks::serve::{Front, FrontLimits};
    let home = tempfile::tempdir().unwrap();
    let e = own_engine(home.path());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let limits = FrontLimits {
        max_connections: 2,
        max_connections_per_client: 2,
        header_timeout: Duration::from_secs(10),
        ..FrontLimits::default()
    };
    let service = hyper::service::service_fn(echo_or_hello);
    let front = Front::new(&e, "front-test", "default", limits);
    let front = tokio::spawn(front.run_until(listener, service, std::future::pending()));

    let mut upgraded = connect_from("127.0.0.2", addr).await;
    upgraded.write_all(UPGRADE).await.unwrap();
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") {
        let mut byte = [0u8; 1];
        upgraded.read_exact(&mut byte).await.unwrap();
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_string();
    assert!(head.starts_with("HTTP/1.1 101"), "{head}");
    assert_eq!(echoed(&mut upgraded, b"ping").await, b"ping");

    let mut first = trickling("127.0.0.3", addr).await;
    let mut whole = connect_from("127.0.0.4", addr).await;
    whole
        .write_all(b"GET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let answer = closed_within(&mut whole, Duration::from_secs(10)).await;
    let answer =
        String::from_utf8_lossy(&answer.expect("the whole request was never answered")).to_string();
    assert!(answer.contains("200 OK"), "{answer:?}");
    assert!(
        closed_within(&mut first, Duration::from_secs(1))
            .await
            .is_some(),
        "the connection waiting for headers was not the one shed"
    );
    assert_eq!(echoed(&mut upgraded, b"pong").await, b"pong");

    let mut older = trickling("127.0.0.5", addr).await;
    let _newer = trickling("127.0.0.6", addr).await;
    assert!(
        closed_within(&mut older, Duration::from_secs(1))
            .await
            .is_some(),
        "two connections waiting fit beside the upgraded one: its slot was given back"
    );
    assert_eq!(echoed(&mut upgraded, b"still").await, b"still");
    assert!(e.cadence().audit().summary().counts["shed_waiting_for_headers"] >= 2);
    front.abort();
}
