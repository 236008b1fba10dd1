//! The gate: every connection the registry client opens passes the
//! engine's egress floor here.
//!
//! Threat: a registry reference (or a registry's redirect to its blob
//! storage, or a token realm in its auth challenge) steers the host at an
//! address only the host can reach: loopback services, the metadata
//! endpoint, private networks. The protocol client (`oci-client` over
//! `reqwest`) resolves and connects by itself and offers no hook to judge
//! an address, so it is given this gate as its only proxy, for http and
//! https alike.
//!
//! Defence: the gate is an HTTP proxy on an ephemeral loopback port, alive
//! for one operation. For `CONNECT host:port` (every https connection,
//! redirects and token realms included) it resolves the host once through
//! the floor ([`workbooks::NetGuard::pin`]: every address must pass, the
//! operator's own exceptions, `WB_OPERATOR_ALLOW`, are the only way
//! through; the guests' `WB_NET_ALLOW` is not consulted) and connects to the
//! pinned address; TLS stays end to end between the client and the
//! registry. A plain-HTTP request (absolute form) is forwarded only to a
//! loopback address the floor allows: plain HTTP is for a registry on this
//! machine. Every byte read from upstream counts against the operation's
//! budget; past it the connection is cut, whatever the client meant to
//! read. The gate adds no reach: any local process can open the same
//! connections itself, so it needs no credential of its own.

use crate::limits::{GATE_MAX_HEAD_BYTES, OCI_CONNECT_TIMEOUT};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use workbooks::NetGuard;

/// A running gate; dropping it closes it.
pub(crate) struct Gate {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

struct Shared {
    guard: NetGuard,
    budget: AtomicU64,
    read: AtomicU64,
    /// Every byte read from upstream, added here too: a caller's progress.
    progress: Option<Arc<AtomicU64>>,
    exhausted: AtomicBool,
    refused: Mutex<Option<Refusal>>,
}

/// A connection the gate refused.
#[derive(Debug, Clone)]
pub(crate) struct Refusal {
    /// `host:port` as asked.
    pub target: String,
    /// Why.
    pub why: String,
    /// Whether an allow-list entry would open it (a blocked address).
    pub openable: bool,
    /// Whether the refused address is this machine's.
    pub loopback: bool,
}

impl Drop for Gate {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Gate {
    /// Opens a gate judging with `guard`, reading at most `budget` bytes
    /// from upstream in all.
    #[cfg(test)]
    pub(crate) async fn open(guard: NetGuard, budget: u64) -> std::io::Result<Gate> {
        Gate::open_counted(guard, budget, None).await
    }

    /// [`Gate::open`], adding every byte read from upstream to `progress`.
    pub(crate) async fn open_counted(
        guard: NetGuard,
        budget: u64,
        progress: Option<Arc<AtomicU64>>,
    ) -> std::io::Result<Gate> {
        let listener = TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            guard,
            budget: AtomicU64::new(budget),
            read: AtomicU64::new(0),
            progress,
            exhausted: AtomicBool::new(false),
            refused: Mutex::new(None),
        });
        let accept = shared.clone();
        // Connections are tasks of a set the accept loop owns: aborting
        // the loop (dropping the gate) drops the set, which aborts them.
        let task = tokio::spawn(async move {
            let mut conns = tokio::task::JoinSet::new();
            while let Ok((conn, _)) = listener.accept().await {
                while conns.try_join_next().is_some() {}
                conns.spawn(serve(conn, accept.clone()));
            }
        });
        Ok(Gate { addr, shared, task })
    }

    /// The proxy URL to give the client.
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// The last connection refused since the last call, if any: each
    /// refusal names one failure, not every later one.
    pub(crate) fn take_refusal(&self) -> Option<Refusal> {
        self.shared
            .refused
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
    }

    /// The byte budget of this gate.
    pub(crate) fn budget(&self) -> u64 {
        self.shared.budget.load(Ordering::Relaxed)
    }

    /// Raises the budget by `more` bytes: a layer the manifest declared
    /// and the caller accepted, read after the small things around it.
    pub(crate) fn allow(&self, more: u64) {
        self.shared.budget.fetch_add(more, Ordering::Relaxed);
    }

    /// Whether the byte budget was spent and a connection cut.
    pub(crate) fn exhausted(&self) -> bool {
        self.shared.exhausted.load(Ordering::Relaxed)
    }
}

impl Shared {
    fn refuse(&self, target: &str, why: String, openable: bool, loopback: bool) {
        *self.refused.lock().unwrap_or_else(|p| p.into_inner()) = Some(Refusal {
            target: target.to_string(),
            why,
            openable,
            loopback,
        });
    }
}

/// One client connection: its request head, then a tunnel.
async fn serve(mut conn: TcpStream, shared: Arc<Shared>) {
    let Ok((head, rest)) = read_head(&mut conn).await else {
        return;
    };
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    let Ok(httparse::Status::Complete(_)) = req.parse(&head) else {
        let _ = conn
            .write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")
            .await;
        return;
    };
    let (method, target) = (req.method.unwrap_or(""), req.path.unwrap_or(""));
    let (upstream, first) = if method == "CONNECT" {
        match open(&shared, target, false).await {
            Ok(up) => {
                if conn
                    .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                    .await
                    .is_err()
                {
                    return;
                }
                (up, rest)
            }
            Err(status) => return refuse(&mut conn, status).await,
        }
    } else {
        // Absolute form, `GET http://host:port/path HTTP/1.1`: forwarded in
        // origin form, to loopback only.
        let Some((authority, path)) = target.strip_prefix("http://").map(|t| {
            t.split_once('/')
                .map_or((t, "/".to_string()), |(a, p)| (a, format!("/{p}")))
        }) else {
            return refuse(&mut conn, "400 Bad Request").await;
        };
        // Plain HTTP's port is 80 when the URL names none.
        let authority = if authority.ends_with(']') || !authority.contains(':') {
            format!("{authority}:80")
        } else {
            authority.to_string()
        };
        match open(&shared, &authority, true).await {
            Ok(up) => {
                let line_end = head
                    .windows(2)
                    .position(|w| w == b"\r\n")
                    .unwrap_or(head.len());
                let mut first = format!("{method} {path} HTTP/1.1").into_bytes();
                first.extend_from_slice(&head[line_end..]);
                first.extend_from_slice(&rest);
                (up, first)
            }
            Err(status) => return refuse(&mut conn, status).await,
        }
    };
    tunnel(conn, upstream, first, shared).await;
}

async fn refuse(conn: &mut TcpStream, status: &str) {
    let _ = conn
        .write_all(
            format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                .as_bytes(),
        )
        .await;
}

/// Reads up to the end of the request head; the head and what followed it.
async fn read_head(conn: &mut TcpStream) -> std::io::Result<(Vec<u8>, Vec<u8>)> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        let n = conn.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            return Ok((buf, rest));
        }
        if buf.len() > GATE_MAX_HEAD_BYTES {
            return Err(std::io::ErrorKind::InvalidData.into());
        }
    }
}

/// Resolves `authority` through the floor and connects to the pinned
/// address; `plain` (plain HTTP) must land on loopback.
async fn open(shared: &Shared, authority: &str, plain: bool) -> Result<TcpStream, &'static str> {
    let Some((host, port)) = split_authority(authority) else {
        shared.refuse(authority, "not host:port".into(), false, false);
        return Err("400 Bad Request");
    };
    let addr = match shared.guard.pin(host, port).await {
        Ok(addr) => addr,
        Err(denial) => {
            let (openable, loopback) = match &denial {
                workbooks::egress::NetDenial::Blocked { addr, .. } => (true, addr.is_loopback()),
                _ => (false, false),
            };
            shared.refuse(authority, denial.to_string(), openable, loopback);
            return Err("403 Forbidden");
        }
    };
    if plain && !addr.ip().is_loopback() {
        shared.refuse(
            authority,
            "plain HTTP is spoken only to a loopback registry".into(),
            false,
            false,
        );
        return Err("403 Forbidden");
    }
    match tokio::time::timeout(OCI_CONNECT_TIMEOUT, TcpStream::connect(addr)).await {
        Ok(Ok(up)) => Ok(up),
        _ => Err("502 Bad Gateway"),
    }
}

/// `host:port` or `[v6]:port`.
fn split_authority(authority: &str) -> Option<(&str, u16)> {
    let (host, port) = authority.rsplit_once(':')?;
    let port = port.parse().ok()?;
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    (!host.is_empty()).then_some((host, port))
}

/// Copies both ways; bytes from upstream count against the budget.
async fn tunnel(conn: TcpStream, upstream: TcpStream, first: Vec<u8>, shared: Arc<Shared>) {
    let (mut client_r, mut client_w) = conn.into_split();
    let (mut up_r, mut up_w) = upstream.into_split();
    let outbound = async move {
        if up_w.write_all(&first).await.is_ok() {
            let _ = tokio::io::copy(&mut client_r, &mut up_w).await;
        }
        let _ = up_w.shutdown().await;
    };
    let inbound = async move {
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = match up_r.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let total = shared.read.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
            if let Some(progress) = &shared.progress {
                progress.fetch_add(n as u64, Ordering::Relaxed);
            }
            if total > shared.budget.load(Ordering::Relaxed) {
                shared.exhausted.store(true, Ordering::Relaxed);
                break;
            }
            if client_w.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
        let _ = client_w.shutdown().await;
    };
    // Either direction ending ends the tunnel: a cut budget must not wait
    // on the client.
    tokio::select! {
        _ = inbound => {}
        _ = async { outbound.await; std::future::pending::<()>().await } => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_authority_splits_into_host_and_port() {
        assert_eq!(split_authority("ghcr.io:443"), Some(("ghcr.io", 443)));
        assert_eq!(split_authority("[::1]:5000"), Some(("::1", 5000)));
        assert_eq!(split_authority("ghcr.io"), None);
        assert_eq!(split_authority(":443"), None);
    }

    #[tokio::test]
    async fn a_connect_to_loopback_is_refused_unless_the_operator_opened_it() {
        let target = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = target.local_addr().unwrap().port();
        let ask = |gate: &Gate| {
            let addr = gate.addr;
            async move {
                let mut c = TcpStream::connect(addr).await.unwrap();
                c.write_all(
                    format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes(),
                )
                .await
                .unwrap();
                let mut answer = [0u8; 64];
                let n = c.read(&mut answer).await.unwrap();
                String::from_utf8_lossy(&answer[..n]).to_string()
            }
        };
        let closed = Gate::open(NetGuard::default(), 1 << 20).await.unwrap();
        assert!(ask(&closed).await.starts_with("HTTP/1.1 403"));
        let refusal = closed.take_refusal().unwrap();
        assert!(
            refusal.openable && refusal.why.contains("127.0.0.1"),
            "{refusal:?}"
        );
        let open = Gate::open(
            NetGuard::new(
                vec![workbooks::Cidr::parse("127.0.0.1/32").unwrap()],
                Arc::new(workbooks::egress::SystemResolver),
            ),
            1 << 20,
        )
        .await
        .unwrap();
        assert!(ask(&open).await.starts_with("HTTP/1.1 200"));
    }

    #[tokio::test]
    async fn plain_http_is_not_forwarded_off_this_machine() {
        let gate = Gate::open(NetGuard::default(), 1 << 20).await.unwrap();
        let mut c = TcpStream::connect(gate.addr).await.unwrap();
        c.write_all(b"GET http://93.184.215.14:80/v2/ HTTP/1.1\r\nhost: x\r\n\r\n")
            .await
            .unwrap();
        let mut answer = [0u8; 64];
        let n = c.read(&mut answer).await.unwrap();
        assert!(String::from_utf8_lossy(&answer[..n]).starts_with("HTTP/1.1 403"));
        assert!(gate.take_refusal().unwrap().why.contains("loopback"));
    }

    #[tokio::test]
    async fn a_tunnel_is_cut_when_the_byte_budget_is_spent() {
        let target = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = target.local_addr().unwrap().port();
        tokio::spawn(async move {
            let (mut s, _) = target.accept().await.unwrap();
            let _ = s.write_all(&vec![7u8; 1 << 20]).await;
        });
        let guard = NetGuard::new(
            vec![workbooks::Cidr::parse("127.0.0.1/32").unwrap()],
            Arc::new(workbooks::egress::SystemResolver),
        );
        let gate = Gate::open(guard, 64 << 10).await.unwrap();
        let mut c = TcpStream::connect(gate.addr).await.unwrap();
        c.write_all(format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut got = Vec::new();
        let _ = c.read_to_end(&mut got).await;
        assert!(got.len() < 200 << 10, "read {} bytes", got.len());
        assert!(gate.exhausted());
    }
}
