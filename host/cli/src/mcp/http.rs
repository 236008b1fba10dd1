//! `wbx mcp --listen ADDR`: the same tools over streamable HTTP behind the
//! engine's front door (connections capped in total and per client, the
//! one waiting longest for its headers shed at the cap, deadlines for
//! headers and writes), each request checked for the bearer token
//! (in constant time) before rmcp sees it; on loopback rmcp refuses a
//! `Host` that is not a loopback name (DNS rebinding).

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, combinators::BoxBody};
use rmcp::transport::streamable_http_server::{
    StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

/// Who may call: the bearer token, and whether it is required even on
/// loopback (the operator's tools).
pub(super) struct Gate {
    pub(super) token: Option<String>,
    pub(super) token_required: bool,
}

/// Serves `tools` on `addr` until Ctrl-C, then drains.
pub(super) async fn serve<H: rmcp::ServerHandler + Clone + Send + Sync + 'static>(
    tools: H,
    engine: &workbooks::Engine,
    tenant: &str,
    addr: SocketAddr,
    gate: Gate,
) -> Result<(), String> {
    let token = gate.token.filter(|t| !t.is_empty());
    if gate.token_required && token.is_none() {
        return Err(
            "--operator over HTTP changes grants: set a bearer token (--token or WB_MCP_TOKEN)"
                .into(),
        );
    }
    if !addr.ip().is_loopback() && token.is_none() {
        return Err(format!(
            "--listen {addr} is not loopback: set a bearer token (--token or WB_MCP_TOKEN)"
        ));
    }
    let mut config = StreamableHttpServerConfig::default();
    if !addr.ip().is_loopback() {
        // Off loopback the token is the gate; clients name this host as
        // they reach it.
        config = config.disable_allowed_hosts();
    }
    let front = workbooks::serve::Front::new(
        engine,
        "mcp",
        tenant,
        workbooks::serve::FrontLimits::default(),
    );
    let service = StreamableHttpService::new(
        move || Ok(tools.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("binding {addr}: {e}"))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    eprintln!("wbx: mcp: serving streamable HTTP on http://{bound}/mcp");
    let expected = token.map(|t| Arc::new(format!("Bearer {t}")));
    let handler = hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
        let service = service.clone();
        let expected = expected.clone();
        async move {
            let authorized = expected.as_deref().is_none_or(|want| {
                req.headers()
                    .get(http::header::AUTHORIZATION)
                    .is_some_and(|got| {
                        workbooks::identity::secret_eq(got.as_bytes(), want.as_bytes())
                    })
            });
            if !authorized {
                return Ok::<_, Infallible>(unauthorized());
            }
            if req.uri().path() != "/mcp" {
                return Ok(not_found());
            }
            Ok(service.handle(req).await)
        }
    });
    // Ctrl-C stops accepting and lets the requests in flight finish.
    let stop = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    front
        .run_until(listener, handler, stop)
        .await
        .map_err(|e| format!("serving {bound}: {e}"))
}

fn text_response(
    status: http::StatusCode,
    text: &'static str,
) -> http::Response<BoxBody<Bytes, Infallible>> {
    let mut resp = http::Response::new(Full::new(Bytes::from_static(text.as_bytes())).boxed());
    *resp.status_mut() = status;
    resp
}

fn unauthorized() -> http::Response<BoxBody<Bytes, Infallible>> {
    let mut resp = text_response(http::StatusCode::UNAUTHORIZED, "bearer token required\n");
    resp.headers_mut().insert(
        http::header::WWW_AUTHENTICATE,
        http::HeaderValue::from_static("Bearer"),
    );
    resp
}

fn not_found() -> http::Response<BoxBody<Bytes, Infallible>> {
    text_response(http::StatusCode::NOT_FOUND, "the MCP endpoint is /mcp\n")
}
