//! The tls broker: serves the guest-facing `workbooks:engine/tls` interface
//! over the host's `workbooks:host/exchange` primitive, as the tls transport.
//!
//! It owns the shape (destination and request checks, in
//! `guests/transport_shape.rs`, shared with the other transports). The host
//! owns what must be trusted: the grant of the tls cap on every call, the
//! cadence, the SSRF floor, resolve-then-pin, TLS verification and the
//! reply and time caps, so a swapped broker cannot reach a transport, an
//! address or a size its guest was not granted.

wit_bindgen::generate!({
    path: ["../../wit", "../../wit/host"],
    world: "workbooks:host/tls-broker",
    generate_all,
});

use exports::workbooks::engine::tls::Guest;
use workbooks::engine::net_types::NetError;
use workbooks::host::exchange::{self as host, Transport};

include!("../../transport_shape.rs");

struct TlsBroker;

impl Guest for TlsBroker {
    fn request(host: String, port: u16, data: Vec<u8>) -> Result<Vec<u8>, NetError> {
        shaped(&host, port, &data)?;
        host::exchange(Transport::Tls, &host, port, &data)
    }
}

export!(TlsBroker);
