//! `queue`: named FIFO queues per tenant.
//!
//! Interface: `workbooks:engine/queue@0.1.0`, served here in the host over
//! [`crate::store::TenantQueues`] (a pure storage primitive, so there is no
//! broker component in between). Invariant: the tenant is fixed by the host
//! when the store is built; every call passes the cadence; messages are
//! capped at 256 KiB and queues at 1000 messages.

mod host;

use crate::bindings::workbooks::engine::queue;
use crate::broker::Cadence;
use crate::store::{StorageSlot, TenantQueues};
use std::sync::Arc;
use wasmtime::component::{HasSelf, Linker};

/// The queues one store may reach, opened on first use; the default
/// reaches nothing.
#[derive(Debug, Default)]
pub(crate) struct QueueCtx {
    source: Option<(Arc<StorageSlot>, String, Arc<Cadence>)>,
    queues: Option<TenantQueues>,
}

impl QueueCtx {
    /// Reaches the queues of `tenant` (a validated name).
    pub(crate) fn new(storage: Arc<StorageSlot>, tenant: String, cadence: Arc<Cadence>) -> Self {
        Self {
            source: Some((storage, tenant, cadence)),
            queues: None,
        }
    }
}

/// Links `queue`.
pub(crate) fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut QueueCtx,
) -> wasmtime::Result<()> {
    queue::add_to_linker::<T, HasSelf<QueueCtx>>(linker, get)
}
