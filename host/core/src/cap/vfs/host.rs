use super::VfsCtx;
use crate::cap::bindings::workbooks::engine::vfs::{
    Entry, EntryKind, Error, Host, Metadata, Volume,
};
use crate::cap::relay::{Call, Relay, answered};
use crate::store::{self, VfsError, Volumes};

/// `call`'s answer from `relay`; a relay that fails is `unavailable`.
fn relayed<T: serde::de::DeserializeOwned>(relay: &dyn Relay, call: Call) -> Result<T, Error> {
    answered(relay, call, Error::Unavailable)
}

fn volume(v: Volume) -> store::Volume {
    match v {
        Volume::Workspace => store::Volume::Workspace,
        Volume::Memory => store::Volume::Memory,
        Volume::Tmp => store::Volume::Tmp,
    }
}

fn kind(k: store::EntryKind) -> EntryKind {
    match k {
        store::EntryKind::File => EntryKind::File,
        store::EntryKind::Directory => EntryKind::Directory,
    }
}

fn error(e: VfsError) -> Error {
    match e {
        VfsError::InvalidPath(why) => Error::InvalidPath(why),
        VfsError::NotFound => Error::NotFound,
        VfsError::IsDirectory => Error::IsDirectory,
        VfsError::NotDirectory => Error::NotDirectory,
        VfsError::FileTooLarge(n) => Error::FileTooLarge(n),
        VfsError::VolumeFull(n) => Error::VolumeFull(n),
        VfsError::TooManyFiles(n) => Error::TooManyFiles(n),
        VfsError::Unavailable(why) => Error::Unavailable(why),
    }
}

impl VfsCtx {
    fn volumes(&mut self) -> Result<&Volumes, Error> {
        if self.volumes.is_none() {
            let (storage, tenant, id) = self
                .source
                .as_ref()
                .ok_or_else(|| Error::Unavailable("no volumes for this store".into()))?;
            let volumes = storage
                .get()
                .and_then(|s| s.volumes(tenant, id))
                .map_err(|e| Error::Unavailable(e.to_string()))?;
            self.volumes = Some(volumes);
        }
        self.volumes
            .as_ref()
            .ok_or_else(|| Error::Unavailable("no volumes for this store".into()))
    }
}

impl Host for VfsCtx {
    fn read(&mut self, v: Volume, path: String) -> Result<Vec<u8>, Error> {
        if let Some(relay) = &self.relay {
            return relayed(&**relay, Call::VfsRead { volume: v, path });
        }
        self.volumes()?.read(volume(v), &path).map_err(error)
    }

    fn write(&mut self, v: Volume, path: String, data: Vec<u8>) -> Result<(), Error> {
        if let Some(relay) = &self.relay {
            return relayed(
                &**relay,
                Call::VfsWrite {
                    volume: v,
                    path,
                    data,
                },
            );
        }
        self.volumes()?
            .write(volume(v), &path, &data)
            .map_err(error)
    }

    fn list_dir(&mut self, v: Volume, dir: String) -> Result<Vec<Entry>, Error> {
        if let Some(relay) = &self.relay {
            return relayed(&**relay, Call::VfsList { volume: v, dir });
        }
        let entries = self.volumes()?.list(volume(v), &dir).map_err(error)?;
        Ok(entries
            .into_iter()
            .map(|e| Entry {
                name: e.name,
                kind: kind(e.kind),
                size: e.size,
            })
            .collect())
    }

    fn remove(&mut self, v: Volume, path: String) -> Result<bool, Error> {
        if let Some(relay) = &self.relay {
            return relayed(&**relay, Call::VfsRemove { volume: v, path });
        }
        self.volumes()?.remove(volume(v), &path).map_err(error)
    }

    fn stat(&mut self, v: Volume, path: String) -> Result<Metadata, Error> {
        if let Some(relay) = &self.relay {
            return relayed(&**relay, Call::VfsStat { volume: v, path });
        }
        let m = self.volumes()?.stat(volume(v), &path).map_err(error)?;
        Ok(Metadata {
            kind: kind(m.kind),
            size: m.size,
            modified_ms: m.modified_ms,
        })
    }
}
