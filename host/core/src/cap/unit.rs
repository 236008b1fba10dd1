//! A cap unit: the whole host side of one interface the host serves, in
//! its folder, behind [`CapUnit`]: how it is linked (0.2, and 0.3 where
//! it has interfaces there), its per-store context and how that context
//! is opened. The store's cap table (`crate::state::caps`) is one list of
//! units; the linker and the store builder loop over it and name no cap.
//!
//! Invariant: a unit's [`CapUnit::Ctx`] defaults to reaching nothing, and
//! is opened only when a cap the unit serves is granted, so an ungranted
//! cap finds nothing behind it even if a call reaches its context.

use crate::cadence::{Cadence, Holding};
use crate::cap::launch::Launcher;
use crate::cap::llm::LlmService;
use crate::cap::net::sockets::GuardedLookup;
use crate::cap::relay::Relay;
use crate::cap::secrets::keyring::Keyring;
use crate::commands::CommandPolicy;
use crate::egress::NetAccess;
use crate::pipes::{SessionInput, SessionOutput};
use crate::policy::{CapSet, Grant};
use crate::preopen::Preopen;
use crate::storage::{StorageError, StorageSlot};
use std::sync::Arc;
use wasmtime::component::{Linker, ResourceTable};
use wasmtime_wasi::{WasiCtxBuilder, WasiView};
use wasmtime_wasi_http::WasiHttpCtxView;

/// What opening a unit's context reads: the engine's side and the
/// session's, as a cap sees them.
pub(crate) struct Opening<'a> {
    /// The session's tenant (a validated name for a per-tenant unit).
    pub(crate) tenant: &'a str,
    /// The session's instance id.
    pub(crate) id: &'a str,
    /// The grant the store runs under.
    pub(crate) grant: &'a Grant,
    /// The caps of the grant this unit serves.
    pub(crate) caps: CapSet,
    /// The database, opened only when first used.
    pub(crate) storage: &'a Arc<StorageSlot>,
    /// Revocation, rate and audit for every brokered call.
    pub(crate) cadence: &'a Arc<Cadence>,
    /// The store's descriptors, in its tenant's count.
    pub(crate) descriptors: &'a Arc<Holding>,
    /// The signing keys.
    pub(crate) keyring: &'a Arc<Keyring>,
    /// The operator's model endpoint, when one is configured.
    pub(crate) llm: Option<&'a Arc<LlmService>>,
    /// The session tenant's network reach.
    pub(crate) access: &'a NetAccess,
    /// The grant's scopes the session runs under (`None`: unscoped).
    pub(crate) scope: Option<&'a crate::grants::Scope>,
    /// Where the storage, signing and launch calls go when another
    /// process serves them (a container-tier child's parent).
    pub(crate) relay: Option<&'a Arc<dyn Relay>>,
    /// What runs commands, made when first asked for.
    pub(crate) launcher: &'a dyn Fn() -> Arc<dyn Launcher>,
    /// Host directories the session (and so its commands) may see.
    pub(crate) dirs: &'a [Preopen],
    /// How the session's commands run.
    pub(crate) commands: &'a CommandPolicy,
    /// The session's stdin for a pipeline stage that asks for it.
    pub(crate) pipeline_stdin: Option<&'a SessionInput>,
    /// The session's stdout for a pipeline stage that asks for it.
    pub(crate) pipeline_stdout: Option<&'a SessionOutput>,
    /// The session's model record and allowance (`llm`).
    pub(crate) llm_run: &'a crate::cap::llm::LlmRun,
}

/// The store data every unit's linking may borrow from besides its own
/// context: WASI, the resource table, the descriptor count and the
/// network views.
pub(crate) trait CapStore: WasiView + Send + 'static {
    /// The store's descriptors, in its tenant's count.
    fn descriptors(&mut self) -> &Arc<Holding>;
    /// The `wasi:http` view: the net context with its guarded hooks.
    fn http(&mut self) -> WasiHttpCtxView<'_>;
    /// Name lookups through the socket gate.
    fn lookup(&mut self) -> GuardedLookup<'_>;
}

/// A store that holds `U`'s context.
pub(crate) trait Holds<U: CapUnit + ?Sized>: CapStore {
    /// `U`'s context.
    fn context(&mut self) -> &mut U::Ctx;
    /// `U`'s context with the store's resource table.
    fn context_and_table(&mut self) -> (&mut U::Ctx, &mut ResourceTable);
}

/// One interface the host serves, with everything the host needs of it.
pub(crate) trait CapUnit: 'static {
    /// The interface, without its version: a host primitive brokers
    /// import, or a guest-facing interface served in the host.
    const INTERFACE: &'static str;
    /// Whether it keeps per-tenant state, so the tenant must be a name.
    const PER_TENANT: bool;
    /// Its per-store context; the default reaches nothing.
    type Ctx: Default + Send + 'static;
    /// Links its interfaces.
    fn link<T: Holds<Self>>(linker: &mut Linker<T>) -> wasmtime::Result<()>;
    /// Links its WASI 0.3.0 interfaces, beside [`CapUnit::link`], on the
    /// concurrent engine only (`crate::flavor`).
    fn link_03<T: Holds<Self>>(_: &mut Linker<T>) -> wasmtime::Result<()> {
        Ok(())
    }
    /// Its context for a store granted `opening.caps` of it (never
    /// empty), and what it needs of the WASI builder.
    fn open(opening: &Opening<'_>, wasi: &mut WasiCtxBuilder) -> Result<Self::Ctx, StorageError>;
}
