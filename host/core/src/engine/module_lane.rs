//! The core-module lane: WASI preview 1 commands (a core module exporting
//! `_start`), the wasip1 binaries people already have.
//!
//! Same envelope as components, built from the same [`SessionOptions`]:
//! argv, the operator's environment and nothing else, stdio, only the
//! caller's preopens and only under `vfs`, fuel, wall clock, the memory cap
//! on the total. The module is docked like a component
//! ([`crate::dock::module`]): its imports are checked call by call against
//! the grant before anything runs, and the linker comes from the dock, the
//! one place linking happens. Its `workbooks.exec` calls are served by
//! [`crate::cap::launch::module`]. `proc_exit(n)` ends the run with exit
//! code `n`.

use super::Engine;
use crate::dock::Docked;
use crate::dock::module::START;
use crate::engine::run::{RunError, RunOutput, classify_with, output, settle};
use crate::limits::HOST_WAIT_GRACE;
use crate::state::{ModuleState, SessionOptions};
use std::time::{Duration, Instant};
use wasmtime::InstancePre;

impl Engine {
    /// Runs a docked core module's `_start` once in a fresh store (the
    /// caller has checked that it exports one).
    pub(crate) async fn run_module(
        &self,
        docked: &Docked,
        pre: &InstancePre<ModuleState>,
        opts: SessionOptions,
        budget: Duration,
    ) -> Result<RunOutput, RunError> {
        let (mut store, captured) = self.new_module_store(docked.grant(), &opts)?;
        let start = Instant::now();
        let outcome = tokio::time::timeout(budget + HOST_WAIT_GRACE, async {
            let instance = pre.instantiate_async(&mut store).await?;
            let entry = instance.get_typed_func::<(), ()>(&mut store, START)?;
            entry.call_async(&mut store, ()).await.map(|()| 0)
        })
        .await;
        let elapsed = start.elapsed();
        let code = settle(outcome, budget, &captured, |e| {
            let s = store.data();
            classify_with(e, &s.limiter, s.deadline, opts.fuel)
        })?;
        let left = store.get_fuel().unwrap_or(0);
        Ok(output(code, &captured, elapsed, opts.fuel, left))
    }
}
