//! `tcp`: one-shot raw TCP through the SSRF floor.
//!
//! Interface: `workbooks:engine/tcp@0.1.0`, served here in the host over
//! [`crate::broker::oneshot`]. Invariant: the guest names a destination and
//! hands bytes; it never holds a socket or resolves a name. The host
//! resolves once, refuses internal addresses, connects to the pinned
//! address, caps the reply at 1 MiB and the exchange at 10 s, under the
//! cadence (revocation, rate limit, audited denials).

mod host;

use crate::bindings::workbooks::engine::tcp;
use crate::broker::NetAccess;
use wasmtime::component::{HasSelf, Linker};

/// The reach of one store; the default reaches nothing.
#[derive(Debug, Default)]
pub(crate) struct TcpCtx {
    pub(crate) access: Option<NetAccess>,
}

/// Links `tcp`.
pub(crate) fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut TcpCtx,
) -> wasmtime::Result<()> {
    tcp::add_to_linker::<T, HasSelf<TcpCtx>>(linker, get)
}
