//! A WASI 0.3 HTTP handler (`wasi:http/service@0.3.0`): `handle` is an
//! async export that reads the request body as a stream and returns a
//! response whose body a spawned task streams out after it returns.

use wasip3::exports::http::handler::Guest;
use wasip3::http::types::{ErrorCode, Fields, Method, Request, Response};
use wasip3::wit_bindgen::StreamResult;
use wasip3::{wit_future, wit_stream};

struct Echo;

wasip3::http::service::export!(Echo);

impl Guest for Echo {
    async fn handle(request: Request) -> Result<Response, ErrorCode> {
        let method = name(&request.get_method());
        let path = request.get_path_with_query().unwrap_or_default();
        // Kept until the body is read: resolving it says the body was handled.
        let (_read, body_done) = wit_future::new(|| Ok(()));
        let (mut body, _trailers) = Request::consume_body(request, body_done);
        let mut received = Vec::new();
        while let (StreamResult::Complete(_), bytes) = body.read(Vec::with_capacity(4096)).await {
            received.extend(bytes);
        }
        let text = format!("{method} {path}: {}\n", String::from_utf8_lossy(&received));
        let (mut tx, rx) = wit_stream::new::<u8>();
        // Dropped at once: no trailers.
        let (_, no_trailers) = wit_future::new(|| Ok(None));
        let (response, _sent) = Response::new(Fields::new(), Some(rx), no_trailers);
        wasip3::spawn_local(async move {
            tx.write_all(text.into_bytes()).await;
        });
        Ok(response)
    }
}

/// A method as it goes on the wire.
fn name(method: &Method) -> String {
    match method {
        Method::Get => "GET".into(),
        Method::Head => "HEAD".into(),
        Method::Post => "POST".into(),
        Method::Put => "PUT".into(),
        Method::Delete => "DELETE".into(),
        Method::Connect => "CONNECT".into(),
        Method::Options => "OPTIONS".into(),
        Method::Trace => "TRACE".into(),
        Method::Patch => "PATCH".into(),
        Method::Other(other) => other.clone(),
    }
}

fn main() {
    unreachable!("called through wasi:http/handler@0.3.0");
}
