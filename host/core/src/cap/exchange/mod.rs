//! `tcp`, `udp`, `tls`: one-shot exchanges on raw transports.
//!
//! Three layers. The guest imports `workbooks:engine/tcp`, `udp` or `tls`
//! (`@0.1.0`); the dock composes it with that transport's broker component
//! (`guests/tcp-broker`, `udp-broker`, `tls-broker`), which checks the
//! destination's shape and calls the host primitive
//! `workbooks:host/exchange@0.1.0` implemented here. One primitive serves the
//! three caps; it is linked when any of them is granted.
//!
//! Invariant: the guest, and its broker, name a destination and hand bytes;
//! neither holds a socket or resolves a name. On every call the host checks
//! that the transport's own cap was granted (a tcp broker asking for udp is
//! refused), runs the cadence, resolves once, refuses internal addresses,
//! connects to the pinned address, verifies TLS peers for the host name,
//! and caps the reply at 1 MiB and the exchange at 10 s.

mod host;

use crate::cap::bindings::workbooks::host::exchange;
use crate::cap::unit::{CapUnit, Holds, Opening};
use crate::egress::NetAccess;
use crate::policy::CapSet;
use crate::storage::StorageError;
use wasmtime::component::{HasSelf, Linker};
use wasmtime_wasi::WasiCtxBuilder;

/// The reach of one store: the network access and which transports were
/// granted. The default reaches nothing.
#[derive(Debug, Default)]
pub(crate) struct ExchangeCtx {
    access: Option<NetAccess>,
    granted: CapSet,
}

impl ExchangeCtx {
    /// Reaches the network through `access` on the transports in `caps`.
    pub(crate) fn new(access: NetAccess, caps: CapSet) -> Self {
        Self {
            access: Some(access),
            granted: caps,
        }
    }
}

/// The `exchange` unit: the host primitive the tcp, udp and tls brokers
/// import.
pub(crate) struct Exchange;

impl CapUnit for Exchange {
    const INTERFACE: &'static str = "workbooks:host/exchange";
    const PER_TENANT: bool = false;
    type Ctx = ExchangeCtx;

    fn link<T: Holds<Self>>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
        exchange::add_to_linker::<T, HasSelf<ExchangeCtx>>(linker, T::context)
    }

    fn open(o: &Opening<'_>, _: &mut WasiCtxBuilder) -> Result<ExchangeCtx, StorageError> {
        Ok(ExchangeCtx::new(o.access.clone(), o.caps))
    }
}
