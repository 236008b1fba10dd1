//! The udp broker: serves the guest-facing `workbooks:engine/udp` interface
//! over the host's `workbooks:host/exchange` primitive, as the udp transport.
//!
//! It owns the shape (destination and request checks, in
//! `guests/transport_shape.rs`, shared with the other transports). The host
//! owns what must be trusted: the grant of the udp cap on every call, the
//! cadence, the SSRF floor, resolve-then-pin, TLS verification and the
//! reply and time caps, so a swapped broker cannot reach a transport, an
//! address or a size its guest was not granted.

wit_bindgen::generate!({
    path: ["../../wit", "../../wit/host"],
    world: "workbooks:host/udp-broker",
    generate_all,
});

use exports::workbooks::engine::udp::Guest;
use workbooks::engine::net_types::NetError;
use workbooks::host::exchange::{self as host, Transport};

include!("../../transport_shape.rs");

struct UdpBroker;

impl Guest for UdpBroker {
    fn request(host: String, port: u16, data: Vec<u8>) -> Result<Vec<u8>, NetError> {
        shaped(&host, port, &data)?;
        host::exchange(Transport::Udp, &host, port, &data)
    }
}

export!(UdpBroker);
