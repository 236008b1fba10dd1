//! `secrets`: sign with a key the host holds.
//!
//! Interface: `workbooks:engine/secrets@0.1.0`, served here in the host
//! over the [`keyring::Keyring`]. Invariant: no operation returns key bytes
//! (the interface has none that could), keys are looked up in the tenant
//! the host fixed for the store, and key material never reaches an error,
//! a log line or the audit log (only secret names do).

mod host;
pub mod keyring;

use crate::bindings::workbooks::engine::secrets;
use crate::broker::Cadence;
use keyring::Keyring;
use std::sync::Arc;
use wasmtime::component::{HasSelf, Linker};

/// The secrets one store may use; the default reaches nothing.
#[derive(Debug, Default)]
pub(crate) struct SecretsCtx {
    pub(crate) reach: Option<(Arc<Keyring>, String, Arc<Cadence>)>,
}

/// Links `secrets`.
pub(crate) fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut SecretsCtx,
) -> wasmtime::Result<()> {
    secrets::add_to_linker::<T, HasSelf<SecretsCtx>>(linker, get)
}
