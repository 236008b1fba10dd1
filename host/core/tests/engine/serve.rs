//! `Server`: a fresh instance per request, capped responses,
//! per-client rate limits, revocation in flight, the connection caps.
//! `wbx serve` itself is tested with the CLI.

use crate::common::own_engine;
use crate::loopback::{closed_within, connect_from};
use guest_artifacts::*;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use workbooks::{Artifact, Engine, ServeOptions};

guest_artifacts::foreach_serve!(assert_test_exists);
// The raw-TCP probe's test lives with the other TCP serving tests.
use crate::serve_tcp::serve_tcp;

async fn get(addr: std::net::SocketAddr, path: &str) -> (u16, String) {
    try_get(addr, path).await.unwrap()
}

/// A `GET` whose connection may be refused or reset (status 0 then).
async fn try_get(addr: std::net::SocketAddr, path: &str) -> std::io::Result<(u16, String)> {
    crate::loopback::http_request(addr, "GET", path, "").await
}

async fn start(e: &Engine, opts: ServeOptions) -> std::net::SocketAddr {
    let server =
        workbooks::Server::new(e, &Artifact::from_file(SERVE_HANDLER).unwrap(), opts).unwrap();
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

fn short_headers() -> ServeOptions {
    ServeOptions {
        header_timeout: Duration::from_millis(300),
        ..ServeOptions::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_trickling_header_lines_is_cut_off() {
    let home = tempfile::tempdir().unwrap();
    let e = own_engine(home.path());
    let addr = start(&e, short_headers()).await;
    let s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut reader, mut writer) = s.into_split();
    let trickle = tokio::spawn(async move {
        let _ = writer.write_all(b"GET /hello HTTP/1.1\r\n").await;
        // A header line every 100 ms, for a minute, and never the end.
        for _ in 0..600 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            if writer.write_all(b"X-Slow: 1\r\n").await.is_err() {
                return;
            }
        }
    });
    let mut buf = [0u8; 1024];
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match reader.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await;
    trickle.abort();
    assert!(closed.is_ok(), "the trickling client was never cut off");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_keep_alive_connection_is_closed() {
    let home = tempfile::tempdir().unwrap();
    let e = own_engine(home.path());
    let addr = start(&e, short_headers()).await;
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(b"GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        .await
        .unwrap();
    let seen = closed_within(&mut s, Duration::from_secs(10))
        .await
        .expect("the idle connection stayed open");
    assert!(
        String::from_utf8_lossy(&seen).ends_with("hello from wasm\n"),
        "the request was served before the close"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_are_capped_per_client_and_in_total() {
    let home = tempfile::tempdir().unwrap();
    let e = own_engine(home.path());
    let opts = ServeOptions {
        max_connections_per_client: 3,
        ..ServeOptions::default()
    };
    let addr = start(&e, opts).await;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(tokio::net::TcpStream::connect(addr).await.unwrap());
    }
    // Let the server take the three before the fourth arrives.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut fourth = tokio::net::TcpStream::connect(addr).await.unwrap();
    let _ = fourth
        .write_all(b"GET /hello HTTP/1.1\r\nHost: t\r\n\r\n")
        .await;
    let answer = closed_within(&mut fourth, Duration::from_secs(10))
        .await
        .expect("the connection over the cap stayed open");
    assert!(answer.is_empty(), "a fourth connection was served");
    assert!(e.cadence().audit().summary().counts["too_many_connections"] >= 1);
    // A held connection still works, and a slot given back is taken again.
    held[0]
        .write_all(b"GET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let seen = closed_within(&mut held[0], Duration::from_secs(10))
        .await
        .unwrap();
    assert!(String::from_utf8_lossy(&seen).contains("200 OK"));
    let mut served = false;
    for _ in 0..50 {
        if try_get(addr, "/hello")
            .await
            .is_ok_and(|(status, _)| status == 200)
        {
            served = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(served, "the freed slot was never given back");

    // At the total cap the connection waiting longest for its headers
    // makes room, and the newcomer is served.
    let opts = ServeOptions {
        max_connections: 2,
        ..ServeOptions::default()
    };
    let addr = start(&e, opts).await;
    let mut oldest = tokio::net::TcpStream::connect(addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let _newer = tokio::net::TcpStream::connect(addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(get(addr, "/hello").await.0, 200);
    assert_eq!(
        closed_within(&mut oldest, Duration::from_secs(5)).await,
        Some(Vec::new()),
        "the oldest waiting connection was not shed"
    );
}

/// The attack of issue 54: clients from several addresses, each within
/// its per-client share, fill every slot with connections that trickle a
/// header line at a time and never finish a request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_header_clients_from_many_addresses_are_shed_for_a_client_with_a_whole_request() {
    let home = tempfile::tempdir().unwrap();
    let e = own_engine(home.path());
    let opts = ServeOptions {
        max_connections: 8,
        max_connections_per_client: 2,
        ..ServeOptions::default()
    };
    let addr = start(&e, opts).await;
    let mut trickling = Vec::new();
    for n in 2..6 {
        for _ in 0..2 {
            let mut s = connect_from(&format!("127.0.0.{n}"), addr).await;
            s.write_all(b"GET /hello HTTP/1.1\r\n").await.unwrap();
            trickling.push(s);
        }
    }
    let trickle = tokio::spawn(async move {
        loop {
            for s in &mut trickling {
                let _ = s.write_all(b"X-Slow: 1\r\n").await;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    // Every slot is taken by a trickler; a client with a whole request
    // from another address is still answered.
    let mut real = connect_from("127.0.0.9", addr).await;
    real.write_all(b"GET /hello HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .await
        .unwrap();
    let seen = closed_within(&mut real, Duration::from_secs(10)).await;
    trickle.abort();
    let seen =
        String::from_utf8_lossy(&seen.expect("the real client was never answered")).to_string();
    assert!(seen.contains("200 OK"), "the real client got: {seen:?}");
    assert!(e.cadence().audit().summary().counts["shed_waiting_for_headers"] >= 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_runs_on_a_fuel_budget() {
    let home = tempfile::tempdir().unwrap();
    let e = own_engine(home.path());
    let opts = ServeOptions {
        fuel: Some(5_000_000),
        timeout: Some(Duration::from_secs(30)),
        ..ServeOptions::default()
    };
    let addr = start(&e, opts).await;
    assert_eq!(
        get(addr, "/spin").await,
        (500, "the handler ran out of fuel\n".to_string())
    );
    assert_eq!(get(addr, "/hello").await.0, 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_stops_reading_gives_its_connection_back() {
    let home = tempfile::tempdir().unwrap();
    let e = own_engine(home.path());
    let opts = ServeOptions {
        max_connections_per_client: 1,
        ..short_headers()
    };
    let addr = start(&e, opts).await;
    // A small receive window, a large response, and no reads: the
    // server's writes stall once the buffers are full.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(4096).unwrap();
    let mut stalled = socket.connect(addr).await.unwrap();
    stalled
        .write_all(format!("GET /big/{} HTTP/1.1\r\nHost: t\r\n\r\n", 8 << 20).as_bytes())
        .await
        .unwrap();
    // The only slot this client has comes back once the stalled write is
    // given up on.
    let mut served = false;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        if try_get(addr, "/hello")
            .await
            .is_ok_and(|(status, _)| status == 200)
        {
            served = true;
            break;
        }
    }
    drop(stalled);
    assert!(served, "a client that never reads kept its slot");
}

/// A handler served under a stored grant, attacked through its own
/// outgoing requests: it reaches the destination the grant names and not
/// another name for the same address; a download it is reading when the
/// operator narrows the grant (from another handle on the book) is cut at
/// its next chunk; once the grant has expired every request is refused,
/// naming it, and the handler never runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_fetch() {
    use workbooks::grants::{Expiry, GRANTS_FILE, GrantBook, Lists, now_ms};
    let home = tempfile::tempdir().unwrap();
    let (up, hits) = crate::loopback::upstream().await;
    let allowed = format!("http://{up}");
    let (e, operator, id) = crate::loopback::granted_engine(home.path(), "acme", &allowed);
    let handler = Artifact::from_file(SERVE_FETCH).unwrap();
    let subject = format!("sha256:{}", handler.sha256_hex());
    let opts = ServeOptions {
        profile: "network".into(),
        tenant: "acme".into(),
        scope: Some(e.granted_scope(&id, "acme", &subject).unwrap()),
        ..ServeOptions::default()
    };
    let server = workbooks::Server::new(&e, &handler, opts).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.run(listener));
    let inside = format!("/fetch/{up}/ok");
    assert_eq!(get(addr, &inside).await, (200, "200 2\n".into()));
    let (status, body) = get(addr, &format!("/fetch/localhost:{}/ok", up.port())).await;
    assert!(
        status == 502 && body.contains("HttpRequestDenied"),
        "{status} {body}"
    );
    // Narrowed while the handler reads a 10-second body.
    let narrowing = {
        let (hits, id) = (hits.clone(), id.clone());
        let file = home.path().join(GRANTS_FILE);
        tokio::spawn(async move {
            while hits.load(std::sync::atomic::Ordering::SeqCst) < 2 {
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            tokio::time::sleep(Duration::from_millis(350)).await;
            let drop = Lists {
                net: vec![allowed],
                ..Lists::default()
            };
            GrantBook::new(Some(file))
                .narrow(&id, &Lists::default(), &drop, Expiry::Keep, "test")
                .unwrap();
        })
    };
    let (status, body) = get(addr, &format!("/fetch/{up}/slow")).await;
    narrowing.await.unwrap();
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(" then HTTP request denied"), "{body}");
    let read: usize = body.split(' ').nth(1).unwrap().parse().unwrap();
    assert!(read < 100, "{body}");
    // Expired: refused before the handler runs.
    let at = now_ms() + 1;
    let nothing = Lists::default();
    operator
        .narrow(&id, &nothing, &nothing, Expiry::At(at), "test")
        .unwrap();
    tokio::time::sleep(Duration::from_millis(30)).await;
    let (status, body) = get(addr, "/hello").await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body.starts_with(&format!("grant {id} expired at")),
        "{body}"
    );
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 2);
}
