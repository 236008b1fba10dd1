//! Sends `GET http://<argv[1]>/` through wasi:http/outgoing-handler and
//! prints `http: <status>` or `http: denied: <error-code>`; imports no
//! other network interface.
use test_programs::wasi::http::{outgoing_handler, types};

fn main() {
    let authority = test_programs::args()
        .first()
        .cloned()
        .unwrap_or_else(|| "127.0.0.1:80".into());
    let req = types::OutgoingRequest::new(types::Fields::new());
    let _ = req.set_scheme(Some(&types::Scheme::Http));
    let _ = req.set_authority(Some(&authority));
    let _ = req.set_path_with_query(Some("/"));
    let future = match outgoing_handler::handle(req, None) {
        Ok(future) => future,
        Err(e) => {
            println!("http: denied: {e:?}");
            return;
        }
    };
    future.subscribe().block();
    match future.get() {
        Some(Ok(Ok(resp))) => println!("http: {}", resp.status()),
        Some(Ok(Err(e))) => println!("http: failed: {e:?}"),
        _ => println!("http: no response"),
    }
}
