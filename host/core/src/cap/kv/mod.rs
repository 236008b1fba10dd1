//! `kv`: durable per-tenant keys.
//!
//! Three layers. The guest imports `workbooks:engine/kv@0.1.0`; the dock
//! composes it with the kv broker component (`guests/kv-broker`), which
//! serves that interface over the host primitive
//! `workbooks:host/kv@0.1.0` implemented here. Invariant: the tenant is
//! fixed by the host when the store is built; no argument of any call can
//! name another tenant. The hard limits (value size, key count, key length)
//! are enforced here, below any broker, so a swapped broker cannot widen
//! them. Every call passes the cadence (revocation, rate limit) first.

mod host;

use crate::cadence::Cadence;
use crate::cap::bindings::workbooks::host::kv;
use crate::cap::relay::Relay;
use crate::store::{StorageSlot, TenantKv};
use std::sync::Arc;
use wasmtime::component::{HasSelf, Linker};

/// The tenant keys one store may reach, opened on first use; the default
/// reaches nothing.
#[derive(Debug, Default)]
pub(crate) struct KvCtx {
    source: Option<(Arc<StorageSlot>, String, Arc<Cadence>)>,
    tenant: Option<TenantKv>,
    /// Where every call goes instead, in a relayed store.
    relay: Option<Arc<dyn Relay>>,
}

impl KvCtx {
    /// Reaches the keys of `tenant` (a validated name).
    pub(crate) fn new(storage: Arc<StorageSlot>, tenant: String, cadence: Arc<Cadence>) -> Self {
        Self {
            source: Some((storage, tenant, cadence)),
            tenant: None,
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

/// Links the `kv` primitive the kv broker imports.
pub(crate) fn add_to_linker<T: 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut KvCtx,
) -> wasmtime::Result<()> {
    kv::add_to_linker::<T, HasSelf<KvCtx>>(linker, get)
}
