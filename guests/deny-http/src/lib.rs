//! The deny broker of `wasi:http`: serves `outgoing-handler` by refusing
//! every request with `HTTP-request-denied`.
//!
//! JavaScript toolchains import outgoing HTTP whether or not a program
//! fetches anything (componentize-js does by default). Under a profile
//! without `net` such a guest cannot dock; with the operator's
//! `--stub wasi:http` the host composes this component into it instead, so
//! the guest's `outgoing-handler` import is satisfied by code that sends
//! nothing.
//!
//! Invariant: no request leaves. `handle` drops the request it is given
//! and returns the refusal; the component imports only the
//! `wasi:http/types` values (data, linked by the host without `net`) and
//! has no other way out.

wit_bindgen::generate!({
    path: ["../../wit", "../../wit/host"],
    world: "workbooks:host/deny-http",
    generate_all,
});

use exports::wasi::http::outgoing_handler::Guest;
use wasi::http::types::{ErrorCode, FutureIncomingResponse, OutgoingRequest, RequestOptions};

struct DenyHttp;

impl Guest for DenyHttp {
    fn handle(
        request: OutgoingRequest,
        options: Option<RequestOptions>,
    ) -> Result<FutureIncomingResponse, ErrorCode> {
        drop((request, options));
        Err(ErrorCode::HttpRequestDenied)
    }
}

export!(DenyHttp);
