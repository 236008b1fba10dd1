//! One call of a component a service ships and calls through its own
//! export, on a role: how a crate above the core runs such a component
//! (the agent service its loop, on its own role, an [`Extension`](crate::Extension); the
//! toolkit service its build broker, in [`Role::Call`]).
//!
//! The engine docks the component under the grant on the role, builds its
//! store for the session (its fuel, deadline, memory and model record
//! included), puts the service's context into the store, then hands the
//! store and the instance to the service's call. A failure of the
//! component (a trap, the deadline, fuel) is classified as any run's is
//! ([`RunError`]); the context comes back either way.
//!
//! Invariant: the component holds exactly the grant's reach, plus the
//! interfaces of the role's extension if it has one; what those do is the
//! service's, on the host.

use super::Engine;
use super::run::{RunError, classify};
use crate::artifact::Artifact;
use crate::dock::{DockError, Role};
use crate::policy::Grant;
use crate::state::{SessionError, SessionOptions, StoreState};
use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use wasmtime::Store;
use wasmtime::component::Instance;

/// What a service's call answered, and its context back.
pub struct Called<C, R> {
    /// The call's answer, or why the component failed.
    pub answer: Result<R, RunError>,
    /// The context the call was given, with what it recorded.
    pub context: Option<C>,
}

/// Why a service's component could not be called.
#[derive(Debug, thiserror::Error)]
pub enum CallOnError {
    /// The component could not be docked on the role.
    #[error(transparent)]
    Dock(DockError),
    /// The store could not be set up.
    #[error(transparent)]
    Session(SessionError),
}

/// The service's call: the store, with its context in it, and the
/// instance, to load the export from and call.
pub type CallFuture<'a, R> = Pin<Box<dyn Future<Output = wasmtime::Result<R>> + Send + 'a>>;

impl Engine {
    /// Calls `artifact` in `role` under `grant`, its store built for
    /// `session` and holding `context` (see the module doc): `call` loads
    /// the export and calls it.
    pub async fn call_on<C, R>(
        &self,
        artifact: &Artifact,
        grant: &Grant,
        role: Role,
        session: &SessionOptions,
        context: C,
        call: impl for<'a> FnOnce(&'a mut Store<StoreState>, Instance) -> CallFuture<'a, R>,
    ) -> Result<Called<C, R>, CallOnError>
    where
        C: Any + Send,
    {
        let docked = self
            .dock_on(artifact, grant, role)
            .map_err(CallOnError::Dock)?;
        let pre = docked.component().ok_or_else(|| {
            CallOnError::Dock(DockError::Link(
                "a core module exports nothing to call".into(),
            ))
        })?;
        let (mut store, _) = self
            .new_store(docked.flavor, grant, session)
            .map_err(CallOnError::Session)?;
        store.data_mut().extension = Some(Box::new(context));
        let called = match pre.instantiate_async(&mut store).await {
            Ok(instance) => call(&mut store, instance).await,
            Err(e) => Err(e),
        };
        let answer = called.map_err(|e| classify(e, store.data(), session.fuel));
        let context = store
            .data_mut()
            .extension
            .take()
            .and_then(|c| c.downcast::<C>().ok())
            .map(|c| *c);
        Ok(Called { answer, context })
    }
}
