//! The wasi:http send hook: every request a guest sends through
//! `wasi:http/outgoing-handler` passes the cadence and the floor, and goes
//! over a connection to the pinned address; the response body is capped as
//! it streams, and the whole exchange (head and body) shares one deadline.
//!
//! Each request's connection is a descriptor, and `handle` returns before
//! the request is answered, so a guest sending without waiting could hold
//! one per table entry. So each request takes one of the store's
//! [`crate::limits::MAX_REQUESTS_PER_STORE`] (and of its tenant's
//! descriptors) before it connects, and keeps it until its response body
//! is dropped; a request past either is answered
//! `connection-limit-reached` and opens nothing.
//!
//! A request whose destination a tenant's token is bound to is sent with
//! it (`crate::egress::SecretBindings`), and the token's bytes are masked
//! in the response's headers and, across chunks, its body.
//!
//! A response to a request sent under a scope is judged by it again before
//! each frame of its body, so a grant narrowed, revoked or expired while a
//! long body streams cuts it at the next frame (`http-request-denied`,
//! audited as the scope's refusal).

use crate::cadence::{Denial, Holding, Kind};
use crate::egress::{EgressFailure, HttpError, Masker, NetAccess, NetDenial};
use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use http_body_util::BodyExt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

/// The hooks of one store; without reach every request is denied.
#[derive(Default)]
pub(crate) struct GuardedHooks {
    /// The store's access, and its descriptors, where each request's
    /// connection counts.
    reach: Option<(NetAccess, Arc<Holding>)>,
}

impl GuardedHooks {
    pub(crate) fn new(access: NetAccess, descriptors: Arc<Holding>) -> Self {
        Self {
            reach: Some((access, descriptors)),
        }
    }
}

/// One request's connection in its store's count, given back when the
/// request fails or its response body is dropped.
struct Connection(Arc<Holding>);

impl Connection {
    /// A place for one more connection, if the store and its tenant have
    /// room.
    fn take(descriptors: &Arc<Holding>) -> Option<Self> {
        descriptors
            .take_one(Kind::Request)
            .then(|| Self(descriptors.clone()))
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.0.release(Kind::Request);
    }
}

/// A response body that fails once more than `left` bytes have passed or
/// its `deadline` has; it holds its request's place among the store's
/// connections.
struct Capped {
    inner: hyper::body::Incoming,
    left: usize,
    limit: usize,
    deadline: Pin<Box<tokio::time::Sleep>>,
    /// Masks the secrets the host added to the request, when it added any.
    masker: Option<Masker>,
    /// A frame read while the masker's held bytes went first.
    pending: Option<Frame<Bytes>>,
    /// The destination and the scope that let the request out, judged
    /// again before each frame ([`crate::egress::Pinned::judge_again`]).
    still: Option<Still>,
    _connection: Connection,
}

/// What a scoped response is judged by again while it streams, and where
/// a refusal is audited.
struct Still {
    access: NetAccess,
    pinned: crate::egress::Pinned,
}

impl Still {
    /// Whether the scope allows the destination now; a refusal is audited.
    fn allowed(&self) -> bool {
        let Some(scope) = self.access.scope.as_deref() else {
            return true;
        };
        let Err(denial) = self.pinned.judge_again(scope) else {
            return true;
        };
        let host = &self.pinned.host;
        let why = Denial::Guard(denial.reason());
        self.access
            .cadence
            .deny(&self.access.tenant, "net", why, host);
        false
    }
}

impl Body for Capped {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        if let Some(frame) = self.pending.take() {
            return Poll::Ready(Some(Ok(frame)));
        }
        if self.deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(Error::ConnectionReadTimeout)));
        }
        match Pin::new(&mut self.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if self.still.as_ref().is_some_and(|s| !s.allowed()) {
                    return Poll::Ready(Some(Err(Error::HttpRequestDenied)));
                }
                if let Some(data) = frame.data_ref() {
                    if data.len() > self.left {
                        let limit = self.limit as u64;
                        return Poll::Ready(Some(Err(Error::HttpResponseBodySize(Some(limit)))));
                    }
                    self.left -= data.len();
                }
                let Some(masker) = self.masker.as_mut() else {
                    return Poll::Ready(Some(Ok(frame)));
                };
                let frame = match frame.into_data() {
                    Ok(data) => Frame::data(masker.feed(&data)),
                    // Trailers: what the masker holds goes first.
                    Err(trailers) => {
                        let held = masker.finish();
                        if held.is_empty() {
                            trailers
                        } else {
                            self.pending = Some(trailers);
                            Frame::data(held)
                        }
                    }
                };
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(Error::Hyper(e)))),
            Poll::Ready(None) => match self.masker.as_mut().map(Masker::finish) {
                Some(held) if !held.is_empty() => Poll::Ready(Some(Ok(Frame::data(held)))),
                _ => Poll::Ready(None),
            },
            Poll::Pending => Poll::Pending,
        }
    }

    fn is_end_stream(&self) -> bool {
        self.pending.is_none() && self.masker.is_none() && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        // What the masker holds back is not in the inner body's hint.
        match self.masker {
            Some(_) => SizeHint::default(),
            None => self.inner.size_hint(),
        }
    }
}

fn to_wasi(f: EgressFailure) -> Error {
    match f {
        EgressFailure::Denied(Denial::RateLimited) => Error::ConnectionLimitReached,
        EgressFailure::Denied(_) => Error::HttpRequestDenied,
        EgressFailure::Failed(e) => match e {
            HttpError::Denied(NetDenial::Blocked { .. }) => Error::DestinationIpProhibited,
            HttpError::Denied(NetDenial::Unresolved { .. }) => Error::DestinationNotFound,
            HttpError::Denied(_) => Error::HttpRequestDenied,
            HttpError::Timeout(_) => Error::ConnectionTimeout,
            HttpError::TooLarge(n) => Error::HttpResponseBodySize(Some(n)),
            HttpError::TooManyRedirects(_) => Error::LoopDetected,
            HttpError::Connect { .. } => Error::ConnectionRefused,
            HttpError::Tls(_) => Error::TlsCertificateError,
            HttpError::Protocol(_) => Error::HttpProtocolError,
        },
    }
}

type Sent = (
    http::Response<WasiBody>,
    Box<dyn Future<Output = Result<(), Error>> + Send>,
);

impl WasiHttpHooks for GuardedHooks {
    /// Smaller writes to a 0.2 outgoing body, so one unsent body holds
    /// little in the host (see the limit).
    fn p2_outgoing_body_chunk_size(&mut self) -> usize {
        crate::limits::HTTP_BODY_CHUNK_BYTES
    }

    fn send_request(
        &mut self,
        request: http::Request<WasiBody>,
        _options: Option<RequestOptions>,
        _fut: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> Box<dyn Future<Output = Result<Sent, Error>> + Send> {
        let reach = self.reach.clone();
        Box::new(async move {
            let Some((access, descriptors)) = reach else {
                return Err(Error::HttpRequestDenied);
            };
            let connection = Connection::take(&descriptors).ok_or(Error::ConnectionLimitReached)?;
            let url = request.uri().to_string();
            let host = request.uri().host().unwrap_or_default().to_string();
            let client = access.client.clone();
            let limit = access.max_body;
            let timeout = access.timeout;
            let deadline = tokio::time::Instant::now() + timeout;
            let mut request = request;
            let (mut response, masks, pinned) = access
                .guarded("net", &host, async {
                    let scope = access.scope.as_deref();
                    let pinned = client.guard().check_url_within(&url, scope).await?;
                    let injections = access.bindings.as_deref().map_or_else(Vec::new, |b| {
                        let host = pinned.url.host_str().unwrap_or_default();
                        let port = pinned.url.port_or_known_default().unwrap_or(0);
                        b.injections(pinned.url.scheme(), host, port)
                    });
                    crate::egress::inject(request.headers_mut(), &injections);
                    // A bound query parameter goes on the request line only.
                    let queried = crate::egress::with_query(&pinned.url, &injections).map(|url| {
                        crate::egress::Pinned {
                            url,
                            ..pinned.clone()
                        }
                    });
                    let target = queried.as_ref().unwrap_or(&pinned);
                    let sent = tokio::time::timeout_at(deadline, client.send(target, request))
                        .await
                        .map_err(|_| HttpError::Timeout(timeout))??;
                    Ok((sent, crate::egress::masks_of(&injections), pinned))
                })
                .await
                .map_err(to_wasi)?;
            crate::egress::mask_headers(response.headers_mut(), &masks);
            let response = response.map(|inner| {
                Capped {
                    inner,
                    left: limit,
                    limit,
                    deadline: Box::pin(tokio::time::sleep_until(deadline)),
                    masker: Masker::new(masks),
                    pending: None,
                    still: access.scope.is_some().then(|| Still {
                        access: access.clone(),
                        pinned,
                    }),
                    _connection: connection,
                }
                .boxed_unsync()
            });
            Ok((
                response,
                Box::new(async { Ok(()) }) as Box<dyn Future<Output = Result<(), Error>> + Send>,
            ))
        })
    }
}
