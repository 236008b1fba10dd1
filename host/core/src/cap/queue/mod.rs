//! `queue`: named FIFO queues per tenant.
//!
//! Three layers. The guest imports `workbooks:engine/queue@0.1.0`; the dock
//! composes it with the queue broker (`guests/queue-broker`), which serves
//! it over the host primitive `workbooks:host/queue@0.1.0` implemented here
//! over [`storage::TenantQueues`]. Invariant: the tenant is fixed by
//! the host when the store is built; every call passes the cadence; the
//! host validates queue names (they form storage identities) and caps
//! messages at 256 KiB, queues at 1000 messages, a tenant at 100 queues and
//! 64 MiB, and a wait at 30 s, whatever the broker asks.

mod host;
pub(crate) mod relay;
pub mod storage;

/// The host side of `workbooks:host/queue`, bound here: its types are its
/// own, and every call may wait.
pub(crate) mod bindings {
    wasmtime::component::bindgen!({
        path: ["../../wit", "../../wit/host"],
        inline: "package workbooks:queue-unit;
                 world unit { import workbooks:host/queue@0.1.0; }",
        imports: { default: async },
    });
}

use crate::cadence::Cadence;
use crate::cap::relay::{Backend, Relay};
use crate::cap::unit::{CapUnit, Holds, Opening};
use crate::storage::{StorageError, StorageSlot};
use bindings::workbooks::host::queue;
use std::sync::Arc;
use std::time::Duration;
use storage::TenantQueues;
use wasmtime::component::{HasSelf, Linker};
use wasmtime_wasi::WasiCtxBuilder;

/// Largest queue message. Queues carry work items, not bulk data.
pub const QUEUE_MAX_MESSAGE_BYTES: usize = 256 << 10;

/// Messages one queue may hold; a producer without a consumer stops here.
pub const QUEUE_MAX_DEPTH: u32 = 1000;

/// Non-empty queues one tenant may hold. Queue names are the guest's to
/// choose; this stops a tenant from making them without end.
pub const QUEUE_MAX_PER_TENANT: u32 = 100;

/// Message bytes one tenant's queues may hold in all.
pub const QUEUE_MAX_TENANT_BYTES: u64 = 64 << 20;

/// Longest a `pop-wait` may wait.
pub const QUEUE_MAX_WAIT: Duration = Duration::from_secs(30);

/// The queues one store may reach: here, or through the relay. The
/// default reaches nothing.
#[derive(Debug, Default)]
pub(crate) struct QueueCtx(pub(crate) Backend<Local>);

/// The queues of one tenant in this process, opened on first use.
#[derive(Debug, Default)]
pub(crate) struct Local {
    source: Option<(Arc<StorageSlot>, String, Arc<Cadence>)>,
    queues: Option<TenantQueues>,
    /// The grant's scopes: its queue prefixes and expiry, read at each
    /// call.
    scope: Option<crate::grants::Scope>,
}

impl QueueCtx {
    /// Reaches the queues of `tenant` (a validated name), or sends every
    /// call to `relay` (see [`crate::cap::relay`]).
    pub(crate) fn open(
        relay: Option<&Arc<dyn Relay>>,
        storage: &Arc<StorageSlot>,
        tenant: &str,
        cadence: &Arc<Cadence>,
        scope: Option<&crate::grants::Scope>,
    ) -> Self {
        QueueCtx(Backend::open(relay, || Local {
            source: Some((storage.clone(), tenant.to_string(), cadence.clone())),
            queues: None,
            scope: scope.cloned(),
        }))
    }
}

/// The `queue` unit: the host primitive the queue broker imports.
pub(crate) struct Queue;

impl CapUnit for Queue {
    const INTERFACE: &'static str = "workbooks:host/queue";
    const PER_TENANT: bool = true;
    type Ctx = QueueCtx;

    fn link<T: Holds<Self>>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
        queue::add_to_linker::<T, HasSelf<QueueCtx>>(linker, T::context)
    }

    fn open(o: &Opening<'_>, _: &mut WasiCtxBuilder) -> Result<QueueCtx, StorageError> {
        Ok(QueueCtx::open(
            o.relay, o.storage, o.tenant, o.cadence, o.scope,
        ))
    }
}
