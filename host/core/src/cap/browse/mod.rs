//! `browse`: a page as readable text.
//!
//! Three layers, like kv. The guest imports `workbooks:engine/browse`; the
//! dock composes it with the browse broker component (`guests/browse`),
//! which fetches through the host primitive `workbooks:host/http` served
//! here and turns HTML into text inside the sandbox, so no untrusted markup
//! is parsed in the host. Invariant: the primitive applies the same
//! cadence, floor, pinning and redirect checks as `net`, and its own caps
//! (20 s, the engine's body cap) whatever the broker asks for.

mod host;

use crate::cap::bindings::workbooks::host::http;
use crate::cap::unit::{CapUnit, Holds, Opening};
use crate::egress::NetAccess;
use crate::storage::StorageError;
use wasmtime::component::{HasSelf, Linker};
use wasmtime_wasi::WasiCtxBuilder;

/// The reach of one store; the default reaches nothing.
#[derive(Debug, Default)]
pub(crate) struct BrowseCtx {
    pub(crate) access: Option<NetAccess>,
}

/// The `browse` unit: the HTTP primitive the browse broker imports.
pub(crate) struct Browse;

impl CapUnit for Browse {
    const INTERFACE: &'static str = "workbooks:host/http";
    const PER_TENANT: bool = false;
    type Ctx = BrowseCtx;

    fn link<T: Holds<Self>>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
        http::add_to_linker::<T, HasSelf<BrowseCtx>>(linker, T::context)
    }

    fn open(o: &Opening<'_>, _: &mut WasiCtxBuilder) -> Result<BrowseCtx, StorageError> {
        Ok(BrowseCtx {
            access: Some(o.access.clone()),
        })
    }
}
