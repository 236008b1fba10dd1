//! Imports wasi:http/outgoing-handler and sends a request with no
//! authority (refused before any connection).
use test_programs::wasi::http::{outgoing_handler, types};

fn main() {
    let req = types::OutgoingRequest::new(types::Fields::new());
    let _ = outgoing_handler::handle(req, None);
    println!("http answers");
}
