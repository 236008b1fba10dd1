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
pub(crate) mod relay;
pub mod storage;

/// The host side of `workbooks:host/kv`, bound here: its types are its own.
pub(crate) mod bindings {
    wasmtime::component::bindgen!({
        path: ["../../wit", "../../wit/host"],
        inline: "package workbooks:kv-unit;
                 world unit { import workbooks:host/kv@0.1.0; }",
    });
}

use crate::cadence::Cadence;
use crate::cap::relay::{Backend, Relay};
use crate::cap::unit::{CapUnit, Holds, Opening};
use crate::storage::{StorageError, StorageSlot};
use bindings::workbooks::host::kv;
use std::sync::Arc;
use storage::TenantKv;
use wasmtime::component::{HasSelf, Linker};
use wasmtime_wasi::WasiCtxBuilder;

/// Largest kv value. Stops one tenant from filling the disk in a few calls.
pub const KV_MAX_VALUE_BYTES: usize = 1 << 20;

/// Keys one tenant may hold. Bounds a tenant's footprint and every listing.
pub const KV_MAX_KEYS_PER_TENANT: u32 = 10_000;

/// Longest kv key. Keys are index entries; this keeps them small.
pub const KV_MAX_KEY_BYTES: usize = 512;

/// The tenant keys one store may reach: here, or through the relay. The
/// default reaches nothing.
#[derive(Debug, Default)]
pub(crate) struct KvCtx(pub(crate) Backend<Local>);

/// The keys of one tenant in this process, opened on first use.
#[derive(Debug, Default)]
pub(crate) struct Local {
    source: Option<(Arc<StorageSlot>, String, Arc<Cadence>)>,
    tenant: Option<TenantKv>,
    /// The grant's scopes: its key prefixes and expiry, read at each call.
    scope: Option<crate::grants::Scope>,
}

impl KvCtx {
    /// Reaches the keys of `tenant` (a validated name) that `scope` allows,
    /// or sends every call to `relay` (see [`crate::cap::relay`]).
    pub(crate) fn open(
        relay: Option<&Arc<dyn Relay>>,
        storage: &Arc<StorageSlot>,
        tenant: &str,
        cadence: &Arc<Cadence>,
        scope: Option<&crate::grants::Scope>,
    ) -> Self {
        KvCtx(Backend::open(relay, || Local {
            source: Some((storage.clone(), tenant.to_string(), cadence.clone())),
            tenant: None,
            scope: scope.cloned(),
        }))
    }
}

/// The `kv` unit: the host primitive the kv broker imports.
pub(crate) struct Kv;

impl CapUnit for Kv {
    const INTERFACE: &'static str = "workbooks:host/kv";
    const PER_TENANT: bool = true;
    type Ctx = KvCtx;

    fn link<T: Holds<Self>>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
        kv::add_to_linker::<T, HasSelf<KvCtx>>(linker, T::context)
    }

    fn open(o: &Opening<'_>, _: &mut WasiCtxBuilder) -> Result<KvCtx, StorageError> {
        Ok(KvCtx::open(
            o.relay, o.storage, o.tenant, o.cadence, o.scope,
        ))
    }
}
