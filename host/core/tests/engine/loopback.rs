//! Loopback peers and clients the serving and network tests share (the
//! CLI's tests take them too): one HTTP/1.1 request, a WASI 0.3 handler
//! served, connections from a chosen source address, a wait for a close,
//! and a server that takes connections and never answers.

use crate::common::artifact;
use guest_artifacts::WASI03_HANDLER;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::AsyncReadExt;

/// One HTTP/1.1 request to `addr` on a connection of its own: the status
/// (0 when the answer has none) and the body.
pub async fn http_request(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    body: &str,
) -> std::io::Result<(u16, String)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(addr).await?;
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await?;
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await?;
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
    Ok((status, body))
}

/// One request to `addr`: its status and body (status 0 when the
/// connection failed).
pub async fn request(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    body: &str,
) -> (u16, String) {
    http_request(addr, method, path, body)
        .await
        .unwrap_or((0, String::new()))
}

/// Serves the 0.3 handler probe on loopback: its address.
pub async fn serve_handler(
    e: &workbooks::Engine,
    opts: workbooks::ServeOptions,
) -> std::net::SocketAddr {
    let server = workbooks::Server::new(e, &artifact(WASI03_HANDLER), opts).unwrap();
    assert_eq!(server.handler(), "wasi:http/handler@0.3.0");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(server.run(listener));
    addr
}

/// Reads until the server closes the connection; `None` if it is still
/// open after `bound` (a bound so a broken server fails the test instead
/// of hanging it, not a measure of speed).
pub async fn closed_within(s: &mut tokio::net::TcpStream, bound: Duration) -> Option<Vec<u8>> {
    let mut seen = Vec::new();
    let read = async {
        let mut buf = [0u8; 4096];
        loop {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => seen.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(bound, read).await.ok()?;
    Some(seen)
}

/// A connection from `source` (any 127.0.0.0/8 address is this machine's).
pub async fn connect_from(source: &str, addr: std::net::SocketAddr) -> tokio::net::TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
    socket.connect(addr).await.unwrap()
}

/// A loopback server that accepts every connection and never answers,
/// holding each until it is dropped.
pub struct Silent {
    /// Where it listens.
    pub addr: std::net::SocketAddr,
    accepted: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    accepting: Option<std::thread::JoinHandle<()>>,
}

impl Silent {
    /// Starts one on a port the system picks.
    pub fn start() -> Self {
        let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        server.set_nonblocking(true).unwrap();
        let addr = server.local_addr().unwrap();
        let accepted = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let accepting = {
            let (accepted, stop) = (accepted.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut held = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    match server.accept() {
                        Ok((stream, _)) => {
                            held.push(stream);
                            accepted.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(_) => std::thread::sleep(Duration::from_millis(5)),
                    }
                }
            })
        };
        Self {
            addr,
            accepted,
            stop,
            accepting: Some(accepting),
        }
    }

    /// The connections it took so far.
    pub fn accepted(&self) -> usize {
        self.accepted.load(Ordering::Relaxed)
    }
}

impl Drop for Silent {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(accepting) = self.accepting.take() {
            let _ = accepting.join();
        }
    }
}

/// A loopback HTTP server: `/slow` sends a 100-byte body a byte every
/// 100 ms, anything else `ok` (each on a connection it closes); and how
/// many connections it took.
pub async fn upstream() -> (
    std::net::SocketAddr,
    std::sync::Arc<std::sync::atomic::AtomicUsize>,
) {
    use tokio::io::AsyncWriteExt as _;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            tokio::spawn(async move {
                let mut head = [0u8; 2048];
                let n = s.read(&mut head).await.unwrap_or(0);
                if !String::from_utf8_lossy(&head[..n]).starts_with("GET /slow ") {
                    let ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";
                    let _ = s.write_all(ok.as_bytes()).await;
                    return;
                }
                let head = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n";
                let _ = s.write_all(head.as_bytes()).await;
                for _ in 0..100 {
                    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                    if s.write_all(b"s").await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    (addr, hits)
}

/// An engine homed in `home` whose guests may reach loopback, a second
/// handle on its grants (as `wbx grant` in another process opens it) and
/// the id of the grant it holds for `tenant` reaching only `allowed`.
pub fn granted_engine(
    home: &std::path::Path,
    tenant: &str,
    allowed: &str,
) -> (workbooks::Engine, workbooks::grants::GrantBook, String) {
    use workbooks::grants::{GRANTS_FILE, GrantBook, GrantRecord};
    let e = crate::common::own_builder(home)
        .net_allow(workbooks::Cidr::parse_list("127.0.0.0/8").unwrap())
        .build()
        .unwrap();
    let operator = GrantBook::new(Some(home.join(GRANTS_FILE)));
    let mut record = GrantRecord::new(tenant, "test");
    record.net = Some(vec![allowed.to_string()]);
    let id = operator.add(record).unwrap().id;
    (e, operator, id)
}
