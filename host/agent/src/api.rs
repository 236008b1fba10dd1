//! The HTTP API of supervised agent runs (axum): start, read, stream,
//! list and cancel runs, and their review queues.
//!
//! | route | what |
//! |---|---|
//! | `POST /api/run` | start a run: 202 `{id, status: "running", exec}` |
//! | `GET /api/run/{id}` | `{id, status, steps, result, tools, events_org, …}` |
//! | `GET /api/run/{id}/stream` | WebSocket: `{type: "step", …}` frames, then `{type: "done", …}` (an `{type: "error", …}` frame first when a run ended elsewhere has a ledger that does not hold) |
//! | `GET /api/runs` | every run, newest first |
//! | `DELETE /api/run/{id}` | cancel a live run |
//! | `POST /api/run/{id}/review`, `POST /api/run/{id}/review/take` | its review queue |
//! | `GET /api/openapi.json` | the OpenAPI document |
//! | `/api/grants…` | the tenant's grants ([`grants_api`](crate::grants_api)); served only with a token |
//!
//! Threat: a caller reaching the API. Every route serves one tenant, set
//! by the operator; with a token, every route wants `Authorization:
//! Bearer <token>` (compared in constant time). Without a token the API
//! listens on loopback, and a web page the operator opens could still
//! reach it by rebinding its own name to 127.0.0.1 (DNS rebinding): the
//! browser then sends that page's name as `Host`. So without a token a
//! request is served only when its `Host` is `localhost`, `127.0.0.1` or
//! `[::1]` with the bound port; and on every route a browser `Origin`
//! that is not the server's own is refused. A run asks for at most the
//! operator's `max_steps`, and spends on the model at most the operator's
//! token budget per run and per tenant window (a start past the window's
//! budget is refused with 429). A caller asking for exec
//! gets it only when the operator allowed exec for this server
//! ([`ApiOptions::allow_exec`], `WB_AGENT_EXEC=1`); otherwise a plain run,
//! and the answer says which it got. The
//! response never carries a host path, and nothing it shows is read back
//! from a run's workdir, which the run's tools write to: `events_org` is
//! what the host rendered, and the steps of a run this host did not see end
//! are streamed only when its signed ledger holds.

use super::{AgentOptions, DEFAULT_SYSTEM, StepObserver};
use crate::sessions::{LiveEvent, LiveRunError, SessionRecord, Sessions, Subscription};
use crate::trace::{StepEvent, clip};
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Path, Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::{Value, json};

/// Characters of a tool's output in a live frame.
const FRAME_OUTPUT_CHARS: usize = 500;

/// How the API serves.
#[derive(Debug, Clone)]
pub struct ApiOptions {
    /// The tenant every run acts as.
    pub tenant: String,
    /// The bearer token every request must carry, if any.
    pub token: Option<String>,
    /// The address the API is served on: without a token, a request's
    /// `Host` must name its port through a loopback name.
    pub addr: std::net::SocketAddr,
    /// Model turns of a run that names none, and the most one may ask for.
    pub max_steps: u32,
    /// Whether a request's `exec: true` is honoured (the operator's
    /// choice: `WB_AGENT_EXEC=1` for `wbx serve-api`); never otherwise.
    pub allow_exec: bool,
    /// Tokens each run may spend on the model (`None`: no limit of its
    /// own).
    pub run_tokens: Option<u64>,
    /// Tokens the tenant's runs may spend together per window; a run is
    /// not started, and a live one is stopped, once it is spent.
    pub tenant_tokens: Option<(u64, std::time::Duration)>,
}

impl ApiOptions {
    /// Options for `tenant` on `addr`, with the engine's bounds: no token,
    /// no exec, [`AGENT_API_MAX_STEPS`](crate::limits::AGENT_API_MAX_STEPS)
    /// and the default token budgets.
    pub fn new(tenant: &str, addr: std::net::SocketAddr) -> Self {
        use crate::limits::{AGENT_API_TENANT_TOKENS, AGENT_API_TENANT_WINDOW, AGENT_TOKEN_BUDGET};
        Self {
            tenant: tenant.to_string(),
            token: None,
            addr,
            max_steps: crate::limits::AGENT_API_MAX_STEPS,
            allow_exec: false,
            run_tokens: Some(AGENT_TOKEN_BUDGET),
            tenant_tokens: Some((AGENT_API_TENANT_TOKENS, AGENT_API_TENANT_WINDOW)),
        }
    }
}

#[derive(Clone)]
struct Api {
    sessions: Sessions,
    opts: ApiOptions,
    meter: Option<std::sync::Arc<workbooks::llm::TokenMeter>>,
}

/// A run request.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RunRequest {
    task: String,
    system: Option<String>,
    model: Option<String>,
    max_steps: Option<u32>,
    agent: Option<String>,
    /// Honoured only when the operator allows exec (see the module docs).
    #[serde(default)]
    exec: bool,
    /// A grant of this tenant the run acts under (see [`crate::grant`]).
    grant: Option<String>,
}

fn error(status: StatusCode, message: impl std::fmt::Display) -> Response {
    (status, Json(json!({"error": message.to_string()}))).into_response()
}

fn live_run_error(e: LiveRunError) -> Response {
    let status = match &e {
        LiveRunError::NotFound(_) => StatusCode::NOT_FOUND,
        LiveRunError::TooMany => StatusCode::TOO_MANY_REQUESTS,
        LiveRunError::Start(_) => StatusCode::BAD_REQUEST,
        LiveRunError::Review(_) => StatusCode::CONFLICT,
        LiveRunError::Io { .. } => StatusCode::INTERNAL_SERVER_ERROR,
    };
    error(status, e)
}

/// A record as the API shows it (no host paths).
fn shown(r: &SessionRecord) -> Value {
    json!({
        "id": r.id,
        "status": r.status,
        "steps": r.steps,
        "result": r.result,
        "tools": r.tools,
        "agent": r.agent,
        "task": r.task,
        "started": r.started,
        "ended": r.ended,
        "events_org": r.events_org,
        "tokens": r.tokens,
        "turns": r.turns,
    })
}

fn step_frame(e: &StepEvent) -> Value {
    let mut e = e.clone();
    e.output = clip(&e.output, FRAME_OUTPUT_CHARS);
    let mut v = serde_json::to_value(e).unwrap_or_default();
    v["type"] = json!("step");
    v
}

fn done_frame(r: &SessionRecord) -> Value {
    json!({"type": "done", "id": r.id, "status": r.status, "steps": r.steps, "result": r.result})
}

/// The names a loopback server answers to without a token.
const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

/// Why a request's `Host` or `Origin` is refused, if it is: without a
/// token the `Host` must be a loopback name with the bound port; an
/// `Origin`, when a browser sends one, must be `http://` and that `Host`.
fn foreign(req: &Request, opts: &ApiOptions) -> Option<String> {
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok());
    if opts.token.is_none() {
        let Some(host) = host else {
            return Some("a request without a Host header is refused".into());
        };
        if !loopback_authority(host, opts.addr.port()) {
            return Some(format!(
                "Host `{}` is not this server: without a token it answers only to localhost, 127.0.0.1 or [::1] on port {}",
                clip(host, 80),
                opts.addr.port()
            ));
        }
    }
    let origin = req.headers().get(header::ORIGIN)?;
    let own = host.map(|h| format!("http://{h}"));
    match origin.to_str() {
        Ok(o) if own.as_deref() == Some(o) => None,
        _ => Some(format!(
            "Origin `{}` is not this server's own",
            clip(&String::from_utf8_lossy(origin.as_bytes()), 80)
        )),
    }
}

/// Whether `authority` names a loopback name with `port` (the port may be
/// left out only when it is 80, as a browser leaves it out).
fn loopback_authority(authority: &str, port: u16) -> bool {
    let Ok(parsed) = authority.parse::<axum::http::uri::Authority>() else {
        return false;
    };
    if authority.contains('@') {
        return false;
    }
    let name = parsed.host().to_ascii_lowercase();
    LOOPBACK_NAMES.contains(&name.as_str()) && parsed.port_u16().unwrap_or(80) == port
}

async fn gate(State(api): State<Api>, req: Request, next: Next) -> Response {
    if let Some(why) = foreign(&req, &api.opts) {
        return error(StatusCode::FORBIDDEN, why);
    }
    if let Some(token) = &api.opts.token {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if !given.is_some_and(|g| workbooks::identity::secret_eq(g.as_bytes(), token.as_bytes())) {
            return error(StatusCode::UNAUTHORIZED, "a bearer token is required");
        }
    }
    next.run(req).await
}

async fn start(State(api): State<Api>, Json(req): Json<RunRequest>) -> Response {
    if req.task.trim().is_empty() {
        return error(StatusCode::BAD_REQUEST, "task is empty");
    }
    if let Some(meter) = &api.meter
        && meter.remaining(&api.opts.tenant) == 0
    {
        return error(
            StatusCode::TOO_MANY_REQUESTS,
            meter
                .stop_line(&api.opts.tenant)
                .replacen("stopped: ", "", 1),
        );
    }
    // Another tenant's grant is no grant of this API's.
    if let Some(g) = &req.grant
        && api
            .sessions
            .engine()
            .grants()
            .get(g)
            .is_none_or(|r| r.tenant != api.opts.tenant)
    {
        let unknown = workbooks::grants::GrantUseError::Unknown(g.clone());
        return error(StatusCode::NOT_FOUND, unknown);
    }
    let opts = AgentOptions {
        system: req.system.unwrap_or_else(|| DEFAULT_SYSTEM.into()),
        task: req.task,
        model: req.model,
        max_steps: req
            .max_steps
            .map_or(api.opts.max_steps, |n| n.min(api.opts.max_steps)),
        agent: req.agent.unwrap_or_else(|| "agent".into()),
        tenant: api.opts.tenant.clone(),
        exec: req.exec && api.opts.allow_exec,
        on_step: None::<StepObserver>,
        token_budget: api.opts.run_tokens,
        tenant_meter: api.meter.clone(),
        grant: req.grant,
        ..AgentOptions::default()
    };
    match api.sessions.start(opts) {
        Ok(r) => (
            StatusCode::ACCEPTED,
            Json(
                json!({"id": r.id, "status": r.status, "exec": req.exec && api.opts.allow_exec, "exec_requested": req.exec}),
            ),
        )
            .into_response(),
        Err(e) => live_run_error(e),
    }
}

async fn read(State(api): State<Api>, Path(id): Path<String>) -> Response {
    match api.sessions.get(&api.opts.tenant, &id) {
        Some(r) => Json(shown(&r)).into_response(),
        None => live_run_error(LiveRunError::NotFound(id)),
    }
}

async fn list(State(api): State<Api>) -> Response {
    let runs: Vec<Value> = api
        .sessions
        .list(&api.opts.tenant)
        .iter()
        .map(|r| {
            json!({"id": r.id, "status": r.status, "steps": r.steps, "agent": r.agent,
                   "task": r.task, "started": r.started, "ended": r.ended})
        })
        .collect();
    Json(runs).into_response()
}

async fn cancel(State(api): State<Api>, Path(id): Path<String>) -> Response {
    match api.sessions.cancel(&api.opts.tenant, &id) {
        Ok(r) => Json(shown(&r)).into_response(),
        Err(e) => live_run_error(e),
    }
}

async fn stream(State(api): State<Api>, Path(id): Path<String>, ws: WebSocketUpgrade) -> Response {
    let Some(sub) = api.sessions.subscribe(&api.opts.tenant, &id) else {
        return live_run_error(LiveRunError::NotFound(id));
    };
    ws.on_upgrade(move |socket| follow(socket, sub))
}

async fn send(socket: &mut WebSocket, frame: Value) -> bool {
    socket
        .send(Message::Text(frame.to_string().into()))
        .await
        .is_ok()
}

/// The steps so far, then live ones, then the end.
async fn follow(mut socket: WebSocket, sub: Subscription) {
    match &sub.steps {
        Ok(steps) => {
            for e in steps {
                if !send(&mut socket, step_frame(e)).await {
                    return;
                }
            }
        }
        Err(why) => {
            if !send(&mut socket, json!({"type": "error", "error": why})).await {
                return;
            }
        }
    }
    let Some(mut rx) = sub.live else {
        let _ = send(&mut socket, done_frame(&sub.record)).await;
        let _ = socket.send(Message::Close(None)).await;
        return;
    };
    loop {
        match rx.recv().await {
            Ok(LiveEvent::Step(e)) => {
                if !send(&mut socket, step_frame(&e)).await {
                    return;
                }
            }
            Ok(LiveEvent::Done(r)) => {
                let _ = send(&mut socket, done_frame(&r)).await;
                break;
            }
            Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => continue,
            Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
        }
    }
    let _ = socket.send(Message::Close(None)).await;
}

async fn review_put(
    State(api): State<Api>,
    Path(id): Path<String>,
    Json(item): Json<Value>,
) -> Response {
    match api.sessions.review_put(&api.opts.tenant, &id, item) {
        Ok(n) => (StatusCode::CREATED, Json(json!({"queued": n}))).into_response(),
        Err(e) => live_run_error(e),
    }
}

async fn review_take(State(api): State<Api>, Path(id): Path<String>) -> Response {
    match api.sessions.review_take(&api.opts.tenant, &id) {
        Ok(Some(item)) => Json(item).into_response(),
        Ok(None) => StatusCode::NO_CONTENT.into_response(),
        Err(e) => live_run_error(e),
    }
}

async fn openapi() -> Json<Value> {
    Json(crate::openapi::document())
}

/// The API's routes over `sessions`.
pub fn router(sessions: Sessions, opts: ApiOptions) -> Router {
    let meter = opts
        .tenant_tokens
        .map(|(limit, window)| std::sync::Arc::new(workbooks::llm::TokenMeter::new(limit, window)));
    // The grant routes change what sessions reach: without a token (any
    // local process may call a loopback API) they are not served.
    let grants = opts
        .token
        .is_some()
        .then(|| crate::grants_api::routes(sessions.engine(), &opts.tenant));
    let api = Api {
        sessions,
        opts,
        meter,
    };
    // The gate is the last layer, so it stands before every route, the
    // grant routes included.
    Router::new()
        .route("/api/run", post(start))
        .route("/api/run/{id}", get(read).delete(cancel))
        .route("/api/run/{id}/stream", get(stream))
        .route("/api/run/{id}/review", post(review_put))
        .route("/api/run/{id}/review/take", post(review_take))
        .route("/api/runs", get(list))
        .route("/api/openapi.json", get(openapi))
        .with_state(api.clone())
        .merge(grants.unwrap_or_default())
        .layer(middleware::from_fn_with_state(api, gate))
}

/// Serves `router` on `listener` until `shutdown` completes, behind the
/// engine's front door: connections capped in total and per client, the
/// one waiting longest for its headers shed at the cap, deadlines for
/// headers and writes, refusals audited as `serve-api` for `tenant`.
/// Once `shutdown` completes nothing new is accepted and the requests in
/// flight are answered (for up to the front door's drain grace) before it
/// returns.
pub async fn serve(
    engine: &workbooks::Engine,
    tenant: &str,
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    use workbooks::serve::{Front, FrontLimits};
    let front = Front::new(engine, "serve-api", tenant, FrontLimits::default());
    let service = hyper_util::service::TowerToHyperService::new(router);
    front.run_until(listener, service, shutdown).await
}

#[cfg(test)]
mod tests {
    use super::loopback_authority;

    #[test]
    fn only_loopback_names_with_the_bound_port_are_this_server() {
        for ok in [
            "localhost:8787",
            "127.0.0.1:8787",
            "[::1]:8787",
            "LOCALHOST:8787",
        ] {
            assert!(loopback_authority(ok, 8787), "{ok}");
        }
        for bad in [
            "evil.example:8787",
            "localhost:8788",
            "localhost",
            "127.0.0.2:8787",
            "localhost.evil.example:8787",
            "user@localhost:8787",
            "",
        ] {
            assert!(!loopback_authority(bad, 8787), "{bad}");
        }
        assert!(loopback_authority("localhost", 80));
    }
}
