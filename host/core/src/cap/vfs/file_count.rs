//! How many files one store holds open.
//!
//! Threat: every `wasi:filesystem` descriptor a guest opens is an OS
//! descriptor until it drops it, and the store's table (10 000 entries) let
//! one guest with a preopened directory hold that many: past a service's
//! usual soft limit of 1 024, so one call could stop `wbx serve` accepting
//! or starve another tenant's line in the daemon, as sockets did.
//!
//! Served here: `descriptor.open-at` at 0.2 and 0.3 is linked over
//! wasmtime-wasi's and first counts the descriptors in the store's table
//! (a sweep: a descriptor dropped is simply no longer there).
//!
//! Invariant: a store holds at most [`MAX_FILES_PER_STORE`] descriptors
//! (its preopens included), and all stores of its tenant at most their
//! per-tenant count of descriptors (`crate::cadence::Descriptors`); the
//! open that would pass either fails with `quota` (0.2, which has no code
//! for a descriptor limit) or `other` naming the limits (0.3), and no file
//! is opened. A descriptor dropped leaves the tenant's count (its drop is
//! linked over wasmtime-wasi's and deletes it as that does), and so does
//! the one a 0.3 open took while in flight when the guest cancels it. The
//! core-module lane's preview 1 `path_open` is counted the same way
//! ([`count_preview1`], `mfile` past the limit).

use crate::cadence::{Holding, Kind};
use crate::cap::shadow::{answered, count, drop_then, preview1_parts};
use crate::limits::MAX_FILES_PER_STORE;
use std::sync::Arc;
use wasmtime::StoreContextMut;
use wasmtime::component::{Accessor, Linker, Resource, ResourceTable};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::filesystem::{Descriptor, WasiFilesystem, WasiFilesystemView};

/// The instances whose open is counted: the exact names wasmtime-wasi 48
/// links. `sandbox_files_hold` fails if these stop matching.
const TYPES_02: &str = "wasi:filesystem/types@0.2.12";
const TYPES_03: &str = "wasi:filesystem/types@0.3.0";

/// The open descriptors in `table`, at either version.
fn live(table: &mut ResourceTable) -> usize {
    count(table, |entry| entry.is::<Descriptor>())
}

/// The store's descriptors in its tenant's count.
type Held<T> = fn(&mut T) -> &Arc<Holding>;

/// The descriptors the store holds (one sweep), if it and its tenant may
/// hold one more, counting the opens in flight (one is taken for the call
/// in the tenant's count): the caller then
/// [`finish`](Holding::finish)es.
fn room<T: WasiView>(state: &mut T, held: Held<T>) -> Option<usize> {
    let n = live(state.ctx().table);
    held(state).reserve(Kind::File, n).then_some(n)
}

/// Links the counted 0.2 `open-at` over wasmtime-wasi's; called right
/// after `wasi:filesystem/types` is linked.
pub(super) fn add_to_linker<T: WasiView + 'static>(
    l: &mut Linker<T>,
    held: Held<T>,
) -> wasmtime::Result<()> {
    use wasmtime_wasi::p2::bindings::filesystem::types::{
        DescriptorFlags, ErrorCode, HostDescriptor, OpenFlags, PathFlags,
    };
    type Args = (
        Resource<Descriptor>,
        PathFlags,
        String,
        OpenFlags,
        DescriptorFlags,
    );
    l.allow_shadowing(true);
    let linked = l.instance(TYPES_02).and_then(|mut types| {
        types.func_wrap_async(
            "[method]descriptor.open-at",
            move |mut store: StoreContextMut<'_, T>, (dir, path_flags, path, open, flags): Args| {
                Box::new(async move {
                    let state = store.data_mut();
                    let Some(n) = room(state, held) else {
                        return Ok((Err(ErrorCode::Quota),));
                    };
                    let mut view = state.filesystem();
                    let opened =
                        HostDescriptor::open_at(&mut view, dir, path_flags, path, open, flags)
                            .await;
                    let made = opened.is_ok();
                    held(state).finish(Kind::File, made, Some(n + usize::from(made)));
                    answered(opened)
                })
            },
        )?;
        drop_then::<T, Descriptor>(&mut types, "descriptor", move |state| {
            held(state).release(Kind::File);
        })
    });
    l.allow_shadowing(false);
    linked
}

/// The same over 0.3's `open-at`, an async function there.
pub(super) fn add_03_to_linker<T: WasiView + 'static>(
    l: &mut Linker<T>,
    held: Held<T>,
) -> wasmtime::Result<()> {
    use wasmtime_wasi::p3::bindings::filesystem::types as p3;
    use wasmtime_wasi::p3::filesystem::FilesystemResult;
    type Args = (
        Resource<Descriptor>,
        p3::PathFlags,
        String,
        p3::OpenFlags,
        p3::DescriptorFlags,
    );
    l.allow_shadowing(true);
    let linked = l.instance(TYPES_03).and_then(|mut types| {
        types.func_wrap_concurrent(
            "[method]descriptor.open-at",
            move |accessor: &Accessor<T>, (dir, path_flags, path, open, flags): Args| {
                Box::pin(async move {
                    // Taken for as long as the call runs: a call the
                    // guest cancels in flight gives it back.
                    let reserved = accessor.with(|mut access| {
                        let state = access.get();
                        let n = live(state.ctx().table);
                        held(state).reserved(Kind::File, n)
                    });
                    let Some(reserved) = reserved else {
                        let tenant = accessor.with(|mut access| held(access.get()).tenant_cap());
                        return Ok((Err(p3::ErrorCode::Other(Some(format!(
                            "too-many-open-files: a store holds at most {MAX_FILES_PER_STORE} open files, \
                             and a tenant's stores {tenant} files and sockets together"
                        )))),));
                    };
                    let fs = accessor.with_getter::<WasiFilesystem>(T::filesystem);
                    let opened: FilesystemResult<Resource<Descriptor>> =
                        <WasiFilesystem as p3::HostDescriptorWithStore<T>>::open_at(
                            &fs, dir, path_flags, path, open, flags,
                        )
                        .await;
                    // Other opens of the store may have finished meanwhile:
                    // the count moves by this one alone.
                    reserved.finish(opened.is_ok(), None);
                    answered(opened)
                })
            },
        )?;
        drop_then::<T, Descriptor>(&mut types, "descriptor", move |state| {
            held(state).release(Kind::File);
        })
    });
    l.allow_shadowing(false);
    linked
}

/// `errno::mfile`, preview 1's answer to one descriptor too many.
const ERRNO_MFILE: i32 = 33;

/// The same count in front of preview 1's `path_open`, in the core-module
/// lane: its descriptors are wasmtime-wasi's, in its context's table.
pub(crate) fn count_preview1<T: Send + 'static>(
    linker: &mut wasmtime::Linker<T>,
    get: fn(&mut T) -> &mut wasmtime_wasi::p1::WasiP1Ctx,
    held: fn(&T) -> std::sync::Arc<Holding>,
) -> wasmtime::Result<()> {
    use wasmtime_wasi::p1::wasi_snapshot_preview1;
    type Args = (i32, i32, i32, i32, i32, i64, i64, i32, i32);
    linker.allow_shadowing(true);
    let linked = linker
        .func_wrap_async(
            "wasi_snapshot_preview1",
            "path_open",
            move |mut caller: wasmtime::Caller<'_, T>,
                  (fd, dirflags, path, len, oflags, base, inheriting, fdflags, opened): Args| {
                Box::new(async move {
                    let descriptors = held(caller.data());
                    let (bytes, ctx) = preview1_parts(&mut caller, get, "path_open")?;
                    let n = live(ctx.ctx().table);
                    if !descriptors.reserve(Kind::File, n) {
                        return Ok(ERRNO_MFILE);
                    }
                    let mut memory = wiggle::GuestMemory::Unshared(bytes);
                    let errno = wasi_snapshot_preview1::path_open(
                        ctx,
                        &mut memory,
                        fd,
                        dirflags,
                        path,
                        len,
                        oflags,
                        base,
                        inheriting,
                        fdflags,
                        opened,
                    )
                    .await;
                    let made = matches!(errno, Ok(0));
                    descriptors.finish(Kind::File, made, Some(n + usize::from(made)));
                    errno
                })
            },
        )
        .map(|_| ());
    linker.allow_shadowing(false);
    linked
}
