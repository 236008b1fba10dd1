//! The host's HTTP transport for guests: a request over a connection to the
//! pinned address only, redirects re-checked hop by hop, the body capped
//! while it streams, one deadline over the whole exchange.
//!
//! Threat: the floor ([`super::net_guard`]) is only as good as the
//! connection that follows it. So: the TCP connection goes to the address
//! the guard returned, never to a name; TLS verifies the peer with SNI set
//! to the URL's host; every redirect hop goes back through the guard (a
//! public page may redirect to the metadata address); credentials
//! (`Authorization`, `Cookie`, `Proxy-Authorization`) are dropped when a
//! redirect changes origin; a body larger than the cap is cut off as soon as
//! it passes the cap (the connection is dropped, not drained), and a body
//! that trickles is cut off by the deadline.

use super::bound::{inject, mask_headers, mask_in, masks_of, with_query, without_injected};
use super::net_guard::{NetDenial, NetGuard, Pinned};
use super::{NetScope, SecretBindings};
use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use wasmtime_wasi_http::io::TokioIo;

/// A bidirectional byte stream (plain TCP or TLS).
pub trait Io: AsyncRead + AsyncWrite + Send + Unpin + 'static {}
impl<T: AsyncRead + AsyncWrite + Send + Unpin + 'static> Io for T {}

/// Limits of one fetch.
#[derive(Debug, Clone)]
pub struct HttpLimits {
    /// The largest body accepted.
    pub max_body: usize,
    /// The wall-clock budget of the whole exchange, redirects included.
    pub deadline: Duration,
    /// Redirects followed at most.
    pub max_redirects: u8,
    /// Bytes shared with other fetches of one call (`fetch-many`): every
    /// body byte read is taken from it, and a fetch that finds it empty
    /// fails as too large.
    pub shared: Option<Arc<ByteBudget>>,
}

/// Bytes that several fetches draw from together, so what they hold at once
/// is bounded however many run.
#[derive(Debug)]
pub struct ByteBudget {
    total: usize,
    left: AtomicUsize,
}

impl ByteBudget {
    /// A budget of `total` bytes.
    pub fn new(total: usize) -> Self {
        Self {
            total,
            left: AtomicUsize::new(total),
        }
    }

    /// Takes `n` bytes; false (taking nothing) when fewer are left.
    pub fn take(&self, n: usize) -> bool {
        self.left
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |left| {
                left.checked_sub(n)
            })
            .is_ok()
    }

    /// The budget's size.
    pub fn total(&self) -> usize {
        self.total
    }

    /// The bytes taken so far: with a budget too large to run out, how a
    /// caller shows the progress of a download.
    pub fn taken(&self) -> usize {
        self.total - self.left.load(Ordering::Acquire)
    }
}

/// A request.
#[derive(Debug, Clone)]
pub struct HttpRequest {
    /// The method.
    pub method: http::Method,
    /// The absolute URL.
    pub url: String,
    /// Request headers.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Bytes,
}

impl HttpRequest {
    /// A GET of `url`.
    pub fn get(url: impl Into<String>) -> Self {
        Self {
            method: http::Method::GET,
            url: url.into(),
            headers: Vec::new(),
            body: Bytes::new(),
        }
    }
}

/// A response, with its body read whole (within the cap).
#[derive(Debug, Clone)]
pub struct HttpResponse {
    /// The status code.
    pub status: u16,
    /// Response headers.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Bytes,
    /// The final URL, after redirects.
    pub url: String,
    /// The address the final request went to.
    pub addr: SocketAddr,
}

/// Why a fetch failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    /// The floor refused a hop.
    #[error("denied: {0}")]
    Denied(#[from] NetDenial),
    /// The deadline passed.
    #[error("timeout after {} ms", .0.as_millis())]
    Timeout(Duration),
    /// The body passed the cap.
    #[error("body larger than {0} bytes")]
    TooLarge(u64),
    /// More redirects than allowed.
    #[error("more than {0} redirects")]
    TooManyRedirects(u8),
    /// The TCP connection failed.
    #[error("connect to {addr} failed: {why}")]
    Connect {
        /// The pinned address.
        addr: SocketAddr,
        /// Why.
        why: String,
    },
    /// The TLS handshake failed (including an unverified peer).
    #[error("tls: {0}")]
    Tls(String),
    /// The peer did not speak HTTP/1.1 acceptably.
    #[error("protocol: {0}")]
    Protocol(String),
}

use super::tls::LazyTls;

/// Headers that carry credentials: dropped on a cross-origin redirect.
const CREDENTIALS: [&str; 3] = ["authorization", "cookie", "proxy-authorization"];

/// Headers the transport sets itself.
const HOP_BY_HOP: [&str; 6] = [
    "host",
    "connection",
    "transfer-encoding",
    "keep-alive",
    "upgrade",
    "te",
];

/// The guarded, capped HTTP client.
#[derive(Clone)]
pub struct HttpClient {
    guard: NetGuard,
    tls: LazyTls,
}

impl std::fmt::Debug for HttpClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpClient")
            .field("guard", &self.guard)
            .finish()
    }
}

fn host_header(pinned: &Pinned) -> String {
    match pinned.url.port() {
        Some(p) => format!("{}:{p}", pinned.host),
        None => pinned.host.clone(),
    }
}

fn origin(url: &url::Url) -> (String, String, Option<u16>) {
    (
        url.scheme().to_string(),
        url.host_str().unwrap_or_default().to_string(),
        url.port_or_known_default(),
    )
}

impl HttpClient {
    /// A client judging every hop with `guard`.
    pub fn new(guard: NetGuard, tls: Arc<rustls::ClientConfig>) -> Self {
        Self::with_tls(guard, LazyTls::ready(tls))
    }

    /// A client judging every hop with `guard`, its TLS built on first use.
    pub(crate) fn with_tls(guard: NetGuard, tls: LazyTls) -> Self {
        Self { guard, tls }
    }

    /// A client for addresses the operator configured (a model server, a
    /// search or image endpoint): they may be anywhere, loopback included,
    /// so no floor applies. Never hand one a URL a guest chose.
    pub(crate) fn for_operator(tls: LazyTls) -> Self {
        let anywhere = ["0.0.0.0/0", "::/0"]
            .iter()
            .filter_map(|c| super::Cidr::parse(c).ok())
            .collect();
        let guard = NetGuard::new(anywhere, Arc::new(super::SystemResolver));
        Self::with_tls(guard, tls)
    }

    /// The guard.
    pub fn guard(&self) -> &NetGuard {
        &self.guard
    }

    /// The TLS configuration. When the operator's roots file is unusable,
    /// an error that does not say which file or why: it may reach a guest,
    /// and the log has said both.
    pub fn tls(&self) -> Result<&Arc<rustls::ClientConfig>, HttpError> {
        self.tls
            .get()
            .map_err(|_| HttpError::Tls(super::tls::ROOTS_UNUSABLE.into()))
    }

    /// Connects to the pinned address, with TLS (SNI = the URL's host,
    /// peer verified) for https.
    pub async fn connect(
        &self,
        addr: SocketAddr,
        tls_host: Option<&str>,
    ) -> Result<Box<dyn Io>, HttpError> {
        let tcp = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| HttpError::Connect {
                addr,
                why: e.to_string(),
            })?;
        let _ = tcp.set_nodelay(true);
        let Some(host) = tls_host else {
            return Ok(Box::new(tcp));
        };
        let name = rustls::pki_types::ServerName::try_from(
            host.trim_start_matches('[')
                .trim_end_matches(']')
                .to_string(),
        )
        .map_err(|e| HttpError::Tls(format!("bad server name {host}: {e}")))?;
        let stream = tokio_rustls::TlsConnector::from(self.tls()?.clone())
            .connect(name, tcp)
            .await
            .map_err(|e| HttpError::Tls(e.to_string()))?;
        Ok(Box::new(stream))
    }

    /// Sends one request over a fresh connection to the pinned address and
    /// returns the response with its body unread. The request's URI is
    /// rewritten to origin form and its Host header set from the URL.
    pub async fn send<B>(
        &self,
        pinned: &Pinned,
        mut req: http::Request<B>,
    ) -> Result<http::Response<hyper::body::Incoming>, HttpError>
    where
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let io = self
            .connect(pinned.addr, pinned.tls.then_some(pinned.host.as_str()))
            .await?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
            .await
            .map_err(|e| HttpError::Protocol(e.to_string()))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        let path = match pinned.url.query() {
            Some(q) => format!("{}?{q}", pinned.url.path()),
            None => pinned.url.path().to_string(),
        };
        *req.uri_mut() = path
            .parse()
            .map_err(|e| HttpError::Protocol(format!("bad path: {e}")))?;
        let host = http::HeaderValue::from_str(&host_header(pinned))
            .map_err(|e| HttpError::Protocol(e.to_string()))?;
        req.headers_mut().insert(http::header::HOST, host);
        sender
            .send_request(req)
            .await
            .map_err(|e| HttpError::Protocol(e.to_string()))
    }

    /// Fetches `req` within `limits`, following redirects.
    pub async fn fetch(
        &self,
        req: HttpRequest,
        limits: &HttpLimits,
    ) -> Result<HttpResponse, HttpError> {
        self.fetch_within(req, limits, None, None).await
    }

    /// Fetches `req` within `limits`, following redirects, each hop judged
    /// by `scope` (when there is one) before the floor, and given the
    /// secrets `bindings` name for it (see [`super::bound`]).
    pub async fn fetch_within(
        &self,
        req: HttpRequest,
        limits: &HttpLimits,
        scope: Option<&dyn NetScope>,
        bindings: Option<&dyn SecretBindings>,
    ) -> Result<HttpResponse, HttpError> {
        let hops = self.follow(req, limits, scope, bindings);
        tokio::time::timeout(limits.deadline, hops)
            .await
            .map_err(|_| HttpError::Timeout(limits.deadline))?
    }

    async fn follow(
        &self,
        req: HttpRequest,
        limits: &HttpLimits,
        scope: Option<&dyn NetScope>,
        bindings: Option<&dyn SecretBindings>,
    ) -> Result<HttpResponse, HttpError> {
        let HttpRequest {
            mut method,
            mut url,
            mut headers,
            mut body,
        } = req;
        let mut previous: Option<(String, String, Option<u16>)> = None;
        // What every hop given a secret must not hand back.
        let mut masks: Vec<Vec<u8>> = Vec::new();
        for _ in 0..=limits.max_redirects {
            let pinned = self.guard.check_url_within(&url, scope).await?;
            let injections = bindings.map_or_else(Vec::new, |b| {
                let host = pinned.url.host_str().unwrap_or_default();
                let port = pinned.url.port_or_known_default().unwrap_or(0);
                b.injections(pinned.url.scheme(), host, port)
            });
            masks.extend(masks_of(&injections));
            let here = origin(&pinned.url);
            if previous.as_ref().is_some_and(|p| *p != here) {
                headers.retain(|(k, _)| !CREDENTIALS.contains(&k.to_ascii_lowercase().as_str()));
            }
            let mut builder = http::Request::builder().method(method.clone());
            for (k, v) in &headers {
                if !HOP_BY_HOP.contains(&k.to_ascii_lowercase().as_str()) {
                    builder = builder.header(k, v);
                }
            }
            let mut request = builder
                .body(http_body_util::Full::new(body.clone()))
                .map_err(|e| HttpError::Protocol(e.to_string()))?;
            inject(request.headers_mut(), &injections);
            // A bound query parameter goes on this hop's request line only.
            let resp = match with_query(&pinned.url, &injections) {
                Some(url) => {
                    let sent = Pinned {
                        url,
                        ..pinned.clone()
                    };
                    self.send(&sent, request).await?
                }
                None => self.send(&pinned, request).await?,
            };
            let status = resp.status();
            let location = resp
                .headers()
                .get(http::header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .map(str::to_string);
            if status.is_redirection()
                && status != http::StatusCode::NOT_MODIFIED
                && let Some(location) = location
            {
                let mut next = pinned
                    .url
                    .join(&location)
                    .map_err(|e| HttpError::Protocol(format!("bad redirect: {e}")))?;
                // On to the same origin with the request's own query (the
                // bound parameter in it): the parameter goes, and the
                // binding sets it again at the next hop.
                let elsewhere = origin(&next) != here;
                if !elsewhere {
                    next = without_injected(&next, &injections);
                }
                // A server given a secret that sends the guest on with it
                // anywhere else (in the query, the host name, say) is not
                // followed: the next hop would carry the secret to wherever
                // it says. The `Location` as written is judged too, as the
                // URL read from it may have changed its case.
                if carries_any(next.as_str(), &masks)
                    || (elsewhere && carries_any(&location, &masks))
                {
                    return Err(HttpError::Protocol(
                        "a redirect carried a secret the host added; not followed".into(),
                    ));
                }
                url = next.to_string();
                let post_to_get = status == http::StatusCode::SEE_OTHER
                    || (method == http::Method::POST && matches!(status.as_u16(), 301 | 302));
                if post_to_get {
                    method = http::Method::GET;
                    body = Bytes::new();
                    headers.retain(|(k, _)| {
                        !matches!(
                            k.to_ascii_lowercase().as_str(),
                            "content-type" | "content-length"
                        )
                    });
                }
                previous = Some(here);
                continue;
            }
            masks.sort_by_key(|m| std::cmp::Reverse(m.len()));
            masks.dedup();
            let mut resp = resp;
            mask_headers(resp.headers_mut(), &masks);
            let headers_out = resp
                .headers()
                .iter()
                .map(|(k, v)| {
                    (
                        k.to_string(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect();
            let (max, shared) = (limits.max_body, limits.shared.as_deref());
            let still = scope.map(|s| (&pinned, s));
            let body = read_capped_shared(resp.into_body(), max, shared, still).await?;
            let (body, url) = match masks.is_empty() {
                true => (body, pinned.url.to_string()),
                false => {
                    let mut body = body.to_vec();
                    mask_in(&mut body, &masks);
                    let mut url = pinned.url.to_string().into_bytes();
                    mask_in(&mut url, &masks);
                    let url = String::from_utf8_lossy(&url).into_owned();
                    (Bytes::from(body), url)
                }
            };
            return Ok(HttpResponse {
                status: status.as_u16(),
                headers: headers_out,
                body,
                url,
                addr: pinned.addr,
            });
        }
        Err(HttpError::TooManyRedirects(limits.max_redirects))
    }
}

/// Whether `url` holds any of `masks`, as written or percent-decoded
/// (and with `+` read as a space), in any case: a server may re-encode
/// what it was sent, and a URL's host is read in lower case.
fn carries_any(url: &str, masks: &[Vec<u8>]) -> bool {
    let lower = |b: Vec<u8>| b.to_ascii_lowercase();
    let forms = [
        lower(url.as_bytes().to_vec()),
        lower(percent_encoding::percent_decode_str(url).collect()),
        lower(percent_encoding::percent_decode_str(&url.replace('+', " ")).collect()),
    ];
    masks.iter().any(|m| {
        let m = m.to_ascii_lowercase();
        forms.iter().any(|f| contains(f, &m))
    })
}

/// Whether `haystack` holds `needle`.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// Reads a body up to `max` bytes; past that the body (and its connection)
/// is dropped and the read fails.
pub async fn read_capped<B>(body: B, max: usize) -> Result<Bytes, HttpError>
where
    B: http_body::Body<Data = Bytes> + Unpin,
    B::Error: std::fmt::Display,
{
    read_capped_shared(body, max, None, None).await
}

/// [`read_capped`], also taking every byte from `shared` when given, and
/// judging the destination `still` names again by its scope before each
/// chunk ([`Pinned::judge_again`]).
async fn read_capped_shared<B>(
    mut body: B,
    max: usize,
    shared: Option<&ByteBudget>,
    still: Option<(&Pinned, &dyn NetScope)>,
) -> Result<Bytes, HttpError>
where
    B: http_body::Body<Data = Bytes> + Unpin,
    B::Error: std::fmt::Display,
{
    if body.size_hint().lower() > max as u64 {
        return Err(HttpError::TooLarge(max as u64));
    }
    let mut buf = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|e| HttpError::Protocol(e.to_string()))?;
        if let Some((pinned, scope)) = still {
            pinned.judge_again(scope)?;
        }
        if let Ok(data) = frame.into_data() {
            if buf.len() + data.len() > max {
                return Err(HttpError::TooLarge(max as u64));
            }
            if let Some(budget) = shared
                && !budget.take(data.len())
            {
                return Err(HttpError::TooLarge(budget.total() as u64));
            }
            buf.extend_from_slice(&data);
        }
    }
    Ok(buf.freeze())
}

#[cfg(test)]
mod tests {
    use super::carries_any;

    #[test]
    fn a_redirect_target_carries_a_secret_however_it_is_encoded_or_cased() {
        let masks = vec![b"Tok/9F".to_vec()];
        for url in [
            "https://evil.example/?t=Tok/9F",
            "https://evil.example/?t=Tok%2F9F",
            "https://evil.example/?t=tok%2f9f",
            // A host read by a URL parser comes back in lower case.
            "https://tok-x.evil.example/Tok%2f9F",
        ] {
            assert!(carries_any(url, &masks), "{url}");
        }
        assert!(!carries_any("https://evil.example/?t=Tok-9F", &masks));
    }
}
