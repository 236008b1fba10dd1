//! A 1 MiB GET from a loopback server: directly with the HTTP client crate
//! (hyper), through the host broker (floor, resolve-then-pin, capped
//! transport), and from a guest through `net.fetch` (the whole broker hop:
//! cadence, floor, transport, and the body copied into the guest), unscoped
//! and under a scope of 16 destinations that allows it by the last. Same
//! run, medians and overheads.
//!
//! `cargo bench -p workbooks-cli --bench net`

#![expect(
    clippy::disallowed_macros,
    reason = "a bench prints its figures on stdout"
)]

mod support;
use support::median;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use workbooks::egress::{HttpLimits, HttpRequest};
use workbooks::{Artifact, Cidr, Engine, Grant, SessionOptions};

const BODY: usize = 1 << 20;

async fn server() -> std::net::SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let body = vec![b'x'; BODY];
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let body = body.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut b = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if s.read(&mut b).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(b[0]);
                }
                let h = format!(
                    "HTTP/1.1 200 OK\r\nContent-Length: {BODY}\r\nConnection: close\r\n\r\n"
                );
                let _ = s.write_all(h.as_bytes()).await;
                let _ = s.write_all(&body).await;
                let _ = s.shutdown().await;
            });
        }
    });
    addr
}

async fn direct(addr: std::net::SocketAddr) -> usize {
    let tcp = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(wasmtime_wasi_http::io::TokioIo::new(tcp))
            .await
            .expect("handshake");
    tokio::spawn(conn);
    let req = http::Request::get("/")
        .header("host", addr.to_string())
        .body(Empty::<Bytes>::new())
        .expect("request");
    let resp = sender.send_request(req).await.expect("send");
    resp.into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes()
        .len()
}

fn main() {
    let n = if support::start() { 300 } else { 3 };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("rt");
    let home = tempfile::tempdir().expect("home");
    let engine = Engine::builder()
        .home(home.path())
        .net_allow(Cidr::parse_list("127.0.0.0/8").expect("cidr"))
        .build()
        .expect("engine");
    let addr = rt.block_on(server());
    let url = format!("http://{addr}/");
    let access = engine.net_access("bench");
    let limits = HttpLimits {
        max_body: 8 << 20,
        deadline: Duration::from_secs(15),
        max_redirects: 3,
        shared: None,
    };
    let docked = engine
        .dock(
            &Artifact::from_file(guest_artifacts::NET_FETCH).expect("probe"),
            &Grant::profile("network"),
        )
        .expect("dock");

    let mut patterns: Vec<String> = (0..15)
        .map(|i| format!("https://api{i}.example.com"))
        .collect();
    patterns.push(format!("http://{addr}"));
    let scope = workbooks::grants::Scope::fixed(workbooks::grants::Scoped::destinations(
        workbooks::egress::Destinations::parse(&patterns).expect("scope"),
    ));

    let mut d = Vec::new();
    let mut h = Vec::new();
    let mut g = Vec::new();
    let mut s = Vec::new();
    for i in 0..n + n / 10 {
        let t = Instant::now();
        assert_eq!(rt.block_on(direct(addr)), BODY);
        let direct_time = t.elapsed();

        let t = Instant::now();
        let r = rt
            .block_on(access.guarded(
                "net",
                "127.0.0.1",
                access.client.fetch(HttpRequest::get(url.clone()), &limits),
            ))
            .expect("guarded fetch");
        assert_eq!(r.body.len(), BODY);
        let host_time = t.elapsed();

        // Unscoped and scoped take turns going first.
        let guest = |scope: Option<workbooks::grants::Scope>| {
            let t = Instant::now();
            let mut opts = SessionOptions::new("bench", "bench");
            opts.args = vec!["len".into(), url.clone()];
            opts.scope = scope;
            let out = rt.block_on(engine.run(&docked, opts)).expect("guest fetch");
            assert!(String::from_utf8_lossy(&out.stdout).ends_with(": 200 1048576\n"));
            t.elapsed()
        };
        let (guest_time, scoped_time) = if i % 2 == 0 {
            let g = guest(None);
            (g, guest(Some(scope.clone())))
        } else {
            let s = guest(Some(scope.clone()));
            (guest(None), s)
        };

        if i >= n / 10 {
            d.push(direct_time);
            h.push(host_time);
            g.push(guest_time);
            s.push(scoped_time);
        }
    }
    let (d, h, g, s) = (median(d), median(h), median(g), median(s));
    let us = |x: Duration| x.as_secs_f64() * 1e6;
    let pct = |x: Duration| (x.as_secs_f64() / d.as_secs_f64() - 1.0) * 100.0;
    println!("1 MiB GET from loopback, {n} runs each, interleaved");
    println!(
        "  direct (hyper)                    median {:>9.1} µs",
        us(d)
    );
    println!(
        "  host broker (floor + pinned)      median {:>9.1} µs  ({:+.1}% vs direct)",
        us(h),
        pct(h)
    );
    println!(
        "  guest net.fetch (whole hop)       median {:>9.1} µs  ({:+.1}% vs direct)",
        us(g),
        pct(g)
    );
    println!(
        "  guest net.fetch, scoped (16)      median {:>9.1} µs  ({:+.1}% vs direct, {:.3}x unscoped)",
        us(s),
        pct(s),
        s.as_secs_f64() / g.as_secs_f64()
    );
}
