//! `udp`: one-shot UDP (one datagram out, one back) through the SSRF floor.
//!
//! Interface: `workbooks:engine/udp@0.1.0`, served here in the host over
//! [`crate::broker::oneshot`]. Invariant: the guest names a destination and
//! hands bytes; it never holds a socket or resolves a name. The host
//! resolves once, refuses internal addresses, connects to the pinned
//! address, caps the reply at 1 MiB and the exchange at 10 s, under the
//! cadence (revocation, rate limit, audited denials).

mod host;

use crate::bindings::workbooks::engine::udp;
use crate::broker::NetAccess;
use wasmtime::component::{HasSelf, Linker};

/// The reach of one store; the default reaches nothing.
#[derive(Debug, Default)]
pub(crate) struct UdpCtx {
    pub(crate) access: Option<NetAccess>,
}

/// Links `udp`.
pub(crate) fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut UdpCtx,
) -> wasmtime::Result<()> {
    udp::add_to_linker::<T, HasSelf<UdpCtx>>(linker, get)
}
