//! `vfs`: the instance's own volumes, plus `wasi:filesystem` over the
//! directories the caller preopened.
//!
//! Interfaces: `workbooks:engine/vfs@0.1.0` (served here, in the host,
//! with no broker component: files move in bulk, and a component hop
//! copies every byte again, measured at +1.9 ms per MB with
//! `cargo bench -p workbooks-cli --bench brokers` against 59 µs for the
//! storage read itself) and `wasi:filesystem/{types,preopens}` at 0.2 and 0.3 (wasmtime-wasi,
//! which sees only the preopens the caller listed; none by default).
//! Invariant: a store reaches only the volumes of the (tenant, instance id)
//! the host docked it with, never those of another tenant that picked the
//! same id; every path is normalised and refused if it could escape
//! ([`path::normalize`]); the volumes live in the engine's storage
//! ([`storage`]). A guest cannot plant a symlink in
//! a preopened directory that points out of it ([`symlink`]): the host's own
//! tools, which do follow links, would otherwise be led outside later. A
//! store holds at most [`crate::limits::MAX_FILES_PER_STORE`] open files
//! ([`file_count`]).

mod file_count;
mod host;
mod legacy;
pub mod path;
pub(crate) mod relay;
pub mod storage;
mod symlink;

pub(crate) use file_count::count_preview1;
pub(crate) use symlink::guard_preview1;

use crate::cap::bindings::workbooks::engine::vfs;
use crate::cap::relay::{Backend, Relay};
use crate::cap::unit::{CapUnit, Holds, Opening};
use crate::storage::{StorageError, StorageSlot};
use std::sync::Arc;
use storage::Volumes;
use wasmtime::component::{HasSelf, Linker};
use wasmtime_wasi::WasiCtxBuilder;
use wasmtime_wasi::filesystem::{WasiFilesystem, WasiFilesystemView};

/// Longest vfs path, in bytes.
pub const VFS_MAX_PATH_BYTES: usize = 1024;

/// Longest single path segment, in bytes (the common file-system limit).
pub const VFS_MAX_SEGMENT_BYTES: usize = 255;

/// Deepest vfs path, in segments. Bounds the parent checks a write makes.
pub const VFS_MAX_DEPTH: usize = 32;

/// Largest vfs file. A file is read whole into guest memory, so this stays
/// well under the smallest profile's 64 MiB.
pub const VFS_MAX_FILE_BYTES: u64 = 16 << 20;

/// Bytes one volume of one instance may hold.
pub const VFS_MAX_VOLUME_BYTES: u64 = 256 << 20;

/// Files one volume of one instance may hold; bounds every listing.
pub const VFS_MAX_FILES_PER_VOLUME: u32 = 10_000;

/// The volumes one store may reach: here, or through the relay. The
/// default reaches nothing.
#[derive(Debug, Default)]
pub(crate) struct VfsCtx(pub(crate) Backend<Local>);

/// The volumes of one instance in this process, opened on first use.
#[derive(Debug, Default)]
pub(crate) struct Local {
    source: Option<(Arc<StorageSlot>, String, String)>,
    volumes: Option<Volumes>,
}

impl VfsCtx {
    /// Reaches the volumes of instance `id` of `tenant` (validated
    /// names), or sends every volume call to `relay` (see
    /// [`crate::cap::relay`]).
    pub(crate) fn open(
        relay: Option<&Arc<dyn Relay>>,
        storage: &Arc<StorageSlot>,
        tenant: &str,
        id: &str,
    ) -> Self {
        VfsCtx(Backend::open(relay, || Local {
            source: Some((storage.clone(), tenant.to_string(), id.to_string())),
            volumes: None,
        }))
    }
}

/// The `vfs` unit: the volumes interface and `wasi:filesystem`.
pub(crate) struct Vfs;

impl CapUnit for Vfs {
    const INTERFACE: &'static str = "workbooks:engine/vfs";
    const PER_TENANT: bool = true;
    type Ctx = VfsCtx;

    /// The vfs interface and `wasi:filesystem` 0.2, with the symlink
    /// guard and the file count.
    fn link<T: Holds<Self>>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
        use wasmtime_wasi::p2::bindings::filesystem;
        vfs::add_to_linker::<T, HasSelf<VfsCtx>>(linker, T::context)?;
        filesystem::types::add_to_linker::<T, WasiFilesystem>(linker, T::filesystem)?;
        filesystem::preopens::add_to_linker::<T, WasiFilesystem>(linker, T::filesystem)?;
        symlink::guard(linker)?;
        file_count::add_to_linker(linker, T::descriptors)
    }

    /// `wasi:filesystem` 0.3.0: the same preopens, through the async
    /// interfaces, with the same guard and count.
    fn link_03<T: Holds<Self>>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
        wasmtime_wasi::p3::filesystem::add_to_linker(linker)?;
        symlink::guard_03(linker)?;
        file_count::add_03_to_linker(linker, T::descriptors)
    }

    fn open(o: &Opening<'_>, _: &mut WasiCtxBuilder) -> Result<VfsCtx, StorageError> {
        if o.relay.is_none() {
            crate::storage::validate_name("instance", o.id)?;
        }
        Ok(VfsCtx::open(o.relay, o.storage, o.tenant, o.id))
    }
}
