//! What the calls linked over wasmtime-wasi's own share: each runs its
//! check, then wasmtime-wasi's implementation unchanged, and hands its
//! answer back in the shape a linked function returns.

use wasmtime_wasi::TrappableError;

/// wasmtime-wasi's answer as a linked function's result: a WASI error
/// code stays the guest's error value; anything else (a host bug, a
/// missing resource) stays a trap.
pub(crate) fn answered<R, E>(r: Result<R, TrappableError<E>>) -> wasmtime::Result<(Result<R, E>,)>
where
    E: std::error::Error + Send + Sync + 'static,
{
    match r {
        Ok(v) => Ok((Ok(v),)),
        Err(e) => Ok((Err(e.downcast()?),)),
    }
}
