//! The WASI 0.3 http client: `wasi03_http_get HOST:PORT PATH` sends a GET
//! over plain http and prints the status and body, or the error code.

use test_programs_03::{args, out};
use wasip3::exports::cli::run::Guest;
use wasip3::http::client::send;
use wasip3::http::types::{Fields, Request, Response, Scheme};
use wasip3::wit_bindgen::StreamResult;
use wasip3::wit_future;

struct Probe;

wasip3::cli::command::export!(Probe);

async fn body_of(response: Response) -> Vec<u8> {
    let (_done_tx, done_rx) = wit_future::new(|| Ok(()));
    let (mut body, _trailers) = Response::consume_body(response, done_rx);
    let mut all = Vec::new();
    while let (StreamResult::Complete(_), bytes) = body.read(Vec::with_capacity(8192)).await {
        all.extend(bytes);
    }
    all
}

impl Guest for Probe {
    async fn run() -> Result<(), ()> {
        let args = args();
        let (Some(authority), Some(path)) = (args.first(), args.get(1)) else {
            out(b"usage: wasi03_http_get HOST:PORT PATH\n").await;
            return Err(());
        };
        let (_trailers_tx, trailers_rx) = wit_future::new(|| Ok(None));
        let (request, _sent) = Request::new(Fields::new(), None, trailers_rx, None);
        let set = request.set_scheme(Some(&Scheme::Http)).is_ok()
            && request.set_authority(Some(authority)).is_ok()
            && request.set_path_with_query(Some(path)).is_ok();
        if !set {
            out(b"bad request\n").await;
            return Err(());
        }
        let report = match send(request).await {
            Ok(response) => {
                let status = response.get_status_code();
                let body = body_of(response).await;
                format!("status {status} {}\n", String::from_utf8_lossy(&body))
            }
            Err(code) => format!("error {code:?}\n"),
        };
        out(report.as_bytes()).await;
        Ok(())
    }
}

fn main() {
    unreachable!("a WASI 0.3 command runs through wasi:cli/run@0.3.0");
}
