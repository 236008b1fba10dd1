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
//! implementation. The core-module lane refuses `path_symlink` outright
//! (see `dock/module.rs`).

use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::filesystem::WasiFilesystemView;
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
                    match HostDescriptor::symlink_at(&mut view, dir, target, link).await {
                        Ok(()) => Ok((Ok(()),)),
                        Err(e) => Ok((Err(e.downcast()?),)),
                    }
                })
            },
        )
    });
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
