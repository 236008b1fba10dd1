//! Inbound HTTP: the host listens and each request is handled by a fresh
//! instance of a component exporting `wasi:http/incoming-handler@0.2.x`
//! or `wasi:http/handler@0.3.0` ([`service`]).
//!
//! Threat: anyone who can reach the port drives guest code and holds host
//! resources. So every request gets a fresh store under the serving grant
//! (nothing survives between requests) with its own wall-clock budget and
//! fuel; requests are rate limited per client (an IPv4 address, or an IPv6
//! /64, since one host owns a whole /64); the tenant's revocation is
//! checked before the guest starts and watched while it runs (a revocation
//! stops requests already in flight); the response body is capped (a guest
//! that produces more gets a 502, never an unbounded buffer in the host).
//! Connections are bounded too (`accept.rs`): a cap in total and per client,
//! a deadline for a request's headers and for an idle keep-alive, and an
//! accept loop that backs off and keeps serving when accepting fails (out
//! of file descriptors, for one).

mod accept;
mod connections;
mod front;
mod service;
mod shared;
mod tcp;

use crate::artifact::Artifact;
use crate::cadence::{Denial, RateLimiter};
use crate::dock::{DockError, Docked};
use crate::egress::capped_http::{HttpError, read_capped};
use crate::engine::Engine;
use crate::limits::{
    COMMAND_FUEL, SERVE_HEADER_TIMEOUT, SERVE_MAX_CONNECTIONS, SERVE_MAX_CONNECTIONS_PER_CLIENT,
    SERVE_MAX_RESPONSE_BYTES,
};
use crate::policy::{CapSet, Grant, PolicyError};
use crate::state::{SessionOptions, StoreState};
use bytes::Bytes;
use http_body_util::Full;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use wasmtime_wasi_http::p2::bindings::ProxyPre;

pub use accept::client_key;
pub use front::{Front, FrontLimits};
pub use tcp::TcpServer;

/// How long a revocation may take to stop a request in flight.
const REVOCATION_POLL: Duration = Duration::from_millis(25);

/// How to serve a component.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The profile each request's instance runs under.
    pub profile: String,
    /// Caps narrower than the profile's.
    pub caps: Option<CapSet>,
    /// The tenant whose revocation, quotas and durable state apply.
    pub tenant: String,
    /// Requests one client may make per minute.
    pub per_client_per_minute: u64,
    /// Wall-clock budget of one request (the profile's when `None`).
    pub timeout: Option<Duration>,
    /// Fuel of one request ([`COMMAND_FUEL`] when `None`).
    pub fuel: Option<u64>,
    /// Connections open at once, from all clients.
    pub max_connections: usize,
    /// Connections open at once from one client.
    pub max_connections_per_client: usize,
    /// How long a client may take to send a request's headers, and how
    /// long an idle keep-alive connection stays open.
    pub header_timeout: Duration,
    /// The environment of each request's instance (exactly these pairs).
    pub env: Vec<(String, String)>,
    /// A fresh instance for every request even when the handler could
    /// serve several at once (a WASI 0.3 handler is shared by default).
    pub instance_per_request: bool,
    /// The oldest a shared instance gets before it is retired.
    pub shared_max_age: Duration,
    /// The stored grant's scopes each request runs under, judged as the
    /// grant is at each call; past its expiry or revocation every request
    /// is refused (403) and one in flight is cut off. `None`: unscoped.
    pub scope: Option<crate::grants::Scope>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            profile: "compute".into(),
            caps: None,
            tenant: "default".into(),
            per_client_per_minute: 600,
            timeout: None,
            fuel: None,
            max_connections: SERVE_MAX_CONNECTIONS,
            max_connections_per_client: SERVE_MAX_CONNECTIONS_PER_CLIENT,
            header_timeout: SERVE_HEADER_TIMEOUT,
            env: Vec::new(),
            instance_per_request: false,
            shared_max_age: crate::limits::SERVE_SHARED_MAX_AGE,
            scope: None,
        }
    }
}

/// Why serving could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The profile or caps were refused.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// The component could not be docked.
    #[error(transparent)]
    Dock(#[from] DockError),
    /// The environment was refused.
    #[error(transparent)]
    Env(#[from] crate::environ::EnvError),
    /// The component exports neither `wasi:http/incoming-handler@0.2.x`
    /// nor `wasi:http/handler@0.3.0`.
    #[error(
        "not an HTTP handler: the component exports neither wasi:http/incoming-handler@0.2 nor wasi:http/handler@0.3.0"
    )]
    NotAHandler,
    /// The component does not export `workbooks:engine/tcp-handler`.
    #[error("not a TCP service: the component does not export workbooks:engine/tcp-handler@0.1.0")]
    NotATcpHandler,
}

/// A component ready to handle requests.
#[derive(Clone)]
pub struct Server {
    serving: Serving,
    handler: Handler,
}

/// The handler a served component exports, at its WASI version.
#[derive(Clone)]
enum Handler {
    /// `wasi:http/incoming-handler@0.2.x`: a response out-parameter.
    Wasi02(ProxyPre<StoreState>),
    /// `wasi:http/handler@0.3.0`: an async `handle` returning the response.
    Wasi03(wasmtime_wasi_http::p3::bindings::ServicePre<StoreState>),
    /// The same, its instances shared by concurrent requests ([`shared`]).
    Shared(shared::Shared),
}

/// What every connection shares, served over HTTP or raw TCP: the docked
/// component, the options and budget, and the client and connection
/// bounds.
#[derive(Clone)]
struct Serving {
    engine: Engine,
    docked: Arc<Docked>,
    opts: ServeOptions,
    budget: Duration,
    clients: Arc<RateLimiter>,
    connections: Arc<connections::Connections>,
}

impl Serving {
    /// Docks `artifact` in `role` under the grant `opts` name.
    fn new(
        engine: &Engine,
        artifact: &Artifact,
        opts: ServeOptions,
        role: crate::dock::Role,
    ) -> Result<Self, ServeError> {
        let grant = match opts.caps {
            Some(caps) => Grant::narrowed(&opts.profile, caps)?,
            None => Grant::profile(&opts.profile),
        };
        crate::environ::check(&opts.env)?;
        let docked = engine.dock_on(artifact, &grant, role)?;
        Ok(Serving {
            engine: engine.clone(),
            budget: opts
                .timeout
                .unwrap_or_else(|| grant.profile.effective.timeout()),
            clients: Arc::new(RateLimiter::new(
                opts.per_client_per_minute,
                Duration::from_secs(60),
            )),
            connections: Arc::new(connections::Connections::new(
                opts.max_connections,
                opts.max_connections_per_client,
            )),
            docked,
            opts,
        })
    }

    /// Whether the serving tenant is revoked, or the stored grant it serves
    /// under has expired or been revoked.
    fn revoked(&self) -> bool {
        self.refusal().is_some()
    }

    /// Why no request may run now: the tenant's revocation, else the
    /// stored grant's refusal.
    fn refusal(&self) -> Option<(Denial, String)> {
        let tenant = &self.opts.tenant;
        if self.engine.cadence().revocations().is_revoked(tenant) {
            return Some((Denial::Revoked, "revoked".into()));
        }
        let refused = self.opts.scope.as_ref()?.now().err()?;
        Some((Denial::Guard(refused.reason()), refused.to_string()))
    }

    /// The 403 of a request refused by [`Serving::refusal`] (`when` says
    /// where: before it ran or in flight), audited.
    fn refused(&self, when: &str) -> Option<http::Response<Full<Bytes>>> {
        let (denial, why) = self.refusal()?;
        self.deny("serve", denial, when);
        Some(plain(403, &why))
    }

    /// Resolves once the serving tenant is revoked (or its grant refuses), checking every
    /// [`REVOCATION_POLL`] however busy the request is.
    async fn until_revoked(&self) {
        let mut tick = tokio::time::interval(REVOCATION_POLL);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        loop {
            tick.tick().await;
            if self.revoked() {
                return;
            }
        }
    }

    /// A fresh store for one request, with the request's budget and fuel.
    fn store(&self, id: &str) -> Result<wasmtime::Store<StoreState>, crate::SessionError> {
        self.store_with(id, crate::Output::Capture)
    }

    /// The same, its stdout and stderr going to `output`: a store that
    /// outlives one request (a shared instance) must not keep what every
    /// request wrote, nor be stopped when all of it together passes a cap.
    fn store_with(
        &self,
        id: &str,
        output: crate::Output,
    ) -> Result<wasmtime::Store<StoreState>, crate::SessionError> {
        let mut session = SessionOptions::new(id, self.opts.tenant.clone());
        session.timeout = Some(self.budget);
        session.fuel = Some(self.opts.fuel.unwrap_or(COMMAND_FUEL));
        session.env = self.opts.env.clone();
        session.scope = self.opts.scope.clone();
        session.stdout = output.clone();
        session.stderr = output;
        let (store, _) =
            self.engine
                .new_store(self.docked.flavor, self.docked.grant(), &session)?;
        Ok(store)
    }

    /// The accept loop's gate for this component's connections.
    fn gate(&self, surface: &'static str) -> accept::Gate<'_> {
        accept::Gate {
            connections: &self.connections,
            header_timeout: self.opts.header_timeout,
            engine: &self.engine,
            tenant: &self.opts.tenant,
            surface,
        }
    }

    /// Audits a denial against the serving tenant.
    fn deny(&self, broker: &'static str, denial: Denial, client: &str) {
        self.engine
            .cadence()
            .deny(&self.opts.tenant, broker, denial, client);
    }
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("opts", &self.serving.opts)
            .finish()
    }
}

fn plain(status: u16, text: &str) -> http::Response<Full<Bytes>> {
    let mut r = http::Response::new(Full::new(Bytes::from(format!("{text}\n"))));
    *r.status_mut() =
        http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR);
    r
}

/// The answer to a host-side failure (logged, never shown the client).
fn internal(e: wasmtime::Error) -> http::Response<Full<Bytes>> {
    tracing::warn!(error = %format!("{e:#}"), "serve: handler failed");
    plain(500, "the handler failed")
}

/// What stopped a handler that set no response, in a few words (never
/// the error's own text: a wasmtime defect's names the build machine's
/// paths).
fn failure(e: &wasmtime::Error) -> &'static str {
    if e.downcast_ref::<crate::limits::DeadlineExceeded>()
        .is_some()
    {
        return "ran out of time";
    }
    if crate::engine::run::is_runtime_defect(e) {
        return "reached a state the runtime does not support; its instance is ended";
    }
    // A shared instance's trap, or defect, ends every request it held;
    // what it was goes to the log when the instance is dropped.
    if e.is::<wasmtime_wasi_http::handler::TrapOrPanicError>() {
        return "trapped; its instance is ended";
    }
    match e.downcast_ref::<wasmtime::Trap>() {
        Some(wasmtime::Trap::OutOfFuel) => "ran out of fuel",
        Some(wasmtime::Trap::Interrupt) => "ran out of time",
        Some(_) => "trapped",
        None => "failed",
    }
}

impl Server {
    /// Docks `artifact` on `engine` for serving under `opts`.
    pub fn new(
        engine: &Engine,
        artifact: &Artifact,
        opts: ServeOptions,
    ) -> Result<Self, ServeError> {
        let serving = Serving::new(engine, artifact, opts, crate::dock::Role::HttpHandler)?;
        let pre = serving.docked.component().ok_or(ServeError::NotAHandler)?;
        let exports_03 = serving
            .docked
            .exports()
            .iter()
            .any(|e| e == "wasi:http/handler@0.3.0");
        let handler = if exports_03 {
            let service = wasmtime_wasi_http::p3::bindings::ServicePre::new(pre.clone())
                .map_err(|_| ServeError::NotAHandler)?;
            if serving.opts.instance_per_request {
                Handler::Wasi03(service)
            } else {
                Handler::Shared(shared::shared(serving.clone(), service))
            }
        } else {
            ProxyPre::new(pre.clone())
                .map(Handler::Wasi02)
                .map_err(|_| ServeError::NotAHandler)?
        };
        Ok(Server { serving, handler })
    }
}

impl Server {
    /// The handler interface served, with its WASI version.
    pub fn handler(&self) -> &'static str {
        match self.handler {
            Handler::Wasi02(_) => "wasi:http/incoming-handler@0.2",
            Handler::Wasi03(_) | Handler::Shared(_) => "wasi:http/handler@0.3.0",
        }
    }

    /// How requests meet instances, in words for a startup line.
    pub fn mode(&self) -> String {
        match self.handler {
            Handler::Wasi02(_) | Handler::Wasi03(_) => "a fresh instance per request".into(),
            Handler::Shared(_) => format!(
                "instances shared by up to {} requests at once",
                crate::limits::SERVE_SHARED_MAX_CONCURRENT
            ),
        }
    }

    /// Handles one request from `peer`.
    pub async fn handle(
        &self,
        req: http::Request<hyper::body::Incoming>,
        peer: SocketAddr,
    ) -> http::Response<Full<Bytes>> {
        let client = client_key(peer.ip());
        if !self.serving.clients.admit(&client) {
            self.serving.deny("serve", Denial::RateLimited, &client);
            return plain(429, "rate limited");
        }
        if let Some(refused) = self.serving.refused(&client) {
            return refused;
        }
        let answer = async {
            match &self.handler {
                Handler::Wasi02(proxy) => self.respond(proxy, req).await,
                Handler::Wasi03(service) => self.respond_03(service, req).await,
                Handler::Shared(shared) => self.respond_shared(shared, req).await,
            }
        };
        match tokio::time::timeout(self.serving.budget, answer).await {
            Err(_) => plain(504, "the handler ran out of time"),
            Ok(Err(response)) => response,
            Ok(Ok(response)) => response,
        }
    }

    /// A fresh store for one request, or the 500 its failure is.
    #[expect(
        clippy::result_large_err,
        reason = "the error is the response itself, returned at once as every respond path does"
    )]
    fn request_store(&self) -> Result<wasmtime::Store<StoreState>, http::Response<Full<Bytes>>> {
        self.serving
            .store("serve")
            .map_err(|e| internal(wasmtime::Error::msg(e.to_string())))
    }

    /// Answers one request with a fresh instance of a 0.2 handler.
    async fn respond(
        &self,
        proxy: &ProxyPre<StoreState>,
        req: http::Request<hyper::body::Incoming>,
    ) -> Result<http::Response<Full<Bytes>>, http::Response<Full<Bytes>>> {
        let mut store = self.request_store()?;
        let (sender, receiver) = tokio::sync::oneshot::channel();
        let incoming = store
            .data_mut()
            .http()
            .new_incoming_request(
                wasmtime_wasi_http::p2::bindings::http::types::Scheme::Http,
                req,
            )
            .map_err(internal)?;
        let outparam = store
            .data_mut()
            .http()
            .new_response_outparam(sender)
            .map_err(internal)?;
        let proxy = proxy.clone();
        // Aborted when the request is answered or abandoned.
        let task = wasmtime_wasi::runtime::spawn(async move {
            let proxy = proxy.instantiate_async(&mut store).await?;
            proxy
                .wasi_http_incoming_handler()
                .call_handle(&mut store, incoming, outparam)
                .await
        });
        // The task owns the store: when it ends without setting a response,
        // the sender goes with it and the receiver fails at once.
        let response = tokio::select! {
            r = receiver => r,
            () = self.serving.until_revoked() => return Err(self.revoked_in_flight()),
        };
        let response = match response {
            Ok(Ok(r)) => r,
            Ok(Err(code)) => return Err(plain(500, &format!("the handler failed: {code:?}"))),
            Err(_) => {
                let why = match task.await {
                    Err(e) => failure(&e),
                    Ok(()) => "set no response",
                };
                return Err(plain(500, &format!("the handler {why}")));
            }
        };
        self.whole(response).await
    }

    /// The response with its body read whole, within the response cap
    /// (502 past it) and while the tenant is not revoked (403).
    async fn whole<B>(
        &self,
        response: http::Response<B>,
    ) -> Result<http::Response<Full<Bytes>>, http::Response<Full<Bytes>>>
    where
        B: http_body::Body<Data = Bytes> + Unpin,
        B::Error: std::fmt::Display,
    {
        let (parts, body) = response.into_parts();
        let body = tokio::select! {
            b = read_capped(body, SERVE_MAX_RESPONSE_BYTES) => b.map_err(|e| match e {
                HttpError::TooLarge(_) => plain(502, "response larger than the engine's cap"),
                e => plain(502, &format!("the handler's body failed: {e}")),
            })?,
            () = self.serving.until_revoked() => return Err(self.revoked_in_flight()),
        };
        Ok(http::Response::from_parts(parts, Full::new(body)))
    }

    /// The answer to a request whose tenant was revoked while it ran.
    fn revoked_in_flight(&self) -> http::Response<Full<Bytes>> {
        self.serving.refused("in flight").unwrap_or_else(|| {
            self.serving.deny("serve", Denial::Revoked, "in flight");
            plain(403, "revoked")
        })
    }
}
