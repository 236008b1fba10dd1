//! Loopback servers for the broker tests: a small HTTP/1.1 server with
//! routes that misbehave on purpose, and TCP, UDP and TLS echo servers (the
//! silent one is the core tests' `loopback::Silent`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream, UdpSocket};

/// An HTTP server on 127.0.0.1 and what it has seen.
pub struct Http {
    pub addr: SocketAddr,
    pub hits: Arc<AtomicUsize>,
    pub max_in_flight: Arc<AtomicUsize>,
}

impl Http {
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

async fn reply(stream: &mut TcpStream, status: &str, extra: &str, body: &[u8]) {
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n{extra}\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(body).await;
    let _ = stream.shutdown().await;
}

/// Routes: `/bytes/N`, `/html`, `/redirect?to=URL`, `/slow` (a body that
/// trickles), `/headers` (the request headers back), `/concurrent` (holds
/// 200 ms and counts requests in flight), `/echo-auth` (the request's
/// `Authorization` back, in a header and in a body long enough to come in
/// chunks), `/bounce?to=URL` (a redirect to URL with the request's
/// `Authorization` appended), `/echo-uri…` (the request line's target
/// back, in a header and in a body long enough to come in chunks),
/// `/again?Q` (a redirect to `/echo-uri?Q` on the same origin),
/// `/reencode?Q` (each value of Q decoded and re-encoded other ways).
pub async fn http() -> Http {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let hits = Arc::new(AtomicUsize::new(0));
    let in_flight = Arc::new(AtomicUsize::new(0));
    let max_in_flight = Arc::new(AtomicUsize::new(0));
    let (h, f, m) = (hits.clone(), in_flight.clone(), max_in_flight.clone());
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let (h, f, m) = (h.clone(), f.clone(), m.clone());
            tokio::spawn(async move {
                let Some((path, headers)) = crate::model_server::read_head(&mut stream).await
                else {
                    return;
                };
                h.fetch_add(1, Ordering::SeqCst);
                if let Some(n) = path.strip_prefix("/bytes/") {
                    let n: usize = n.parse().unwrap_or(0);
                    reply(&mut stream, "200 OK", "", &vec![b'x'; n]).await;
                } else if path == "/html" {
                    let page = b"<html><head><title>Test Page</title></head><body><h1>Hello</h1><p>from the <b>loopback</b> server &amp; friends</p><script>evil()</script></body></html>";
                    reply(&mut stream, "200 OK", "Content-Type: text/html\r\n", page).await;
                } else if let Some(to) = path.strip_prefix("/redirect?to=") {
                    reply(
                        &mut stream,
                        "302 Found",
                        &format!("Location: {to}\r\n"),
                        b"",
                    )
                    .await;
                } else if path == "/slow" {
                    let _ = stream
                        .write_all(
                            b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n",
                        )
                        .await;
                    for _ in 0..100 {
                        tokio::time::sleep(Duration::from_millis(200)).await;
                        if stream.write_all(b"s").await.is_err() {
                            return;
                        }
                    }
                } else if path == "/headers" {
                    let body: String = headers.iter().map(|(k, v)| format!("{k}: {v}\n")).collect();
                    reply(&mut stream, "200 OK", "", body.as_bytes()).await;
                } else if path == "/echo-auth" {
                    let auth = header_of(&headers, "authorization");
                    let mut body = "x".repeat(5000);
                    body.push_str(&format!("auth={auth};"));
                    let extra = format!("X-Echo: {auth}\r\n");
                    reply(&mut stream, "200 OK", &extra, body.as_bytes()).await;
                } else if path.starts_with("/echo-uri") {
                    let mut body = "x".repeat(5000);
                    body.push_str(&format!("uri={path};"));
                    let extra = format!("X-Echo: {path}\r\n");
                    reply(&mut stream, "200 OK", &extra, body.as_bytes()).await;
                } else if let Some(to) = path.strip_prefix("/bounce?to=") {
                    let auth = header_of(&headers, "authorization").replace(' ', "+");
                    let extra = format!("Location: {to}{auth}\r\n");
                    reply(&mut stream, "302 Found", &extra, b"").await;
                } else if let Some(query) = path.strip_prefix("/again?") {
                    // On to the same origin with the request's own query.
                    let extra = format!("Location: /echo-uri?{query}\r\n");
                    reply(&mut stream, "302 Found", &extra, b"").await;
                } else if let Some(query) = path.strip_prefix("/reencode?") {
                    reply(&mut stream, "200 OK", "", reencoded(query).as_bytes()).await;
                } else if path == "/concurrent" {
                    let now = f.fetch_add(1, Ordering::SeqCst) + 1;
                    m.fetch_max(now, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    f.fetch_sub(1, Ordering::SeqCst);
                    reply(&mut stream, "200 OK", "", b"ok").await;
                } else {
                    reply(&mut stream, "404 Not Found", "", b"no").await;
                }
            });
        }
    });
    Http {
        addr,
        hits,
        max_in_flight,
    }
}

/// Each value of `query` handed back as a server might re-encode it:
/// decoded, percent-encoded with lower case hex, and as JSON with `/`
/// escaped.
fn reencoded(query: &str) -> String {
    url::form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| {
            let lower: String = v
                .bytes()
                .map(|b| match b.is_ascii_alphanumeric() {
                    true => (b as char).to_string(),
                    false => format!("%{b:02x}"),
                })
                .collect();
            let json = serde_json::to_string(&v).unwrap().replace('/', "\\/");
            format!("{k}: raw={v}; lower={lower}; json={json}\n")
        })
        .collect()
}

/// The value of header `name` (lower case) in `headers`, or "".
fn header_of(headers: &[(String, String)], name: &str) -> String {
    headers
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.clone())
        .unwrap_or_default()
}

/// A TCP server that answers `echo:` + everything it read until EOF.
pub async fn tcp_echo() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut data = Vec::new();
                let _ = s.read_to_end(&mut data).await;
                let big = data == b"big";
                let reply = if big {
                    vec![b'b'; (1 << 20) + 1]
                } else {
                    [b"echo:".as_slice(), &data].concat()
                };
                let _ = s.write_all(&reply).await;
                let _ = s.shutdown().await;
            });
        }
    });
    addr
}

/// A UDP server that answers each datagram with `echo:` + it.
pub async fn udp_echo() -> SocketAddr {
    let socket = UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = socket.local_addr().unwrap();
    tokio::spawn(async move {
        let mut buf = [0u8; 2048];
        while let Ok((n, from)) = socket.recv_from(&mut buf).await {
            let _ = socket.send_to(&[b"echo:", &buf[..n]].concat(), from).await;
        }
    });
    addr
}

/// A TLS echo server with a fresh certificate for `localhost`; returns its
/// address and the certificate (DER) to trust.
pub async fn tls_echo() -> (SocketAddr, Vec<u8>) {
    let (addr, cert) = tls_echo_certified().await;
    (addr, cert.cert.der().to_vec())
}

/// [`tls_echo`], its certificate as PEM (for a roots file).
pub async fn tls_echo_pem() -> (SocketAddr, String) {
    let (addr, cert) = tls_echo_certified().await;
    (addr, cert.cert.pem())
}

/// [`tls_echo`], with its certificate and key.
async fn tls_echo_certified() -> (SocketAddr, rcgen::CertifiedKey) {
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let der = cert.cert.der().to_vec();
    let key = rustls::pki_types::PrivateKeyDer::try_from(cert.key_pair.serialize_der()).unwrap();
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_no_client_auth()
    .with_single_cert(vec![der.into()], key)
    .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((s, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(s).await else {
                    return;
                };
                let mut data = Vec::new();
                let mut buf = [0u8; 4096];
                loop {
                    match tls.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => data.extend_from_slice(&buf[..n]),
                    }
                }
                let _ = tls
                    .write_all(&[b"tls-echo:", data.as_slice()].concat())
                    .await;
                let _ = tls.shutdown().await;
            });
        }
    });
    (addr, cert)
}
