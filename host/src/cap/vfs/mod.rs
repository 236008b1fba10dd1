//! `vfs`: the instance's own volumes, plus `wasi:filesystem` over the
//! directories the caller preopened.
//!
//! Three layers for the volumes: the guest imports
//! `workbooks:engine/vfs@0.1.0`; the dock composes it with the vfs broker
//! (`guests/vfs-broker`), which checks paths and sizes and calls the host
//! primitive `workbooks:host/volumes@0.1.0` implemented here.
//! `wasi:filesystem/{types,preopens}` stays in the host (wasmtime-wasi):
//! it is a resource-heavy WASI interface (descriptors, streams) the guest
//! and host share directly, and it sees only the preopens the caller
//! listed; none by default.
//! Invariant: a store reaches only the volumes of the (tenant, instance id)
//! the host docked it with, never those of another tenant that picked the
//! same id; every path is normalised and refused if it could escape
//! ([`crate::store::normalize_vfs_path`]). A guest cannot plant a symlink in
//! a preopened directory that points out of it ([`symlink`]): the host's own
//! tools, which do follow links, would otherwise be led outside later.

mod host;
mod symlink;

use crate::bindings::workbooks::host::volumes;
use crate::store::{StorageSlot, Volumes};
use std::sync::Arc;
use wasmtime::component::{HasSelf, Linker};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::filesystem::{WasiFilesystem, WasiFilesystemView};

/// The volumes one store may reach, opened on first use; the default
/// reaches nothing.
#[derive(Debug, Default)]
pub(crate) struct VfsCtx {
    source: Option<(Arc<StorageSlot>, String, String)>,
    volumes: Option<Volumes>,
}

impl VfsCtx {
    /// Reaches the volumes of instance `id` of `tenant` (validated names).
    pub(crate) fn new(storage: Arc<StorageSlot>, tenant: String, id: String) -> Self {
        Self {
            source: Some((storage, tenant, id)),
            volumes: None,
        }
    }
}

/// Links the `volumes` primitive the vfs broker imports, and
/// `wasi:filesystem`.
pub(crate) fn add_to_linker<T: WasiView + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut VfsCtx,
) -> wasmtime::Result<()> {
    use wasmtime_wasi::p2::bindings::filesystem;
    volumes::add_to_linker::<T, HasSelf<VfsCtx>>(linker, get)?;
    filesystem::types::add_to_linker::<T, WasiFilesystem>(linker, T::filesystem)?;
    filesystem::preopens::add_to_linker::<T, WasiFilesystem>(linker, T::filesystem)?;
    symlink::guard(linker)
}
