//! A case of the `wasi:http/service` world in the suite's operation
//! format: the component is served as `wbx serve` serves it (the narrowest
//! profile that docks it on the handler lane, shared instances), the
//! peers its `servers` name are started on loopback and
//! given to it as `HTTP_SERVER_<NAME>=host:port`, and each `request`
//! operation is sent and its `response` checked (status, the headers it
//! names, the body when given).
//!
//! A peer answers each of its `endpoints` (method and path with query)
//! with the `response` it gives (status, headers, body or `chunks` and
//! `trailers`), or by its `mode`: `echo-headers` reflects the request's
//! headers as `x-echo-<name>`, its trailers as `x-trailer-<name>`, its
//! method and path as `x-request-method` and `x-request-path`;
//! `echo-body` answers the body it read. A server of kind `closed` is a
//! port nothing listens on. A canned answer with trailers is framed by
//! hand (hyper's server would leave them out for a client that did not
//! send `TE: trailers`, as the engine's client does not).

use bytes::Bytes;
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::body::Frame;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use wasmtime_wasi_http::io::TokioIo;
use workbooks::{Artifact, Engine, Profile, ServeOptions};

/// How long one request to the served component may take.
const REQUEST_WAIT: Duration = Duration::from_secs(20);

/// A peer the runner starts.
#[derive(Debug, Clone, Deserialize)]
pub(super) struct Peer {
    name: String,
    #[serde(default)]
    endpoints: Vec<Endpoint>,
    /// `closed`: a port nothing listens on.
    kind: Option<String>,
}

/// One route of a peer.
#[derive(Debug, Clone, Deserialize)]
struct Endpoint {
    method: String,
    path: String,
    mode: Option<String>,
    response: Option<Canned>,
}

/// A peer's fixed answer.
#[derive(Debug, Clone, Deserialize)]
struct Canned {
    status: u16,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    body: Option<String>,
    #[serde(default)]
    chunks: Vec<String>,
    #[serde(default)]
    trailers: BTreeMap<String, String>,
}

/// A `request` operation.
#[derive(Debug, Deserialize)]
pub(super) struct Request {
    #[serde(default = "get")]
    method: String,
    #[serde(default = "root")]
    path: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    body: String,
    response: Expected,
}

/// What a `request` expects back.
#[derive(Debug, Deserialize)]
struct Expected {
    status: u16,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    body: Option<String>,
}

fn get() -> String {
    "GET".into()
}

fn root() -> String {
    "/".into()
}

type Body = BoxBody<Bytes, Infallible>;

/// The component being served, and its peers.
pub(super) struct Served {
    pub(super) profile: Profile,
    addr: std::net::SocketAddr,
    server: tokio::task::JoinHandle<std::io::Result<()>>,
    peers: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        self.server.abort();
        for peer in &self.peers {
            peer.abort();
        }
    }
}

/// Starts the peers, then serves the component under the narrowest
/// profile that docks it.
pub(super) async fn serve(
    engine: &Engine,
    artifact: &Artifact,
    peers: &[Peer],
    mut env: Vec<(String, String)>,
) -> Result<Served, String> {
    let mut running = Vec::new();
    for peer in peers {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .map_err(|e| format!("peer {}: {e}", peer.name))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        env.push((
            format!("HTTP_SERVER_{}", peer.name.to_uppercase()),
            addr.to_string(),
        ));
        if peer.kind.as_deref() == Some("closed") {
            continue;
        }
        running.push(tokio::spawn(run_peer(
            listener,
            Arc::new(peer.endpoints.clone()),
        )));
    }
    let mut refusals = Vec::new();
    for profile in Profile::ALL {
        let opts = ServeOptions {
            profile: profile.name().into(),
            env: env.clone(),
            per_client_per_minute: u64::MAX,
            ..ServeOptions::default()
        };
        match workbooks::Server::new(engine, artifact, opts) {
            Ok(server) => {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .map_err(|e| e.to_string())?;
                let addr = listener.local_addr().map_err(|e| e.to_string())?;
                return Ok(Served {
                    profile,
                    addr,
                    server: tokio::spawn(server.run(listener)),
                    peers: running,
                });
            }
            Err(e) => refusals.push(format!("{profile}: {e}")),
        }
    }
    Err(format!("not served: {}", refusals.join("; ")))
}

/// Sends one `request` to the served component and checks its answer.
pub(super) async fn request(served: &Served, req: Request) -> Result<(), String> {
    let answer = tokio::time::timeout(REQUEST_WAIT, send(served.addr, &req))
        .await
        .map_err(|_| format!("{} {}: no answer", req.method, req.path))??;
    let (status, headers, body) = answer;
    let mut wrong = Vec::new();
    if status != req.response.status {
        wrong.push(format!(
            "status {status} (expected {}): {}",
            req.response.status,
            String::from_utf8_lossy(&body).trim()
        ));
    }
    for (name, want) in &req.response.headers {
        let got = headers.get(name.as_str()).and_then(|v| v.to_str().ok());
        if got != Some(want.as_str()) {
            wrong.push(format!("{name}: {got:?} (expected {want:?})"));
        }
    }
    if let Some(want) = &req.response.body
        && body != want.as_bytes()
    {
        wrong.push(format!(
            "body {:?} (expected {want:?})",
            String::from_utf8_lossy(&body)
        ));
    }
    if wrong.is_empty() {
        Ok(())
    } else {
        Err(format!("{} {}: {}", req.method, req.path, wrong.join("; ")))
    }
}

type Answer = (u16, http::HeaderMap, Bytes);

async fn send(addr: std::net::SocketAddr, req: &Request) -> Result<Answer, String> {
    let stream = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    tokio::spawn(conn);
    let mut builder = http::Request::builder()
        .method(req.method.as_str())
        .uri(req.path.as_str())
        .header(http::header::HOST, addr.to_string());
    for (name, value) in &req.headers {
        builder = builder.header(name.as_str(), value.as_str());
    }
    let request = builder
        .body(Full::new(Bytes::from(req.body.clone())))
        .map_err(|e| format!("request: {e}"))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| format!("send: {e}"))?;
    let (parts, body) = response.into_parts();
    let body = body
        .collect()
        .await
        .map_err(|e| format!("body: {e}"))?
        .to_bytes();
    Ok((parts.status.as_u16(), parts.headers, body))
}

/// Serves a peer's endpoints on `listener` until aborted.
async fn run_peer(listener: tokio::net::TcpListener, endpoints: Arc<Vec<Endpoint>>) {
    while let Ok((stream, _)) = listener.accept().await {
        let endpoints = endpoints.clone();
        tokio::spawn(async move {
            if let Some((canned, head)) = trailered(&stream, &endpoints).await {
                let _ = answer_raw(stream, head, &canned).await;
                return;
            }
            let service = hyper::service::service_fn(move |req| {
                let endpoints = endpoints.clone();
                async move { Ok::<_, Infallible>(answer(&endpoints, req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// The longest request head a peer reads to route a connection itself.
const PEER_HEAD_MAX: usize = 16 * 1024;

/// The canned answer with trailers that the connection's first request
/// asks for, and that request's head length, read without taking it off
/// the socket: hyper's
/// server sends trailers only to a client that sent `TE: trailers`, and a
/// case expects them without, so such an answer is framed by hand.
async fn trailered(
    stream: &tokio::net::TcpStream,
    endpoints: &[Endpoint],
) -> Option<(Canned, usize)> {
    let mut buf = vec![0; PEER_HEAD_MAX];
    for _ in 0..100 {
        let n = stream.peek(&mut buf).await.ok()?;
        let mut headers = [httparse::EMPTY_HEADER; 64];
        let mut head = httparse::Request::new(&mut headers);
        match head.parse(&buf[..n]) {
            Ok(httparse::Status::Complete(head_len)) => {
                let (method, path) = (head.method?, head.path?);
                let endpoint = endpoints
                    .iter()
                    .find(|e| e.method.eq_ignore_ascii_case(method) && e.path == path)?;
                return endpoint
                    .response
                    .clone()
                    .filter(|c| endpoint.mode.is_none() && !c.trailers.is_empty())
                    .map(|c| (c, head_len));
            }
            Ok(httparse::Status::Partial) if n < buf.len() => {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            _ => return None,
        }
    }
    None
}

/// Answers the connection's one request (its `head` bytes taken off the
/// socket) with `canned` in chunked framing, its trailer section after the
/// last chunk, and closes.
async fn answer_raw(
    mut stream: tokio::net::TcpStream,
    head: usize,
    canned: &Canned,
) -> std::io::Result<()> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    stream.read_exact(&mut vec![0; head]).await?;
    let reason = http::StatusCode::from_u16(canned.status)
        .ok()
        .and_then(|s| s.canonical_reason())
        .unwrap_or("");
    let mut out = format!("HTTP/1.1 {} {reason}\r\n", canned.status);
    for (name, value) in &canned.headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("transfer-encoding: chunked\r\nconnection: close\r\n\r\n");
    for chunk in canned.chunks.iter().filter(|c| !c.is_empty()) {
        out.push_str(&format!("{:x}\r\n{chunk}\r\n", chunk.len()));
    }
    out.push_str("0\r\n");
    for (name, value) in &canned.trailers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    stream.write_all(out.as_bytes()).await?;
    stream.shutdown().await
}

/// A peer's answer to one request.
async fn answer(
    endpoints: &[Endpoint],
    req: http::Request<hyper::body::Incoming>,
) -> http::Response<Body> {
    let path = req
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "/".into());
    let method = req.method().as_str().to_string();
    let Some(endpoint) = endpoints
        .iter()
        .find(|e| e.method.eq_ignore_ascii_case(&method) && e.path == path)
    else {
        return plain(404, Bytes::from_static(b"no such endpoint"));
    };
    match (&endpoint.mode, &endpoint.response) {
        (Some(mode), _) if mode == "echo-headers" => {
            let (parts, body) = req.into_parts();
            let trailers = body
                .collect()
                .await
                .ok()
                .and_then(|c| c.trailers().cloned())
                .unwrap_or_default();
            let mut response = plain(200, Bytes::new());
            let headers = response.headers_mut();
            let mut reflect = |prefix: &str, name: &http::HeaderName, value| {
                if let Ok(name) = http::HeaderName::try_from(format!("{prefix}{name}")) {
                    headers.append(name, value);
                }
            };
            for (name, value) in &parts.headers {
                reflect("x-echo-", name, value.clone());
            }
            for (name, value) in &trailers {
                reflect("x-trailer-", name, value.clone());
            }
            for (name, value) in [("x-request-method", method), ("x-request-path", path)] {
                if let Ok(value) = http::HeaderValue::try_from(value) {
                    headers.insert(name, value);
                }
            }
            response
        }
        (Some(mode), _) if mode == "echo-body" => {
            let body = req
                .into_body()
                .collect()
                .await
                .map(|c| c.to_bytes())
                .unwrap_or_default();
            plain(200, body)
        }
        (_, Some(canned)) => canned_answer(canned),
        _ => plain(500, Bytes::from_static(b"an endpoint with no answer")),
    }
}

/// A canned answer: its body whole, or its chunks and then its trailers.
fn canned_answer(canned: &Canned) -> http::Response<Body> {
    let body: Body = if canned.chunks.is_empty() && canned.trailers.is_empty() {
        Full::new(Bytes::from(canned.body.clone().unwrap_or_default())).boxed()
    } else {
        let mut frames: Vec<Result<Frame<Bytes>, Infallible>> = canned
            .chunks
            .iter()
            .map(|c| Ok(Frame::data(Bytes::from(c.clone()))))
            .collect();
        if !canned.trailers.is_empty() {
            frames.push(Ok(Frame::trailers(header_map(&canned.trailers))));
        }
        StreamBody::new(futures::stream::iter(frames)).boxed()
    };
    let mut response = http::Response::new(body);
    *response.status_mut() =
        http::StatusCode::from_u16(canned.status).unwrap_or(http::StatusCode::OK);
    response.headers_mut().extend(header_map(&canned.headers));
    response
}

/// A case's header names and values as HTTP fields (invalid ones left out).
fn header_map(fields: &BTreeMap<String, String>) -> http::HeaderMap {
    fields
        .iter()
        .filter_map(|(name, value)| {
            let name = http::HeaderName::try_from(name.as_str()).ok()?;
            Some((name, http::HeaderValue::try_from(value.as_str()).ok()?))
        })
        .collect()
}

fn plain(status: u16, body: Bytes) -> http::Response<Body> {
    let mut response = http::Response::new(Full::new(body).boxed());
    *response.status_mut() = http::StatusCode::from_u16(status).unwrap_or_default();
    response
}
