//! The net broker: serves the guest-facing `workbooks:engine/net`
//! interface over the host's `workbooks:host/egress` primitive.
//!
//! It owns the guest-facing shape: `fetch` is a GET through `send`; a
//! method that is not an HTTP token, a URL over 8 KiB or with a scheme
//! other than http or https, a header name or value that could split a request, and a
//! fetch-many over 64 URLs are refused here without a host call. The host
//! owns what must be trusted: the cadence, the SSRF floor on every hop,
//! resolve-then-pin, credentials on redirects, and the body, time and
//! fan-out caps (the fan-out runs concurrently in the host), so a swapped
//! broker cannot reach an address or a size its guest could not.

wit_bindgen::generate!({
    path: ["../../wit", "../../wit/host"],
    world: "workbooks:host/net-broker",
    generate_all,
});

use exports::workbooks::engine::net::{Guest, Request, Response};
use workbooks::engine::net_types::NetError;
use workbooks::host::egress;

/// URLs one fetch-many takes; the host holds the same limit.
const FETCH_MANY_MAX: usize = 64;
/// The longest URL.
const MAX_URL_BYTES: usize = 8 << 10;

struct NetBroker;

fn invalid(why: impl Into<String>) -> NetError {
    NetError::InvalidDestination(why.into())
}

fn checked_url(url: &str) -> Result<(), NetError> {
    if url.len() > MAX_URL_BYTES {
        return Err(invalid(format!("URL longer than {MAX_URL_BYTES} bytes")));
    }
    // A scheme other than http or https never leaves; anything else is
    // parsed and judged by the host.
    match url.split_once(':').map(|(s, _)| s.to_ascii_lowercase()) {
        Some(scheme) if scheme != "http" && scheme != "https" && is_scheme(&scheme) => {
            Err(NetError::Denied(format!(
                "scheme `{scheme}` is not allowed (only http and https)"
            )))
        }
        _ => Ok(()),
    }
}

fn is_scheme(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

fn checked(request: &Request) -> Result<(), NetError> {
    if !is_token(&request.method) {
        return Err(invalid(format!("bad method {}", request.method)));
    }
    checked_url(&request.url)?;
    for (name, value) in &request.headers {
        if !is_token(name) || value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
            return Err(invalid(format!("bad header {name}")));
        }
    }
    Ok(())
}

fn response(r: egress::Response) -> Response {
    Response {
        status: r.status,
        headers: r.headers,
        body: r.body,
        url: r.url,
    }
}

fn send(request: Request) -> Result<Response, NetError> {
    checked(&request)?;
    let sent = egress::send(&egress::Request {
        method: request.method,
        url: request.url,
        headers: request.headers,
        body: request.body,
    });
    sent.map(response)
}

impl Guest for NetBroker {
    fn send(request: Request) -> Result<Response, NetError> {
        send(request)
    }

    fn fetch(url: String) -> Result<Response, NetError> {
        send(Request {
            method: "GET".into(),
            url,
            headers: Vec::new(),
            body: Vec::new(),
        })
    }

    fn fetch_many(urls: Vec<String>) -> Result<Vec<Result<Response, NetError>>, NetError> {
        if urls.len() > FETCH_MANY_MAX {
            return Err(NetError::TooMany(FETCH_MANY_MAX as u32));
        }
        let results = egress::get_many(&urls)?;
        Ok(results.into_iter().map(|r| r.map(response)).collect())
    }
}

export!(NetBroker);
