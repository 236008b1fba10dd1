//! `session-info`: who a component runs as (id, tenant, profile, caps).
//!
//! Interface: `workbooks:engine/session-info@0.1.0`. Linked for every
//! component under every profile. Invariant: it reports only what the host
//! chose at dock time and never a host path (no working directory, no home).

mod host;

use crate::cap::bindings::workbooks::engine::session_info;
use crate::policy::{CapSet, Profile};
use wasmtime::component::{HasSelf, Linker};

/// What `session-info` reports for one store.
#[derive(Debug, Clone)]
pub(crate) struct SessionCtx {
    pub(crate) id: String,
    pub(crate) tenant: String,
    pub(crate) profile: Profile,
    pub(crate) caps: CapSet,
}

/// Links `session-info`, reading the context through `get`.
pub(crate) fn add_to_linker<T: 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut SessionCtx,
) -> wasmtime::Result<()> {
    session_info::add_to_linker::<T, HasSelf<SessionCtx>>(linker, get)
}
