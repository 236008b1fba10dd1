//! The deny broker of `wasi:sockets`: serves every sockets interface by
//! refusing every operation with `access-denied`.
//!
//! Toolchains import sockets whether or not a program uses them
//! (componentize-py always does). Under a profile without `net` such a
//! guest cannot dock; with the operator's `--stub wasi:sockets` the host
//! composes this component into it instead (wac plug at dock time), so the
//! guest's sockets imports are satisfied by code that can do nothing.
//!
//! Invariant: no socket, and no name resolution, ever exists. The only
//! constructors (`create-tcp-socket`, `create-udp-socket`,
//! `resolve-addresses`) return `access-denied`; the socket and stream
//! resources are uninhabited types, so no method of theirs can run. The
//! one value handed out, `instance-network`, is a token with no
//! operations. The component imports nothing of the host's network: only
//! the `wasi:io` types its signatures name.

wit_bindgen::generate!({
    path: ["../../wit", "../../wit/host"],
    world: "workbooks:host/deny-sockets",
    generate_all,
});

use exports::wasi::sockets::{
    instance_network, ip_name_lookup,
    network::{self, ErrorCode, IpAddress, IpAddressFamily, IpSocketAddress, NetworkBorrow},
    tcp::{self, ShutdownType},
    tcp_create_socket,
    udp::{self, IncomingDatagram, OutgoingDatagram},
    udp_create_socket,
};
use wasi::io::{
    poll::Pollable,
    streams::{InputStream, OutputStream},
};

struct DenySockets;

/// The network token `instance-network` hands out; it has no operations.
struct Network;

/// A resource that is never made: every constructor refuses.
enum Never {}

/// Every refusal.
const DENIED: ErrorCode = ErrorCode::AccessDenied;

impl network::Guest for DenySockets {
    type Network = Network;
}

impl network::GuestNetwork for Network {}

impl instance_network::Guest for DenySockets {
    fn instance_network() -> network::Network {
        network::Network::new(Network)
    }
}

impl ip_name_lookup::Guest for DenySockets {
    type ResolveAddressStream = Never;

    fn resolve_addresses(
        _network: NetworkBorrow<'_>,
        _name: String,
    ) -> Result<ip_name_lookup::ResolveAddressStream, ErrorCode> {
        Err(DENIED)
    }
}

impl ip_name_lookup::GuestResolveAddressStream for Never {
    fn resolve_next_address(&self) -> Result<Option<IpAddress>, ErrorCode> {
        match *self {}
    }
    fn subscribe(&self) -> Pollable {
        match *self {}
    }
}

impl tcp_create_socket::Guest for DenySockets {
    fn create_tcp_socket(_family: IpAddressFamily) -> Result<tcp::TcpSocket, ErrorCode> {
        Err(DENIED)
    }
}

impl udp_create_socket::Guest for DenySockets {
    fn create_udp_socket(_family: IpAddressFamily) -> Result<udp::UdpSocket, ErrorCode> {
        Err(DENIED)
    }
}

impl tcp::Guest for DenySockets {
    type TcpSocket = Never;
}

impl udp::Guest for DenySockets {
    type UdpSocket = Never;
    type IncomingDatagramStream = Never;
    type OutgoingDatagramStream = Never;
}

mod never;

export!(DenySockets);
