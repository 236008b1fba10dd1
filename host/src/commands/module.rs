//! The core-module lane: WASI preview 1 commands (a core module exporting
//! `_start`), for existing wasip1 tools.
//!
//! Same envelope as components: fuel, wall clock, memory cap on the total,
//! in-memory stdio, only the caller's preopens and only under `vfs`. The
//! module is docked like a component ([`crate::dock::module`]): its imports
//! are checked call by call against the grant before anything runs, and the
//! linker comes from the dock, the one place linking happens.
//!
//! `workbooks.exec(req_ptr, req_len) -> i64` takes a request in the wire
//! format ([`super::wire`]), runs it through the same deny ladder (under
//! `exec`, the only cap it is linked with),
//! stashes the result (`[exit i32][len u32][stdout][len u32][stderr]`)
//! and returns its length; `workbooks.exec_read(out_ptr, out_len) -> i64`
//! copies the stash out and returns the bytes copied. Negative returns:
//! -1 malformed request or bad pointer, -2 revoked, -3 rate_limited,
//! -4 denied, -5 max_depth, -6 command_not_granted, -7 unknown_command,
//! -8 too_many_running, -9 the command failed (timeout, trap, limits),
//! -10 nothing stashed.

use super::ladder::Resolved;
use super::{CommandEnv, CommandError, CommandOutput, wire};
use crate::engine::Engine;
use crate::limits::{
    Deadline, HasDeadline, MAX_CAPTURED_OUTPUT_BYTES, MemoryLimiter, install_deadline,
};
use crate::policy::Cap;
use crate::preopen::preopen_all;
use crate::run::classify_with;
use bytes::Bytes;
use std::time::Duration;
use wasmtime::{Caller, Store};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p2::pipe::{MemoryInputPipe, MemoryOutputPipe};
use wasmtime_wasi::{I32Exit, WasiCtx};

/// The data of a core-module store.
pub(crate) struct ModuleState {
    pub(crate) wasi: WasiP1Ctx,
    limiter: MemoryLimiter,
    deadline: Deadline,
    exec: Option<(Engine, CommandEnv)>,
    stash: Option<Vec<u8>>,
}

impl HasDeadline for ModuleState {
    fn deadline(&self) -> Deadline {
        self.deadline
    }
}

fn error_code(e: &CommandError) -> i64 {
    match e {
        CommandError::Revoked => -2,
        CommandError::RateLimited => -3,
        CommandError::Denied => -4,
        CommandError::MaxDepth(_) => -5,
        CommandError::NotGranted(_) => -6,
        CommandError::Unknown(_) => -7,
        CommandError::TooManyRunning(_) => -8,
        _ => -9,
    }
}

fn read_guest(caller: &mut Caller<'_, ModuleState>, ptr: u32, len: u32) -> Option<Vec<u8>> {
    let memory = caller.get_export("memory")?.into_memory()?;
    let data = memory.data(&*caller);
    let start = ptr as usize;
    data.get(start..start.checked_add(len as usize)?)
        .map(<[u8]>::to_vec)
}

/// `workbooks.exec`: runs the wire request at `ptr..ptr+len` through the
/// broker and stashes the result for `exec_read`.
pub(crate) async fn exec(
    mut caller: Caller<'_, ModuleState>,
    ptr: u32,
    len: u32,
) -> wasmtime::Result<i64> {
    let Some(request) = read_guest(&mut caller, ptr, len) else {
        return Ok(-1);
    };
    let Ok(req) = wire::parse(&request) else {
        return Ok(-1);
    };
    let Some((engine, env)) = caller.data().exec.clone() else {
        return Ok(-4);
    };
    // Linked only under exec.
    let result = engine
        .run_command_as(&env, Cap::Exec, &req.name, req.argv, Bytes::from(req.stdin))
        .await;
    Ok(match result {
        Ok(out) => {
            let encoded = wire::encode_output(out.exit_code, &out.stdout, &out.stderr);
            let n = encoded.len() as i64;
            caller.data_mut().stash = Some(encoded);
            n
        }
        Err(e) => error_code(&e),
    })
}

/// `workbooks.exec_read`: copies the stash to `ptr..ptr+len`.
pub(crate) fn exec_read(mut caller: Caller<'_, ModuleState>, ptr: u32, len: u32) -> i64 {
    let Some(stash) = caller.data_mut().stash.take() else {
        return -10;
    };
    let Some(memory) = caller.get_export("memory").and_then(|e| e.into_memory()) else {
        return -1;
    };
    let n = stash.len().min(len as usize);
    match memory.write(&mut caller, ptr as usize, &stash[..n]) {
        Ok(()) => n as i64,
        Err(_) => -1,
    }
}

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
        let module = self.compile_module(&resolved.artifact).map_err(refused)?;
        let docked = self
            .dock_module(&resolved.artifact, &module, &env.grant)
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
            module.engine(),
            ModuleState {
                wasi: wasi.build_p1(),
                limiter: MemoryLimiter::new(limit),
                deadline: Deadline::after(timeout),
                exec: Some((self.clone(), child)),
                stash: None,
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
