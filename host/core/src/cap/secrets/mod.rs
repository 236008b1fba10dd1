//! `secrets`: sign with a key the host holds.
//!
//! Three layers. The guest imports `workbooks:engine/secrets@0.1.0`; the
//! dock composes it with the secrets broker (`guests/secrets-broker`),
//! which shapes names and data and calls the host primitive
//! `workbooks:host/secrets@0.1.0` implemented here over the
//! [`keyring::Keyring`]. Invariant: no operation returns private key bytes
//! (neither interface has one that could), keys are looked up in the
//! tenant the host fixed for the store, the data cap holds whatever the
//! broker asks, and key material never reaches an error, a log line or the
//! audit log (only secret names do).

pub(crate) mod egress;
mod host;
pub mod keyring;
pub(crate) mod relay;

/// The host side of `workbooks:host/secrets`, bound here: its types are its own.
pub(crate) mod bindings {
    wasmtime::component::bindgen!({
        path: ["../../wit", "../../wit/host"],
        inline: "package workbooks:secrets-unit;
                 world unit { import workbooks:host/secrets@0.1.0; }",
    });
}

use crate::cadence::Cadence;
use crate::cap::relay::{Backend, Relay};
use crate::cap::unit::{CapUnit, Holds, Opening};
use crate::grants::Scope;
use crate::storage::StorageError;
use bindings::workbooks::host::secrets;
use keyring::Keyring;
use std::sync::Arc;
use wasmtime::component::{HasSelf, Linker};
use wasmtime_wasi::WasiCtxBuilder;

/// The tokens of `tenant` the egress adds to requests their bindings
/// name, under `scope` (only the secrets it names, when it names any).
pub(crate) fn bindings_of(
    keyring: &Arc<Keyring>,
    tenant: &str,
    scope: Option<&Scope>,
) -> Arc<dyn crate::egress::SecretBindings> {
    Arc::new(egress::TenantBindings {
        keyring: keyring.clone(),
        tenant: tenant.to_string(),
        scope: scope.cloned(),
    })
}

/// Largest payload one signing call takes.
pub const SECRETS_MAX_DATA_BYTES: usize = 1 << 20;

/// The secrets one store may use: here, or through the relay (the keys
/// stay with the serving side). The default reaches nothing.
#[derive(Debug, Default)]
pub(crate) struct SecretsCtx(pub(crate) Backend<Local>);

/// The keys of one tenant in this process, and the grant's scope the
/// store runs under (its secret names and expiry, read at each call).
#[derive(Debug, Default)]
pub(crate) struct Local(Option<(Arc<Keyring>, String, Arc<Cadence>)>, Option<Scope>);

impl SecretsCtx {
    /// Signs with the keys of `tenant` that `scope` names, or sends every
    /// call to `relay` (see [`crate::cap::relay`]; the serving side holds
    /// the caller's scope).
    pub(crate) fn open(
        relay: Option<&Arc<dyn Relay>>,
        keyring: &Arc<Keyring>,
        tenant: &str,
        cadence: &Arc<Cadence>,
        scope: Option<&Scope>,
    ) -> Self {
        SecretsCtx(Backend::open(relay, || {
            Local(
                Some((keyring.clone(), tenant.to_string(), cadence.clone())),
                scope.cloned(),
            )
        }))
    }
}

/// The `secrets` unit: the host primitive the secrets broker imports.
pub(crate) struct Secrets;

impl CapUnit for Secrets {
    const INTERFACE: &'static str = "workbooks:host/secrets";
    const PER_TENANT: bool = true;
    type Ctx = SecretsCtx;

    fn link<T: Holds<Self>>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
        secrets::add_to_linker::<T, HasSelf<SecretsCtx>>(linker, T::context)
    }

    fn open(o: &Opening<'_>, _: &mut WasiCtxBuilder) -> Result<SecretsCtx, StorageError> {
        Ok(SecretsCtx::open(
            o.relay, o.keyring, o.tenant, o.cadence, o.scope,
        ))
    }
}
