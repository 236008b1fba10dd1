//! The front door of any HTTP surface an embedder or the CLI serves beside
//! components (the agent runs' API, MCP over streamable HTTP): the same
//! accept loop as a served component, around a hyper service the caller
//! brings.
//!
//! Threat: the same as `wbx serve`'s (see [`super::accept`]): clients that
//! open connections and trickle their headers, from many addresses, to
//! keep whole requests out; idle keep-alives; clients that stop reading;
//! accepts failing for want of descriptors. Invariant: connections are
//! capped in total and per client, at the total cap the one waiting
//! longest for its headers is shed (never one being served, a long
//! response included), headers and writes have deadlines, and a failed
//! accept never ends the loop. Refusals are audited under the surface's
//! name and the tenant given.
//!
//! ```no_run
//! # async fn serve(engine: workbooks::Engine) -> std::io::Result<()> {
//! use workbooks::serve::{Front, FrontLimits};
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8787").await?;
//! let hello = hyper::service::service_fn(|_req| async {
//!     Ok::<_, std::convert::Infallible>(http::Response::new(
//!         http_body_util::Full::new(bytes::Bytes::from_static(b"hello\n")),
//!     ))
//! });
//! let stop = async {
//!     let _ = tokio::signal::ctrl_c().await;
//! };
//! Front::new(&engine, "hello", "default", FrontLimits::default())
//!     .run_until(listener, hello, stop)
//!     .await
//! # }
//! ```

use super::accept::{Gate, Stopping, accept_loop, spawn_http};
use super::connections::Connections;
use crate::engine::Engine;
use crate::limits::{
    SERVE_DRAIN_GRACE, SERVE_HEADER_TIMEOUT, SERVE_MAX_CONNECTIONS,
    SERVE_MAX_CONNECTIONS_PER_CLIENT,
};
use std::sync::Arc;
use std::time::Duration;

/// The bounds of a front door; the defaults are `wbx serve`'s.
#[derive(Debug, Clone, Copy)]
pub struct FrontLimits {
    /// Connections open at once, from all clients.
    pub max_connections: usize,
    /// Connections open at once from one client (an IPv4 address or an
    /// IPv6 /64).
    pub max_connections_per_client: usize,
    /// How long a client may take to send a request's headers, how long
    /// an idle keep-alive stays open, and how long a write may wait for
    /// the client to read.
    pub header_timeout: Duration,
    /// How long [`Front::run_until`], told to stop, waits for the requests
    /// in flight to be answered before it returns.
    pub drain_grace: Duration,
}

impl Default for FrontLimits {
    fn default() -> Self {
        Self {
            max_connections: SERVE_MAX_CONNECTIONS,
            max_connections_per_client: SERVE_MAX_CONNECTIONS_PER_CLIENT,
            header_timeout: SERVE_HEADER_TIMEOUT,
            drain_grace: SERVE_DRAIN_GRACE,
        }
    }
}

/// A bounded accept loop for an HTTP/1 service.
pub struct Front {
    engine: Engine,
    surface: &'static str,
    tenant: String,
    limits: FrontLimits,
    connections: Arc<Connections>,
}

impl Front {
    /// A front door whose refusals are audited as `surface` for `tenant`.
    pub fn new(engine: &Engine, surface: &'static str, tenant: &str, limits: FrontLimits) -> Self {
        Self {
            engine: engine.clone(),
            surface,
            tenant: tenant.to_string(),
            connections: Arc::new(Connections::new(
                limits.max_connections,
                limits.max_connections_per_client,
            )),
            limits,
        }
    }

    /// Serves `service` on every connection admitted from `listener`
    /// (HTTP/1, upgrades allowed) until `shutdown` completes (or the task
    /// running it is dropped, which closes its connections), then drains: accepts
    /// nothing more, answers each request in flight and closes its
    /// connection after it (an idle one at once), closes what is still
    /// open when [`FrontLimits::drain_grace`] has passed, and returns once
    /// every connection is closed.
    pub async fn run_until<S, B>(
        self,
        listener: tokio::net::TcpListener,
        service: S,
        shutdown: impl std::future::Future<Output = ()>,
    ) -> std::io::Result<()>
    where
        S: hyper::service::Service<
                http::Request<hyper::body::Incoming>,
                Response = http::Response<B>,
            > + Clone
            + Send
            + 'static,
        S::Future: Send + 'static,
        S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
        B: http_body::Body + Unpin + Send + 'static,
        B::Data: Send,
        B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    {
        let gate = Gate {
            connections: &self.connections,
            header_timeout: self.limits.header_timeout,
            engine: &self.engine,
            tenant: &self.tenant,
            surface: self.surface,
        };
        let write_limit = self.limits.header_timeout;
        let (stop, stopping) = tokio::sync::watch::channel(Stopping::No);
        let mut accepting = Box::pin(accept_loop(
            listener,
            gate,
            move |stream, _peer, admitted| {
                spawn_http(
                    stream,
                    admitted,
                    write_limit,
                    service.clone(),
                    Some(stopping.clone()),
                );
            },
        ));
        tokio::select! {
            served = accepting.as_mut() => return served,
            () = shutdown => {}
        }
        // The listener closes with the loop; each connection holds a
        // receiver until it ends.
        drop(accepting);
        let _ = stop.send(Stopping::Drain);
        if tokio::time::timeout(self.limits.drain_grace, stop.closed())
            .await
            .is_err()
        {
            let _ = stop.send(Stopping::Close);
            stop.closed().await;
        }
        Ok(())
    }
}
