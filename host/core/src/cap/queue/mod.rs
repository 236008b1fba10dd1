//! `queue`: named FIFO queues per tenant.
//!
//! Three layers. The guest imports `workbooks:engine/queue@0.1.0`; the dock
//! composes it with the queue broker (`guests/queue-broker`), which serves
//! it over the host primitive `workbooks:host/queue@0.1.0` implemented here
//! over [`crate::store::TenantQueues`]. Invariant: the tenant is fixed by
//! the host when the store is built; every call passes the cadence; the
//! host validates queue names (they form storage identities) and caps
//! messages at 256 KiB, queues at 1000 messages, a tenant at 100 queues and
//! 64 MiB, and a wait at 30 s, whatever the broker asks.

mod host;

use crate::cadence::Cadence;
use crate::cap::bindings::workbooks::host::queue;
use crate::cap::relay::Relay;
use crate::store::{StorageSlot, TenantQueues};
use std::sync::Arc;
use wasmtime::component::{HasSelf, Linker};

/// The queues one store may reach, opened on first use; the default
/// reaches nothing.
#[derive(Debug, Default)]
pub(crate) struct QueueCtx {
    source: Option<(Arc<StorageSlot>, String, Arc<Cadence>)>,
    queues: Option<TenantQueues>,
    /// Where every call goes instead, in a relayed store.
    relay: Option<Arc<dyn Relay>>,
}

impl QueueCtx {
    /// Reaches the queues of `tenant` (a validated name).
    pub(crate) fn new(storage: Arc<StorageSlot>, tenant: String, cadence: Arc<Cadence>) -> Self {
        Self {
            source: Some((storage, tenant, cadence)),
            queues: None,
            relay: None,
        }
    }

    /// Sends every call to `relay` (see [`crate::cap::relay`]).
    pub(crate) fn relayed(relay: Arc<dyn Relay>) -> Self {
        Self {
            relay: Some(relay),
            ..Self::default()
        }
    }
}

/// Links the `queue` primitive the queue broker imports.
pub(crate) fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut QueueCtx,
) -> wasmtime::Result<()> {
    queue::add_to_linker::<T, HasSelf<QueueCtx>>(linker, get)
}
