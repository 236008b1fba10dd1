//! What the calls linked over wasmtime-wasi's own share: each runs its
//! check, then wasmtime-wasi's implementation unchanged, and hands its
//! answer back in the shape a linked function returns.

use wasmtime::component::{LinkerInstance, Resource, ResourceType};
use wasmtime_wasi::{TrappableError, WasiView};

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

/// How many entries of `table` a sweep finds `is` true of: the count a
/// cap on held resources checks (a dropped resource is simply no longer
/// there, so no counter can drift).
pub(crate) fn count(
    table: &mut wasmtime::component::ResourceTable,
    is: fn(&(dyn std::any::Any + Send)) -> bool,
) -> usize {
    table.iter_mut().filter(|entry| is(&**entry)).count()
}

/// A preview 1 call's guest memory and WASI context, with the call's
/// hostcall fuel handed to the context, for a call linked over
/// wasmtime-wasi's in the core-module lane. A module without an exported
/// memory cannot be served: that call traps, naming it.
pub(crate) fn preview1_parts<'a, T: 'static>(
    caller: &'a mut wasmtime::Caller<'_, T>,
    get: fn(&mut T) -> &mut wasmtime_wasi::p1::WasiP1Ctx,
    call: &str,
) -> wasmtime::Result<(&'a mut [u8], &'a mut wasmtime_wasi::p1::WasiP1Ctx)> {
    use wasmtime::AsContextMut;
    use wasmtime_wasi::p1::wasi_snapshot_preview1::WasiSnapshotPreview1;
    let Some(wasmtime::Extern::Memory(memory)) = caller.get_export("memory") else {
        return Err(wasmtime::format_err!(
            "{call}: the module exports no memory"
        ));
    };
    let fuel = caller.as_context_mut().hostcall_fuel();
    let (bytes, state) = memory.data_and_store_mut(caller);
    let ctx = get(state);
    ctx.set_hostcall_fuel(fuel);
    Ok((bytes, ctx))
}

/// Links the drop of the resource `name` (host type `R`) over
/// wasmtime-wasi's: it deletes the value from the table as wasmtime-wasi's
/// own drop does (closing what it holds), then runs `then` on the store's
/// data (a count the value leaves).
pub(crate) fn drop_then<T: WasiView + 'static, R: Send + 'static>(
    instance: &mut LinkerInstance<'_, T>,
    name: &str,
    then: impl Fn(&mut T) + Send + Sync + 'static,
) -> wasmtime::Result<()> {
    instance.resource(name, ResourceType::host::<R>(), move |mut store, rep| {
        let state = store.data_mut();
        drop(state.ctx().table.delete(Resource::<R>::new_own(rep))?);
        then(state);
        Ok(())
    })
}
