//! Serving a WASI 0.3 handler: a component exporting
//! `wasi:http/handler@0.3.0` (the `wasi:http/service` world).
//!
//! Each request gets a fresh store and instance, as at 0.2: the same
//! budget, fuel, revocation watch and response cap (the body the guest
//! streams is read through the store's event loop, capped, inside the
//! request's budget). The request's URI is given the `http` scheme and the
//! authority of its `Host` header, as an origin server sees it.

use super::{Server, plain};
use crate::egress::capped_http::{HttpError, read_capped};
use crate::limits::SERVE_MAX_RESPONSE_BYTES;
use crate::state::StoreState;
use bytes::Bytes;
use http_body_util::Full;
use wasmtime_wasi_http::p3::bindings::ServicePre;

/// Bytes of a failed handler's stderr written to the log.
const STDERR_LOGGED: usize = 2048;

/// What the event loop hands back: the head and the capped body, or the
/// guest's `error-code`.
type Answer = Result<(http::response::Parts, Result<Bytes, HttpError>), String>;

impl Server {
    /// Answers one request on a shared instance of a 0.3 handler.
    pub(super) async fn respond_shared(
        &self,
        shared: &super::shared::Shared,
        req: http::Request<hyper::body::Incoming>,
    ) -> Result<http::Response<Full<Bytes>>, http::Response<Full<Bytes>>> {
        use http_body_util::BodyExt;
        let req = with_origin(req)
            .map(|body| body.map_err(wasmtime_wasi_http::Error::from).boxed_unsync());
        let answered = tokio::select! {
            a = shared.handle((), req) => a,
            () = self.serving.until_revoked() => return Err(self.revoked_in_flight()),
        };
        let response = match answered {
            Ok(response) => response,
            // A revocation stops the instance too; whichever is seen first,
            // the answer is the revocation's.
            Err(_) if self.serving.revoked() => return Err(self.revoked_in_flight()),
            Err(e) if e.is::<wasmtime_wasi_http::handler::ExpirationError>() => {
                return Err(plain(504, "the handler ran out of time"));
            }
            Err(e) => {
                tracing::warn!(error = %e.root_cause(), "serve: a shared handler failed");
                return Err(plain(500, &format!("the handler {}", super::failure(&e))));
            }
        };
        self.whole(response).await
    }

    /// Answers one request with a fresh instance of a 0.3 handler.
    pub(super) async fn respond_03(
        &self,
        pre: &ServicePre<StoreState>,
        req: http::Request<hyper::body::Incoming>,
    ) -> Result<http::Response<Full<Bytes>>, http::Response<Full<Bytes>>> {
        let mut store = self.request_store()?;
        let service = pre
            .instantiate_async(&mut store)
            .await
            .map_err(super::internal)?;
        let req = with_origin(req);
        let (request, request_io) =
            wasmtime_wasi_http::p3::Request::from_http(store.data_mut().http().hooks, req);
        let answered = store.run_concurrent(async |acc| -> wasmtime::Result<Answer> {
            let response = match service.handle(acc, request).await? {
                Ok(response) => response,
                Err(code) => return Ok(Err(format!("{code:?}"))),
            };
            // The request body's I/O result goes with the response, as
            // wasmtime-wasi-http's own handler passes it: the guest learns
            // of a failed upload through its response's result.
            let response = acc.with(|store| {
                response.into_http_with_getter(store, request_io, StoreState::http)
            })?;
            let (parts, body) = response.into_parts();
            let body = http_body_util::BodyExt::map_err(body, |e| format!("{e:?}"));
            let body = read_capped(body, SERVE_MAX_RESPONSE_BYTES).await;
            Ok(Ok((parts, body)))
        });
        let answered = tokio::select! {
            a = answered => a,
            () = self.serving.until_revoked() => return Err(self.revoked_in_flight()),
        };
        let (parts, body) = match answered.and_then(|a| a) {
            Ok(Ok(answer)) => answer,
            Ok(Err(code)) => return Err(plain(500, &format!("the handler failed: {code}"))),
            Err(e) => {
                let why = super::failure(&e);
                // The guest's own account (a panic message) goes to the
                // operator's log, never to the client.
                let said = store.data().outputs.stderr.as_ref().map(|o| o.take());
                let said = said.unwrap_or_default();
                let said = String::from_utf8_lossy(&said[..said.len().min(STDERR_LOGGED)]);
                tracing::warn!(error = %e.root_cause(), stderr = %said.trim(), "serve: the handler {why}");
                return Err(plain(500, &format!("the handler {why}")));
            }
        };
        let body = body.map_err(|e| match e {
            HttpError::TooLarge(_) => plain(502, "response larger than the engine's cap"),
            e => plain(502, &format!("the handler's body failed: {e}")),
        })?;
        Ok(http::Response::from_parts(parts, Full::new(body)))
    }
}

/// The request with an absolute URI: scheme `http`, and the authority of
/// its `Host` header (`localhost` without one).
pub(super) fn with_origin<B>(req: http::Request<B>) -> http::Request<B> {
    let (mut parts, body) = req.into_parts();
    let host = parts
        .headers
        .get(http::header::HOST)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.parse::<http::uri::Authority>().ok())
        .unwrap_or_else(|| http::uri::Authority::from_static("localhost"));
    let mut uri = std::mem::take(&mut parts.uri).into_parts();
    uri.scheme = Some(http::uri::Scheme::HTTP);
    uri.authority = Some(host);
    if uri.path_and_query.is_none() {
        uri.path_and_query = Some(http::uri::PathAndQuery::from_static("/"));
    }
    parts.uri = http::Uri::from_parts(uri).unwrap_or_default();
    http::Request::from_parts(parts, body)
}

#[cfg(test)]
mod tests {
    use super::with_origin;

    #[test]
    fn a_request_gets_the_http_scheme_and_its_host_headers_authority() {
        let req = http::Request::builder()
            .uri("/echo?x=1")
            .header("host", "example.test:8080")
            .body(())
            .unwrap();
        assert_eq!(
            with_origin(req).uri().to_string(),
            "http://example.test:8080/echo?x=1"
        );
        let bare = http::Request::builder().uri("/").body(()).unwrap();
        assert_eq!(with_origin(bare).uri().to_string(), "http://localhost/");
    }
}
