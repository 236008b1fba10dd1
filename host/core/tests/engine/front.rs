//! The front door `serve-api` and `mcp --listen` serve through
//! (`workbooks::serve::Front`): at its cap it sheds a connection still
//! sending headers, never a response still streaming nor a connection
//! upgraded to another protocol (a WebSocket on `serve-api`), which holds
//! its slot for as long as it lives; told to stop, it drains.

use crate::common::own_engine;
use crate::loopback::{closed_within, connect_from};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use workbooks::Engine;
use workbooks::serve::{Front, FrontLimits};

/// Opens a front door of `e` at `limits` on a loopback port, serving
/// `service` until `stop` completes: its address and its task.
async fn open_front<S, B>(
    e: &Engine,
    limits: FrontLimits,
    service: S,
    stop: impl Future<Output = ()> + Send + 'static,
) -> (SocketAddr, tokio::task::JoinHandle<std::io::Result<()>>)
where
    S: hyper::service::Service<http::Request<hyper::body::Incoming>, Response = http::Response<B>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: hyper::body::Body + Unpin + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let front = Front::new(e, "front-test", "default", limits);
    (addr, tokio::spawn(front.run_until(listener, service, stop)))
}

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

/// Asserts `conn` was shed: closed within a second (well inside its
/// header timeout), else fails saying `why`.
async fn assert_shed(conn: &mut tokio::net::TcpStream, why: &str) {
    let closed = closed_within(conn, Duration::from_secs(1)).await;
    assert!(closed.is_some(), "{why}");
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
    let home = tempfile::tempdir().unwrap();
    let e = own_engine(home.path());
    let limits = FrontLimits {
        max_connections: 2,
        max_connections_per_client: 2,
        header_timeout: Duration::from_secs(10),
        ..FrontLimits::default()
    };
    let service = hyper::service::service_fn(echo_or_hello);
    let (addr, front) = open_front(&e, limits, service, std::future::pending()).await;

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
    let why = "the connection waiting for headers was not the one shed";
    assert_shed(&mut first, why).await;
    assert_eq!(echoed(&mut upgraded, b"pong").await, b"pong");

    let mut older = trickling("127.0.0.5", addr).await;
    let _newer = trickling("127.0.0.6", addr).await;
    let why = "two connections waiting fit beside the upgraded one: its slot was given back";
    assert_shed(&mut older, why).await;
    assert_eq!(echoed(&mut upgraded, b"still").await, b"still");
    assert!(e.cadence().audit().summary().counts["shed_waiting_for_headers"] >= 2);
    front.abort();
}

/// The front door the other HTTP surfaces serve through (`serve-api`,
/// `mcp --listen`): at its cap a whole request is answered by shedding a
/// connection still trickling its headers, and a response still streaming
/// (a stream of events) is never taken for one waiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_front_door_sheds_a_trickler_for_a_whole_request_and_never_a_response_still_streaming()
{
    use http_body_util::BodyExt as _;
    use std::convert::Infallible;
    let home = tempfile::tempdir().unwrap();
    let e = own_engine(home.path());
    let service =
        hyper::service::service_fn(|req: http::Request<hyper::body::Incoming>| async move {
            let body = if req.uri().path() == "/slow" {
                // Ten frames, 100 ms apart.
                let ticks = futures::stream::unfold(0u8, |n| async move {
                    if n == 10 {
                        return None;
                    }
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    let tick = hyper::body::Frame::data(bytes::Bytes::from_static(b"tick\n"));
                    Some((Ok::<_, Infallible>(tick), n + 1))
                });
                http_body_util::StreamBody::new(ticks).boxed_unsync()
            } else {
                http_body_util::Full::new(bytes::Bytes::from_static(b"hello\n")).boxed_unsync()
            };
            Ok::<_, Infallible>(http::Response::new(body))
        });
    let limits = FrontLimits {
        max_connections: 4,
        max_connections_per_client: 2,
        header_timeout: Duration::from_secs(10),
        ..FrontLimits::default()
    };
    let (addr, front) = open_front(&e, limits, service, std::future::pending()).await;
    let mut streaming = connect_from("127.0.0.2", addr).await;
    streaming
        .write_all(b"GET /slow HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    let mut trickling = Vec::new();
    for n in 3..6 {
        let mut s = connect_from(&format!("127.0.0.{n}"), addr).await;
        s.write_all(b"GET /hello HTTP/1.1\r\n").await.unwrap();
        trickling.push(s);
    }
    tokio::time::sleep(Duration::from_millis(150)).await;
    // Every slot is taken: the streaming response, three tricklers.
    let mut real = connect_from("127.0.0.7", addr).await;
    real.write_all(b"GET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let seen = closed_within(&mut real, Duration::from_secs(10)).await;
    let seen =
        String::from_utf8_lossy(&seen.expect("the whole request was never answered")).to_string();
    assert!(
        seen.contains("200 OK") && seen.contains("hello"),
        "{seen:?}"
    );
    let streamed = closed_within(&mut streaming, Duration::from_secs(10)).await;
    let streamed = String::from_utf8_lossy(&streamed.expect("the stream never ended")).to_string();
    assert_eq!(
        streamed.matches("tick").count(),
        10,
        "the streaming response was cut: {streamed:?}"
    );
    assert!(e.cadence().audit().summary().counts["shed_waiting_for_headers"] >= 1);
    front.abort();
    drop(trickling);
}

/// Told to stop (`serve-api` on Ctrl-C), the front door accepts nothing
/// more, answers the request in flight, and returns; a response that never
/// ends is closed at the drain grace, so stopping always ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_front_door_told_to_stop_answers_the_request_in_flight_then_returns() {
    use http_body_util::BodyExt as _;
    use std::convert::Infallible;
    let home = tempfile::tempdir().unwrap();
    let e = own_engine(home.path());
    let service =
        hyper::service::service_fn(|req: http::Request<hyper::body::Incoming>| async move {
            let body = if req.uri().path() == "/forever" {
                let ticks = futures::stream::unfold((), |()| async {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    let tick = hyper::body::Frame::data(bytes::Bytes::from_static(b"tick\n"));
                    Some((Ok::<_, Infallible>(tick), ()))
                });
                http_body_util::StreamBody::new(ticks).boxed_unsync()
            } else {
                tokio::time::sleep(Duration::from_millis(800)).await;
                http_body_util::Full::new(bytes::Bytes::from_static(b"done\n")).boxed_unsync()
            };
            Ok::<_, Infallible>(http::Response::new(body))
        });
    let limits = FrontLimits {
        drain_grace: Duration::from_secs(2),
        ..FrontLimits::default()
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let told = async {
        let _ = stopped.await;
    };
    let (addr, front) = open_front(&e, limits, service, told).await;
    let mut slow = tokio::net::TcpStream::connect(addr).await.unwrap();
    slow.write_all(b"GET /slow HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let mut forever = tokio::net::TcpStream::connect(addr).await.unwrap();
    forever
        .write_all(b"GET /forever HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    stop.send(()).unwrap();
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "a connection was accepted after the stop"
    );
    let answered = closed_within(&mut slow, Duration::from_secs(10)).await;
    let answered =
        String::from_utf8_lossy(&answered.expect("the request in flight was cut")).to_string();
    assert!(
        answered.contains("200 OK") && answered.ends_with("done\n"),
        "{answered:?}"
    );
    let returned = tokio::time::timeout(Duration::from_secs(10), front).await;
    assert!(
        matches!(returned, Ok(Ok(Ok(())))),
        "the front door never returned: {returned:?}"
    );
    let streamed = closed_within(&mut forever, Duration::from_secs(5)).await;
    assert!(
        streamed.is_some_and(|s| s.windows(4).any(|w| w == b"tick")),
        "the endless response was not closed at the grace"
    );
}
