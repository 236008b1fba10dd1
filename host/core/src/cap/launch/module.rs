//! The launch primitive as core modules see it: `workbooks.exec` and
//! `workbooks.exec_read`, linked by [`crate::dock::module`] only under
//! `exec`.
//!
//! `workbooks.exec(req_ptr, req_len) -> i64` takes a request in the packed
//! format ([`crate::commands::packed`]), runs it through the same deny ladder
//! under `exec`, stashes the result (`[exit i32][len u32][stdout][len
//! u32][stderr]`) and returns its length; `workbooks.exec_read(out_ptr,
//! out_len) -> i64` copies the stash out and returns the bytes copied.
//! Negative returns: -1 malformed request or bad pointer, -2 revoked, -3
//! rate_limited, -4 denied, -5 max_depth, -6 command_not_granted, -7
//! unknown_command, -8 too_many_running, -9 the command failed (timeout,
//! trap, limits), -10 nothing stashed.

use super::LaunchCtx;
use super::relay::ModuleExec;
use crate::commands::{CommandError, packed};
use wasmtime::Caller;

/// What a core-module store keeps for these calls.
#[derive(Debug, Default)]
pub(crate) struct ModuleLaunch {
    /// Who the module's commands run as.
    pub(crate) ctx: LaunchCtx,
    /// The last result, until `exec_read` takes it.
    stash: Option<Vec<u8>>,
}

impl ModuleLaunch {
    /// Commands run through `ctx`; nothing stashed yet.
    pub(crate) fn new(ctx: LaunchCtx) -> Self {
        Self { ctx, stash: None }
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

fn read_guest<T>(caller: &mut Caller<'_, T>, ptr: u32, len: u32) -> Option<Vec<u8>> {
    let memory = caller.get_export("memory")?.into_memory()?;
    let data = memory.data(&*caller);
    let start = ptr as usize;
    data.get(start..start.checked_add(len as usize)?)
        .map(<[u8]>::to_vec)
}

/// `workbooks.exec`: runs the packed request at `ptr..ptr+len` and stashes
/// the result for `exec_read`.
pub(crate) async fn exec<T: Send>(
    mut caller: Caller<'_, T>,
    get: fn(&mut T) -> &mut ModuleLaunch,
    ptr: u32,
    len: u32,
) -> wasmtime::Result<i64> {
    let Some(request) = read_guest(&mut caller, ptr, len) else {
        return Ok(-1);
    };
    let Ok(req) = packed::parse(&request) else {
        return Ok(-1);
    };
    let call = ModuleExec {
        name: req.name,
        argv: req.argv,
        stdin: req.stdin,
    };
    let result = get(caller.data_mut()).ctx.0.run_async(call).await;
    Ok(match result {
        Ok(out) => {
            let encoded = packed::encode_output(out.exit_code, &out.stdout, &out.stderr);
            let n = encoded.len() as i64;
            get(caller.data_mut()).stash = Some(encoded);
            n
        }
        Err(e) => error_code(&e),
    })
}

/// `workbooks.exec_read`: copies the stash to `ptr..ptr+len`.
pub(crate) fn exec_read<T>(
    mut caller: Caller<'_, T>,
    get: fn(&mut T) -> &mut ModuleLaunch,
    ptr: u32,
    len: u32,
) -> i64 {
    let Some(stash) = get(caller.data_mut()).stash.take() else {
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
