//! Inbound raw TCP (`wbx serve --tcp`): the host listens, and each
//! connection's request bytes are handled by a fresh instance of a
//! component exporting `workbooks:engine/tcp-handler`, whose reply is
//! written back before the connection closes.
//!
//! Threat: as for HTTP, anyone who can reach the port drives guest code
//! and holds host resources. So every connection passes the accept caps
//! (in total and per client) and the per-client rate before a byte is
//! read; the request is read up to [`SERVE_TCP_MAX_REQUEST_BYTES`] within
//! the header timeout (a client that sends more, or too slowly, is closed
//! without reaching the guest); each request gets a fresh store with its
//! own budget and fuel; the serving tenant's revocation is checked before
//! the guest starts and watched while it runs (a revocation stops a
//! request in flight); a reply over [`SERVE_MAX_RESPONSE_BYTES`] is never
//! sent, and a client that stops reading is dropped after the header
//! timeout. Every refusal is audited against the serving tenant.

use super::accept::{accept_loop, client_key};
use super::connections::Admitted;
use super::{ServeError, ServeOptions, Serving};
use crate::artifact::Artifact;
use crate::cadence::Denial;
use crate::cap::bindings::exports::workbooks::engine::tcp_handler::GuestIndices;
use crate::engine::Engine;
use crate::limits::{SERVE_MAX_RESPONSE_BYTES, SERVE_TCP_MAX_REQUEST_BYTES};
use crate::state::StoreState;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use wasmtime::component::InstancePre;

/// A TCP service ready to handle connections.
#[derive(Clone)]
pub struct TcpServer {
    serving: Serving,
    pre: InstancePre<StoreState>,
    handler: Arc<GuestIndices>,
}

impl std::fmt::Debug for TcpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpServer")
            .field("opts", &self.serving.opts)
            .finish()
    }
}

impl TcpServer {
    /// Docks `artifact` on `engine` as a raw-TCP service under `opts`.
    pub fn new(
        engine: &Engine,
        artifact: &Artifact,
        opts: ServeOptions,
    ) -> Result<Self, ServeError> {
        let serving = Serving::new(engine, artifact, opts, crate::dock::Role::Call)?;
        let pre = serving
            .docked
            .component()
            .ok_or(ServeError::NotATcpHandler)?
            .clone();
        let handler = GuestIndices::new(&pre).map_err(|_| ServeError::NotATcpHandler)?;
        Ok(TcpServer {
            serving,
            pre,
            handler: Arc::new(handler),
        })
    }
}

/// Why a connection got no reply, as audited.
enum Refusal {
    Denied(Denial),
    Failed(String),
}

impl TcpServer {
    /// Serves connections from `listener` until the task running it is
    /// dropped.
    pub async fn run(self, listener: tokio::net::TcpListener) -> std::io::Result<()> {
        let serving = self.serving.clone();
        accept_loop(
            listener,
            serving.gate("serve"),
            move |stream, peer, admitted| {
                let server = self.clone();
                tokio::spawn(async move {
                    let slot = admitted.slot();
                    tokio::select! {
                        () = server.connection(stream, peer, &admitted) => {}
                        () = slot.shed() => {}
                    }
                    drop(admitted);
                });
            },
        )
        .await
    }

    /// Handles one connection from `peer`: at most one request.
    async fn connection(
        &self,
        mut stream: tokio::net::TcpStream,
        peer: SocketAddr,
        admitted: &Admitted,
    ) {
        let client = client_key(peer.ip());
        let outcome = self.answer(&mut stream, &client, admitted).await;
        match outcome {
            Ok(reply) => {
                let limit = self.serving.opts.header_timeout;
                let written = tokio::time::timeout(limit, stream.write_all(&reply)).await;
                if !matches!(written, Ok(Ok(()))) {
                    self.serving
                        .deny("serve-tcp", Denial::Guard("slow_reader"), &client);
                }
            }
            Err(Refusal::Denied(d)) => {
                self.serving.deny("serve-tcp", d, &client);
            }
            Err(Refusal::Failed(why)) => tracing::warn!(client, why, "serve --tcp: no reply"),
        }
        let _ = stream.shutdown().await;
    }

    async fn answer(
        &self,
        stream: &mut tokio::net::TcpStream,
        client: &str,
        admitted: &Admitted,
    ) -> Result<Vec<u8>, Refusal> {
        if !self.serving.clients.admit(client) {
            return Err(Refusal::Denied(Denial::RateLimited));
        }
        let request = self.read_request(stream, admitted.header_timeout()).await?;
        admitted.slot().busy();
        if self.serving.revoked() {
            return Err(Refusal::Denied(Denial::Revoked));
        }
        let reply = tokio::select! {
            r = tokio::time::timeout(self.serving.budget, self.call(request)) => r,
            () = self.serving.until_revoked() => {
                return Err(Refusal::Denied(Denial::Revoked));
            }
        };
        let reply = match reply {
            Err(_) => return Err(Refusal::Failed("the handler ran out of time".into())),
            Ok(Err(e)) => return Err(Refusal::Failed(format!("the handler failed: {e:#}"))),
            Ok(Ok(reply)) => reply,
        };
        if reply.len() > SERVE_MAX_RESPONSE_BYTES {
            return Err(Refusal::Denied(Denial::Guard("response_too_large")));
        }
        Ok(reply)
    }

    /// The bytes the client sends before closing its sending half, within
    /// the cap and `timeout` (the connection's header timeout).
    async fn read_request(
        &self,
        stream: &mut tokio::net::TcpStream,
        timeout: std::time::Duration,
    ) -> Result<Vec<u8>, Refusal> {
        let mut request = Vec::new();
        let cap = SERVE_TCP_MAX_REQUEST_BYTES as u64 + 1;
        let mut limited = (&mut *stream).take(cap);
        let read = limited.read_to_end(&mut request);
        match tokio::time::timeout(timeout, read).await {
            Err(_) => Err(Refusal::Denied(Denial::Guard("request_timeout"))),
            Ok(Err(e)) => Err(Refusal::Failed(format!("reading the request: {e}"))),
            Ok(Ok(_)) if request.len() > SERVE_TCP_MAX_REQUEST_BYTES => {
                Err(Refusal::Denied(Denial::Guard("request_too_large")))
            }
            Ok(Ok(_)) => Ok(request),
        }
    }

    /// One fresh instance handles `request`.
    async fn call(&self, request: Vec<u8>) -> wasmtime::Result<Vec<u8>> {
        let mut store = self
            .serving
            .store("serve-tcp")
            .map_err(|e| wasmtime::Error::msg(e.to_string()))?;
        let instance = self.pre.instantiate_async(&mut store).await?;
        let handler = self.handler.load(&mut store, &instance)?;
        handler.call_handle(&mut store, &request).await
    }
}
