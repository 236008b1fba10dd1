//! No symlink out of a preopened directory.
//!
//! Threat: a guest with a read-write preopen plants `link -> ../../etc` (or
//! any target that climbs out). The guest itself cannot follow it (every
//! open is resolved inside the preopen), but the host's own tools and any
//! later process that reads the directory do follow links, and would be led
//! outside. wasmtime-wasi already refuses absolute targets; this refuses the
//! rest that could escape: any target with a `..` component. The link's own
//! depth inside the preopen is not known to the check, so it does not try to
//! prove that a `..` stays inside; `a/b`, `./b` and `b` are all fine.
//!
//! The guard replaces one function of `wasi:filesystem/types`,
//! `descriptor.symlink-at`, with a check in front of wasmtime-wasi's own
//! implementation; in the core-module lane, [`guard_preview1`] puts the
//! same check in front of `path_symlink`.

use crate::cap::shadow::{answered, preview1_parts};
use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::filesystem::WasiFilesystemView;
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p1::wasi_snapshot_preview1;
use wasmtime_wasi::p2::bindings::filesystem::types::{Descriptor, ErrorCode, HostDescriptor};

/// The `wasi:filesystem/types` instance wasmtime-wasi links (its WIT
/// version); the guard reopens it to replace one function.
const FILESYSTEM_TYPES: &str = "wasi:filesystem/types@0.2.12";

/// Why a symlink target could lead out of the directory it is made in.
pub(crate) fn escape(target: &str) -> Option<&'static str> {
    if target.starts_with('/') || target.starts_with('\\') {
        return Some("absolute target");
    }
    if target.split(['/', '\\']).any(|segment| segment == "..") {
        return Some("target climbs with `..`");
    }
    None
}

type SymlinkArgs = (Resource<Descriptor>, String, String);

/// Puts the escape check in front of `descriptor.symlink-at`.
pub(super) fn guard<T: WasiView + 'static>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    linker.allow_shadowing(true);
    let replaced = linker.instance(FILESYSTEM_TYPES).and_then(|mut types| {
        types.func_wrap_async(
            "[method]descriptor.symlink-at",
            |mut store: StoreContextMut<'_, T>, (dir, target, link): SymlinkArgs| {
                Box::new(async move {
                    if let Some(why) = escape(&target) {
                        tracing::info!(target, why, "refused a symlink out of a preopen");
                        return Ok((Err(ErrorCode::NotPermitted),));
                    }
                    let mut view = store.data_mut().filesystem();
                    answered(HostDescriptor::symlink_at(&mut view, dir, target, link).await)
                })
            },
        )
    });
    linker.allow_shadowing(false);
    replaced
}

/// `errno::perm`, preview 1's answer to a refused link.
const ERRNO_PERM: i32 = 63;

/// `errno::fault`: the target does not lie in the guest's memory.
const ERRNO_FAULT: i32 = 21;

/// The preview 1 module name.
const WASI_P1: &str = "wasi_snapshot_preview1";

/// The WASI 0.3 `wasi:filesystem/types` instance (wasmtime-wasi's `p3`).
const FILESYSTEM_TYPES_03: &str = "wasi:filesystem/types@0.3.0";

/// Puts the same check in front of WASI 0.3's `descriptor.symlink-at`, an
/// async function there: the check runs before wasmtime-wasi's own
/// implementation is awaited.
pub(super) fn guard_03<T: WasiView + 'static>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
    use wasmtime_wasi::filesystem::WasiFilesystem;
    use wasmtime_wasi::p3::bindings::filesystem::types as p3;
    use wasmtime_wasi::p3::filesystem::FilesystemResult;
    type Args = (
        Resource<wasmtime_wasi::filesystem::Descriptor>,
        String,
        String,
    );
    linker.allow_shadowing(true);
    let replaced = linker.instance(FILESYSTEM_TYPES_03).and_then(|mut types| {
        types.func_wrap_concurrent(
            "[method]descriptor.symlink-at",
            |accessor: &wasmtime::component::Accessor<T>, (dir, target, link): Args| {
                Box::pin(async move {
                    if let Some(why) = escape(&target) {
                        tracing::info!(target, why, "refused a symlink out of a preopen");
                        return Ok((Err(p3::ErrorCode::NotPermitted),));
                    }
                    let fs = accessor.with_getter::<WasiFilesystem>(T::filesystem);
                    let made: FilesystemResult<()> =
                        <WasiFilesystem as p3::HostDescriptorWithStore<T>>::symlink_at(
                            &fs, dir, target, link,
                        )
                        .await;
                    answered(made)
                })
            },
        )
    });
    linker.allow_shadowing(false);
    replaced
}

/// Puts the escape check in front of preview 1's `path_symlink`
/// (`old_path` is the target, `new_path` the link made under `fd`).
pub(crate) fn guard_preview1<T: Send + 'static>(
    linker: &mut wasmtime::Linker<T>,
    get: fn(&mut T) -> &mut WasiP1Ctx,
) -> wasmtime::Result<()> {
    type Args = (i32, i32, i32, i32, i32);
    linker.allow_shadowing(true);
    let replaced = linker
        .func_wrap_async(
            WASI_P1,
            "path_symlink",
            move |mut caller: wasmtime::Caller<'_, T>, (old, old_len, fd, new, new_len): Args| {
                Box::new(async move {
                    let (bytes, ctx) = preview1_parts(&mut caller, get, "path_symlink")?;
                    let target = usize::try_from(old)
                        .ok()
                        .zip(usize::try_from(old_len).ok())
                        .and_then(|(at, len)| bytes.get(at..at.checked_add(len)?));
                    let Some(target) = target else {
                        return Ok(ERRNO_FAULT);
                    };
                    let target = String::from_utf8_lossy(target);
                    if let Some(why) = escape(&target) {
                        tracing::info!(%target, why, "refused a symlink out of a preopen");
                        return Ok(ERRNO_PERM);
                    }
                    let mut memory = wiggle::GuestMemory::Unshared(bytes);
                    wasi_snapshot_preview1::path_symlink(
                        ctx,
                        &mut memory,
                        old,
                        old_len,
                        fd,
                        new,
                        new_len,
                    )
                    .await
                })
            },
        )
        .map(|_| ());
    linker.allow_shadowing(false);
    replaced
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn targets_that_could_climb_out_are_named_and_the_rest_pass() {
        for bad in [
            "/etc/passwd",
            "..",
            "../x",
            "a/../../x",
            "a/..",
            "\\x",
            "a\\..\\b",
        ] {
            assert!(escape(bad).is_some(), "{bad}");
        }
        for good in ["x", "a/b", "./b", "a..b", "..x/y", "x/..y"] {
            assert_eq!(escape(good), None, "{good}");
        }
    }
}
