//! The accept loop of [`Server`] and [`super::TcpServer`]: how many
//! connections, from whom, for how long.
//!
//! Threat: a client that opens connections and never finishes a request
//! (slowloris), or keeps idle keep-alives open, or stops reading its
//! response (holding the response buffered for it), or opens so many that
//! the process runs out of file descriptors. So: a connection over its
//! client's cap, or over the total cap while every connection is busy, is
//! closed as soon as it is accepted (audited as `too_many_connections`); at
//! the total cap the connection waiting longest for its headers is shed
//! instead (audited as `shed_waiting_for_headers`, see
//! [`super::connections`]); a connection must
//! deliver each request's headers, and an idle keep-alive its next request,
//! within the header timeout, and a write to it may wait no longer than
//! that for the client to read ([`WriteDeadline`]); and a failed accept
//! (EMFILE, ENFILE, a connection reset before it was taken) is logged and
//! retried after a back-off that grows to [`ACCEPT_BACKOFF_MAX`], never the
//! end of the server. Denials coalesced in the audit log are written out
//! every coalescing window while the server runs.

use super::Server;
use super::connections::{Admitted, Connections, Refused, Slot};
use crate::cadence::Denial;
use crate::limits::AUDIT_COALESCE_WINDOW;
use std::net::IpAddr;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

/// The first wait after a failed accept.
const ACCEPT_BACKOFF_MIN: Duration = Duration::from_millis(5);
/// The longest wait after failed accepts in a row.
const ACCEPT_BACKOFF_MAX: Duration = Duration::from_secs(1);

/// The key a client is counted under: its IPv4 address, or the /64 of its
/// IPv6 address (one host usually owns a whole /64, so counting single
/// addresses would let it multiply its share).
pub fn client_key(ip: IpAddr) -> String {
    match ip.to_canonical() {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => {
            let s = v6.segments();
            format!("{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
        }
    }
}

/// A connection whose writes must make progress within `limit`: a client
/// that stops reading is dropped instead of holding its slot, and the
/// response buffered for it, for ever.
///
/// It also holds the connection's admission, so the slot is counted for as
/// long as the connection lives, an upgraded one (a WebSocket) included.
struct WriteDeadline<S> {
    inner: S,
    limit: Duration,
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
    _admitted: Admitted,
}

impl<S> WriteDeadline<S> {
    fn new(inner: S, limit: Duration, admitted: Admitted) -> Self {
        Self {
            inner,
            limit,
            stalled: None,
            _admitted: admitted,
        }
    }

    /// Passes a write's readiness through, failing it once it has been
    /// pending for `limit`.
    fn watch<T>(
        &mut self,
        cx: &mut Context<'_>,
        poll: Poll<std::io::Result<T>>,
    ) -> Poll<std::io::Result<T>> {
        if poll.is_ready() {
            self.stalled = None;
            return poll;
        }
        let limit = self.limit;
        let stalled = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        if stalled.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the client stopped reading",
            )));
        }
        Poll::Pending
    }
}

impl<S: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for WriteDeadline<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: tokio::io::AsyncWrite + Unpin> tokio::io::AsyncWrite for WriteDeadline<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let poll = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.watch(cx, poll)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let poll = Pin::new(&mut self.inner).poll_flush(cx);
        self.watch(cx, poll)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let poll = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.watch(cx, poll)
    }
}

/// hyper's timer, on tokio's clock.
#[derive(Debug, Clone, Copy)]
struct TokioTimer;

/// A tokio sleep as hyper's `Sleep`.
struct TokioSleep(Pin<Box<tokio::time::Sleep>>);

impl std::future::Future for TokioSleep {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.0.as_mut().poll(cx)
    }
}

impl hyper::rt::Sleep for TokioSleep {}

impl hyper::rt::Timer for TokioTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(TokioSleep(Box::pin(tokio::time::sleep(duration))))
    }

    fn sleep_until(&self, deadline: std::time::Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(TokioSleep(Box::pin(tokio::time::sleep_until(
            deadline.into(),
        ))))
    }
}

impl Server {
    /// Serves connections from `listener`. A failed accept is retried after
    /// a back-off; the loop ends only when the task running it is dropped.
    pub async fn run(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        let serving = self.serving.clone();
        let write_limit = serving.opts.header_timeout;
        accept_loop(
            listener,
            serving.gate("serve"),
            move |stream, peer, admitted| {
                let server = self.clone();
                let service = hyper::service::service_fn(move |req| {
                    let server = server.clone();
                    async move { Ok::<_, std::convert::Infallible>(server.handle(req, peer).await) }
                });
                spawn_http(stream, admitted, write_limit, service, None);
            },
        )
        .await
    }
}

/// Serves HTTP/1 on one admitted connection in a task of its own: the
/// header deadline its admission set, writes that must progress within
/// `write_limit`, its slot marked busy from a request's headers to the end
/// of its response body, and closed when the slot is shed. A connection
/// given `stopping` follows it: at [`Stopping::Drain`] the request in
/// flight is answered and the connection closed after it (an idle one at
/// once); at [`Stopping::Close`] (or with its sender gone) it is closed.
pub(super) fn spawn_http<S, B>(
    stream: tokio::net::TcpStream,
    admitted: Admitted,
    write_limit: Duration,
    service: S,
    stopping: Option<tokio::sync::watch::Receiver<Stopping>>,
) where
    S: hyper::service::Service<http::Request<hyper::body::Incoming>, Response = http::Response<B>>
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    B: http_body::Body + Unpin + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    tokio::spawn(async move {
        let header_timeout = admitted.header_timeout();
        let slot = admitted.slot();
        let shed = admitted.slot();
        let tracked = hyper::service::service_fn(move |req| {
            slot.busy();
            // Boxed: hyper moves this future into its dispatcher for each
            // request, and held inline the service's future made that a
            // copy of several KB (+9 % instructions per request served).
            let answer = Box::pin(service.call(req));
            let slot = slot.clone();
            async move {
                let response = answer.await?;
                // An upgraded connection stays busy for as long as it lives.
                let upgraded = response.status() == http::StatusCode::SWITCHING_PROTOCOLS;
                let slot = (!upgraded).then_some(slot);
                Ok::<_, S::Error>(response.map(|body| Tracked { body, slot }))
            }
        });
        // The admission lives with the connection's IO (the upgraded IO
        // too) and ends with it.
        let io = WriteDeadline::new(stream, write_limit, admitted);
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer)
            .header_read_timeout(header_timeout)
            .serve_connection(wasmtime_wasi_http::io::TokioIo::new(io), tracked)
            .with_upgrades();
        let mut connection = std::pin::pin!(connection);
        let mut stopping = stopping;
        tokio::select! {
            _ = connection.as_mut() => return,
            () = shed.shed() => return,
            () = told(&mut stopping, |s| s != Stopping::No) => {}
        }
        connection.as_mut().graceful_shutdown();
        tokio::select! {
            _ = connection => {}
            () = shed.shed() => {}
            () = told(&mut stopping, |s| s == Stopping::Close) => {}
        }
    });
}

/// Completes once `stopping` says `now` (or its sender is gone); never
/// for a connection given no `stopping`.
async fn told(
    stopping: &mut Option<tokio::sync::watch::Receiver<Stopping>>,
    now: fn(Stopping) -> bool,
) {
    match stopping {
        Some(stopping) => {
            let _ = stopping.wait_for(|s| now(*s)).await;
        }
        None => std::future::pending().await,
    }
}

/// What a front door tells its connections when it stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stopping {
    /// Serving.
    No,
    /// Answer the request in flight, then close.
    Drain,
    /// Close now.
    Close,
}

/// A response body that marks its connection as waiting for the next
/// request's headers once it is written (or dropped): a long response
/// (a stream of events) is a request being served, never shed.
struct Tracked<B> {
    body: B,
    slot: Option<Arc<Slot>>,
}

impl<B> Drop for Tracked<B> {
    fn drop(&mut self) {
        if let Some(slot) = &self.slot {
            slot.waiting();
        }
    }
}

impl<B: http_body::Body + Unpin> http_body::Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<B::Data>, B::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// Whom an accept loop admits and how it audits: the connection caps, the
/// header deadline, and the tenant and surface its refusals are audited
/// under.
pub(super) struct Gate<'a> {
    pub(super) connections: &'a Arc<Connections>,
    pub(super) header_timeout: Duration,
    pub(super) engine: &'a crate::engine::Engine,
    pub(super) tenant: &'a str,
    pub(super) surface: &'static str,
}

impl Gate<'_> {
    fn deny(&self, denial: Denial, client: &str) {
        self.engine
            .cadence()
            .deny(self.tenant, self.surface, denial, client);
    }
}

/// Accepts from `listener` for ever, handing each connection within
/// `serving`'s caps to `serve` with its slot (shedding the connection that
/// waited longest for its headers at the total cap, closing the newcomer
/// when none waits or its client is at its own cap), retrying failed
/// accepts after a back-off, and writing out coalesced audit denials every
/// window.
pub(super) async fn accept_loop(
    listener: tokio::net::TcpListener,
    gate: Gate<'_>,
    mut serve: impl FnMut(tokio::net::TcpStream, SocketAddr, Admitted),
) -> std::io::Result<()> {
    let mut backoff = ACCEPT_BACKOFF_MIN;
    let mut audit_sweep = tokio::time::interval(AUDIT_COALESCE_WINDOW);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = audit_sweep.tick() => {
                gate.engine.cadence().audit().flush_expired();
                continue;
            }
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => {
                backoff = ACCEPT_BACKOFF_MIN;
                accepted
            }
            Err(e) => {
                tracing::warn!(error = %e, wait_ms = backoff.as_millis() as u64, surface = gate.surface, "accept failed; retrying");
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(ACCEPT_BACKOFF_MAX);
                continue;
            }
        };
        let client = client_key(peer.ip());
        match gate.connections.admit(&client, gate.header_timeout) {
            Ok((admitted, shed)) => {
                if let Some(shed) = shed {
                    gate.deny(Denial::Guard("shed_waiting_for_headers"), &shed);
                }
                serve(stream, peer, admitted);
            }
            Err(Refused::ClientFull | Refused::AllBusy) => {
                gate.deny(Denial::Guard("too_many_connections"), &client);
                drop(stream);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv6_clients_are_counted_by_their_64_and_mapped_ipv4_as_ipv4() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        assert_eq!(client_key(a), client_key(b));
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_ne!(client_key(a), client_key(c));
        let mapped: IpAddr = "::ffff:192.0.2.7".parse().unwrap();
        assert_eq!(client_key(mapped), "192.0.2.7");
    }
}
