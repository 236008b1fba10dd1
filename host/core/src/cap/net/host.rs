use super::NetCtx;
use crate::cap::bindings::workbooks::engine::net::{Host, NetError, Request, Response};
use crate::cap::net_types::{not_granted, to_net_error};
use crate::egress::{ByteBudget, HttpLimits, HttpRequest, HttpResponse};
use crate::limits::{NET_FETCH_MANY_CONCURRENCY, NET_FETCH_MANY_MAX, NET_FETCH_MANY_MAX_BYTES};
use futures::StreamExt;
use std::sync::Arc;

fn response(r: HttpResponse) -> Response {
    Response {
        status: r.status,
        headers: r.headers,
        body: r.body.into(),
        url: r.url,
    }
}

impl NetCtx {
    async fn send_one(
        &self,
        req: HttpRequest,
        shared: Option<Arc<ByteBudget>>,
    ) -> Result<Response, NetError> {
        let access = self.access.as_ref().ok_or_else(|| not_granted("net"))?;
        let limits = HttpLimits {
            shared,
            ..access.limits()
        };
        access
            .fetch("net", req, &limits)
            .await
            .map(response)
            .map_err(to_net_error)
    }
}

impl Host for NetCtx {
    async fn send(&mut self, request: Request) -> Result<Response, NetError> {
        let method = http::Method::from_bytes(request.method.as_bytes())
            .map_err(|_| NetError::InvalidDestination(format!("bad method {}", request.method)))?;
        self.send_one(
            HttpRequest {
                method,
                url: request.url,
                headers: request.headers,
                body: request.body.into(),
            },
            None,
        )
        .await
    }

    async fn fetch(&mut self, url: String) -> Result<Response, NetError> {
        self.send_one(HttpRequest::get(url), None).await
    }

    async fn fetch_many(
        &mut self,
        urls: Vec<String>,
    ) -> Result<Vec<Result<Response, NetError>>, NetError> {
        if urls.len() > NET_FETCH_MANY_MAX {
            return Err(NetError::TooMany(NET_FETCH_MANY_MAX as u32));
        }
        let this = &*self;
        // What the whole call may hold, in flight and done.
        let shared = Arc::new(ByteBudget::new(NET_FETCH_MANY_MAX_BYTES));
        Ok(futures::stream::iter(urls)
            .map(|url| this.send_one(HttpRequest::get(url), Some(shared.clone())))
            .buffered(NET_FETCH_MANY_CONCURRENCY)
            .collect()
            .await)
    }
}
