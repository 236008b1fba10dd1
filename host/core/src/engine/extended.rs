//! One call of a service's own component, on the service's own lane
//! ([`Extension`]): how a crate above the core runs a component whose
//! imports it serves itself (the agent service runs its loop this way).
//!
//! The engine docks the component under the grant on the extension's
//! lane, builds its store for the session (its fuel, deadline and model
//! record included), puts the service's context into the store, then
//! hands the store and the instance to the service's call. A failure of
//! the component (a trap, the deadline, fuel) is classified as any run's
//! is ([`RunError`]); the context comes back either way.
//!
//! Invariant: the component holds exactly the grant's reach plus the
//! extension's interfaces; what those do is the service's, on the host.

use super::Engine;
use super::run::{RunError, classify};
use crate::artifact::Artifact;
use crate::dock::{DockError, Extension, Lane};
use crate::policy::Grant;
use crate::state::{SessionError, SessionOptions, StoreState};
use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use wasmtime::Store;
use wasmtime::component::Instance;

/// What a service's call answered, and its context back.
pub struct Extended<C, R> {
    /// The call's answer, or why the component failed.
    pub answer: Result<R, RunError>,
    /// The context the call was given, with what it recorded.
    pub context: Option<C>,
}

/// Why a service's component could not be called.
#[derive(Debug, thiserror::Error)]
pub enum ExtendedError {
    /// The component could not be docked on the extension's lane.
    #[error("{lane}: {error}")]
    Dock {
        /// The extension's name.
        lane: &'static str,
        /// Why.
        error: DockError,
    },
    /// The store could not be set up.
    #[error("{lane}: {error}")]
    Session {
        /// The extension's name.
        lane: &'static str,
        /// Why.
        error: SessionError,
    },
}

/// The service's call: the store, with its context in it, and the
/// instance, to load the export from and call.
pub type ExtendedFuture<'a, R> = Pin<Box<dyn Future<Output = wasmtime::Result<R>> + Send + 'a>>;

impl Engine {
    /// Calls `artifact` on the lane of `extension` under `grant`, its
    /// store built for `session` and holding `context` (see the module
    /// doc): `call` loads the export and calls it.
    pub async fn call_extended<C, R>(
        &self,
        artifact: &Artifact,
        grant: &Grant,
        extension: &'static Extension,
        session: &SessionOptions,
        context: C,
        call: impl for<'a> FnOnce(&'a mut Store<StoreState>, Instance) -> ExtendedFuture<'a, R>,
    ) -> Result<Extended<C, R>, ExtendedError>
    where
        C: Any + Send,
    {
        let lane = extension.name;
        let dock = |error| ExtendedError::Dock { lane, error };
        let docked = self
            .dock_on(artifact, grant, Lane::Extended(extension))
            .map_err(dock)?;
        let pre = docked.component().ok_or_else(|| {
            dock(DockError::Link(
                "a core module has no extension lane".into(),
            ))
        })?;
        let (mut store, _) = self
            .new_store(docked.flavor, grant, session)
            .map_err(|error| ExtendedError::Session { lane, error })?;
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
        Ok(Extended { answer, context })
    }
}
