//! The core-module lane: WASI preview 1 commands (a core module exporting
//! `_start`), for existing wasip1 tools.
//!
//! Same envelope as components: fuel, wall clock, memory cap on the total,
//! in-memory stdio, only the caller's preopens and only under `vfs`. The
//! module is docked like a component ([`crate::dock::module`]): its imports
//! are checked call by call against the grant before anything runs, and the
//! linker comes from the dock, the one place linking happens. Its
//! `workbooks.exec` calls are served by [`crate::cap::launch::module`].

use super::Engine;
use crate::cap::launch::module::ModuleLaunch;
use crate::cap::launch::{LaunchCtx, Launcher};
use crate::commands::ladder::Resolved;
use crate::commands::{CommandEnv, CommandError, CommandOutput};
use crate::limits::{Deadline, MAX_CAPTURED_OUTPUT_BYTES, MemoryLimiter, install_deadline};
use crate::preopen::preopen_all;
use crate::run::classify_with;
use crate::state::ModuleState;
use bytes::Bytes;
use std::sync::Arc;
use std::time::Duration;
use wasmtime::Store;
use wasmtime_wasi::p2::pipe::{MemoryInputPipe, MemoryOutputPipe};
use wasmtime_wasi::{I32Exit, WasiCtx};

impl Engine {
    /// Runs a core-module command for `env`.
    pub(crate) async fn run_module(
        &self,
        env: &CommandEnv,
        resolved: &Resolved,
        args: Vec<String>,
        stdin: Bytes,
        timeout: Duration,
        fuel: u64,
    ) -> Result<CommandOutput, CommandError> {
        let refused = |e: wasmtime::Error| CommandError::Refused(format!("{e:#}"));
        let docked = self
            .dock_module(&resolved.artifact, &env.grant)
            .map_err(|e| CommandError::Refused(e.to_string()))?;
        let stdout = MemoryOutputPipe::new(MAX_CAPTURED_OUTPUT_BYTES + 1);
        let stderr = MemoryOutputPipe::new(MAX_CAPTURED_OUTPUT_BYTES + 1);
        let mut wasi = WasiCtx::builder();
        wasi.arg(&resolved.name)
            .args(&args)
            .stdin(MemoryInputPipe::new(stdin))
            .stdout(stdout.clone())
            .stderr(stderr.clone());
        preopen_all(&mut wasi, self.home(), &env.grant, &env.dirs)
            .map_err(|e| CommandError::Refused(e.to_string()))?;
        let mut child = env.clone();
        child.caller_caps = env.grant.caps;
        child.policy.depth += 1;
        let limit = self.memory_cap(env.policy.memory, env.grant.profile.effective);
        let mut store = Store::new(
            self.wasmtime(),
            ModuleState {
                wasi: wasi.build_p1(),
                limiter: MemoryLimiter::new(limit),
                deadline: Deadline::after(timeout),
                launch: ModuleLaunch::new(LaunchCtx::new(
                    Arc::new(self.clone()) as Arc<dyn Launcher>,
                    child,
                    env.grant.caps,
                )),
            },
        );
        store.limiter(|s| &mut s.limiter);
        install_deadline(&mut store);
        store.set_fuel(fuel).map_err(refused)?;
        let outcome = tokio::time::timeout(timeout, async {
            let instance = docked.pre.instantiate_async(&mut store).await?;
            let start = instance.get_typed_func::<(), ()>(&mut store, "_start")?;
            start.call_async(&mut store, ()).await
        })
        .await;
        let exit_code = match outcome {
            Err(_) => return Err(CommandError::Timeout(timeout)),
            Ok(Ok(())) => 0,
            Ok(Err(e)) => match e.downcast_ref::<I32Exit>() {
                Some(I32Exit(code)) => *code,
                None => {
                    let s = store.data();
                    return Err(CommandError::from(classify_with(
                        e,
                        &s.limiter,
                        s.deadline,
                        Some(fuel),
                    )));
                }
            },
        };
        let (stdout, stderr) = (stdout.contents(), stderr.contents());
        if stdout.len().max(stderr.len()) > MAX_CAPTURED_OUTPUT_BYTES {
            return Err(CommandError::OutputTooLarge(
                MAX_CAPTURED_OUTPUT_BYTES as u64,
            ));
        }
        Ok(CommandOutput {
            stdout,
            stderr,
            exit_code,
            elapsed: Duration::ZERO,
        })
    }
}
