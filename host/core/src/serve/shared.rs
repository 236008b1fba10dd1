//! Serving a WASI 0.3 handler with concurrent requests on one instance:
//! its `handle` is async, so one instance can hold many requests in flight
//! at once, each an async task of the component (wasmtime-wasi-http's
//! `ProxyHandler` keeps the workers and their event loops).
//!
//! The promise, weaker than a fresh instance per request and said so in
//! docs/operating.md: requests on one instance share its memory, so state a
//! guest keeps between requests is seen by the next ones (of any client).
//! What holds per request: its wall-clock budget (answered 504 past it,
//! and the instance is stopped once its most recent request is past the
//! budget, every request on it with it), fuel (refilled as each request
//! starts, so it bounds the work since the last start), the response cap
//! and the tenant's revocation (a revoked tenant's instances are stopped).
//! Bounded per instance: [`SERVE_SHARED_MAX_CONCURRENT`] requests at once
//! (past it another instance is started), [`SERVE_SHARED_MAX_REQUESTS`] in
//! all and [`crate::limits::SERVE_SHARED_MAX_AGE`] of age before it is retired (so work a
//! request leaves running after its answer, renewed by later requests'
//! deadlines, ends with it), [`SERVE_SHARED_IDLE`] kept idle; its memory
//! cap and tables are a store's, as for any instance, and its stdout and
//! stderr are thrown away (kept, they would add up over every request).

use super::Serving;
use crate::limits::{
    COMMAND_FUEL, Deadline, SERVE_SHARED_IDLE, SERVE_SHARED_MAX_CONCURRENT,
    SERVE_SHARED_MAX_REQUESTS,
};
use crate::state::StoreState;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use wasmtime::StoreContextMut;
use wasmtime::component::GuestTaskId;
use wasmtime_wasi_http::handler::{
    HandlerState, Instance, ProxyHandler, ProxyPre, ShouldAccept, WorkerExpiration, WorkerState,
    WorkerStatus,
};
use wasmtime_wasi_http::p3::bindings::ServicePre;

/// The shared instances of one served handler.
pub(super) type Shared = ProxyHandler<Workers>;

/// Starts the handler's shared instances as requests come.
pub(super) fn shared(serving: Serving, pre: ServicePre<StoreState>) -> Shared {
    ProxyHandler::new(Workers {
        serving,
        pre: ProxyPre::P3(pre),
    })
}

/// What every worker is made from.
pub(super) struct Workers {
    serving: Serving,
    pre: ProxyPre<StoreState>,
}

impl HandlerState for Workers {
    type StoreData = StoreState;
    type WorkerExpiration = Expiry;
    type WorkerState = Worker;

    async fn instantiate(
        &self,
    ) -> wasmtime::Result<Instance<StoreState, Self::WorkerExpiration, Self::WorkerState>> {
        // Its stdout and stderr are thrown away: kept, they would add up
        // over every request it serves.
        let mut store = self
            .serving
            .store_with("serve", crate::Output::Discard)
            .map_err(|e| wasmtime::format_err!("{e}"))?;
        let born = Instant::now();
        let max_age = self.serving.opts.shared_max_age;
        let budget = self.serving.budget;
        let proxy = tokio::time::timeout(budget, self.pre.instantiate_async(&mut store))
            .await
            .map_err(|_| wasmtime::format_err!("instantiating took past the budget"))??;
        Ok(Instance {
            store,
            proxy,
            view: StoreState::http,
            expiration: Expiry {
                serving: self.serving.clone(),
                born,
                max_age,
                tick: Box::pin(tokio::time::sleep(super::REVOCATION_POLL)),
            },
            state: Worker {
                budget,
                born,
                max_age,
                fuel: self.serving.opts.fuel.unwrap_or(COMMAND_FUEL),
            },
        })
    }
}

/// One worker's request policy.
pub(super) struct Worker {
    budget: Duration,
    /// When its instance was made, and the oldest it may get.
    born: Instant,
    max_age: Duration,
    fuel: u64,
}

impl WorkerState for Worker {
    type StoreData = StoreState;
    type RequestData = ();

    fn should_accept_request(&self, concurrent: usize, total: usize) -> ShouldAccept {
        if total >= SERVE_SHARED_MAX_REQUESTS || self.born.elapsed() >= self.max_age {
            ShouldAccept::Never
        } else if concurrent >= SERVE_SHARED_MAX_CONCURRENT {
            ShouldAccept::No
        } else {
            ShouldAccept::Yes
        }
    }

    fn on_request_start(
        &self,
        mut store: StoreContextMut<'_, StoreState>,
        (): (),
        _task: GuestTaskId,
    ) -> Pin<Box<dyn Future<Output = ()> + Send + Sync>> {
        // The store's epoch deadline and fuel are renewed by each request.
        store.data_mut().deadline = Deadline::after(self.budget);
        if let Err(e) = store.set_fuel(self.fuel) {
            tracing::warn!(error = %e, "serve: could not refuel a shared instance");
        }
        Box::pin(tokio::time::sleep(self.budget))
    }

    fn drop(&self, _store: wasmtime::Store<StoreState>, result: wasmtime::Result<()>) {
        match result {
            Err(e) if crate::engine::run::is_runtime_defect(&e) => {
                tracing::warn!(error = %e, "serve: a shared instance reached a defect of wasmtime's");
            }
            Err(e) => tracing::info!(error = %e.root_cause(), "serve: a shared instance stopped"),
            Ok(()) => {}
        }
    }
}

/// When a worker's instance is dropped: past the budget of its most
/// recent request, idle for [`SERVE_SHARED_IDLE`], older than its
/// maximum age ([`crate::limits::SERVE_SHARED_MAX_AGE`] by default; work a request left running after its answer
/// lasts no longer, however many requests keep renewing the deadline), or
/// once the tenant is revoked (checked every [`super::REVOCATION_POLL`]).
pub(super) struct Expiry {
    serving: Serving,
    born: Instant,
    max_age: Duration,
    tick: Pin<Box<tokio::time::Sleep>>,
}

impl WorkerExpiration for Expiry {
    fn poll(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        status: WorkerStatus,
        start: Instant,
    ) -> Poll<()> {
        let limit = match status {
            WorkerStatus::Idle => SERVE_SHARED_IDLE,
            // Past the request's own budget by the grace the run path
            // gives a backstop: the request's 504 speaks first.
            WorkerStatus::Requests | WorkerStatus::PostReturn => {
                self.serving.budget + crate::limits::HOST_WAIT_GRACE
            }
        };
        let too_old = self.born.elapsed() >= self.max_age;
        if start.elapsed() >= limit || too_old || self.serving.revoked() {
            return Poll::Ready(());
        }
        // Asked again at the next tick, whatever else wakes it.
        while self.tick.as_mut().poll(cx).is_ready() {
            let next = tokio::time::Instant::now() + super::REVOCATION_POLL;
            self.tick.as_mut().reset(next);
        }
        Poll::Pending
    }
}
