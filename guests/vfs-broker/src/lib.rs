//! The vfs broker: serves the guest-facing `workbooks:engine/vfs`
//! interface over the host's `workbooks:host/volumes` primitive.
//!
//! It owns the guest-facing shape: a path over the length limit or holding
//! a NUL, and a file over the size limit, are refused here before their
//! bytes cross, with the limit. The host owns what must be trusted: the
//! (tenant, instance) the volumes belong to, path normalisation (a path
//! forms a storage identity) and the file, volume and count limits, so a
//! swapped broker cannot reach another instance's files or store more.

wit_bindgen::generate!({
    path: ["../../wit", "../../wit/host"],
    world: "workbooks:host/vfs-broker",
});

use exports::workbooks::engine::vfs::{Entry, EntryKind, Error, Guest, Metadata, Volume};
use workbooks::host::volumes as host;

/// The longest path, in bytes; the host holds the same limit.
const MAX_PATH_BYTES: usize = 1024;
/// The largest file, in bytes; the host holds the same limit.
const MAX_FILE_BYTES: u64 = 16 << 20;

struct VfsBroker;

fn path(p: &str) -> Result<&str, Error> {
    if p.len() > MAX_PATH_BYTES {
        return Err(Error::InvalidPath(format!(
            "longer than {MAX_PATH_BYTES} bytes"
        )));
    }
    if p.contains('\0') {
        return Err(Error::InvalidPath("contains NUL".into()));
    }
    Ok(p)
}

fn volume(v: Volume) -> host::Volume {
    match v {
        Volume::Workspace => host::Volume::Workspace,
        Volume::Memory => host::Volume::Memory,
        Volume::Tmp => host::Volume::Tmp,
    }
}

fn kind(k: host::EntryKind) -> EntryKind {
    match k {
        host::EntryKind::File => EntryKind::File,
        host::EntryKind::Directory => EntryKind::Directory,
    }
}

fn error(e: host::VolumeError) -> Error {
    use host::VolumeError as E;
    match e {
        E::InvalidPath(why) => Error::InvalidPath(why),
        E::NotFound => Error::NotFound,
        E::IsDirectory => Error::IsDirectory,
        E::NotDirectory => Error::NotDirectory,
        E::FileTooLarge(n) => Error::FileTooLarge(n),
        E::VolumeFull(n) => Error::VolumeFull(n),
        E::TooManyFiles(n) => Error::TooManyFiles(n),
        E::Unavailable(why) => Error::Unavailable(why),
    }
}

impl Guest for VfsBroker {
    fn read(v: Volume, p: String) -> Result<Vec<u8>, Error> {
        host::read(volume(v), path(&p)?).map_err(error)
    }

    fn write(v: Volume, p: String, data: Vec<u8>) -> Result<(), Error> {
        if data.len() as u64 > MAX_FILE_BYTES {
            return Err(Error::FileTooLarge(MAX_FILE_BYTES));
        }
        host::write(volume(v), path(&p)?, &data).map_err(error)
    }

    fn list_dir(v: Volume, dir: String) -> Result<Vec<Entry>, Error> {
        let entries = host::list_dir(volume(v), path(&dir)?).map_err(error)?;
        Ok(entries
            .into_iter()
            .map(|e| Entry {
                name: e.name,
                kind: kind(e.kind),
                size: e.size,
            })
            .collect())
    }

    fn remove(v: Volume, p: String) -> Result<bool, Error> {
        host::remove(volume(v), path(&p)?).map_err(error)
    }

    fn stat(v: Volume, p: String) -> Result<Metadata, Error> {
        let m = host::stat(volume(v), path(&p)?).map_err(error)?;
        Ok(Metadata {
            kind: kind(m.kind),
            size: m.size,
            modified_ms: m.modified_ms,
        })
    }
}

export!(VfsBroker);
