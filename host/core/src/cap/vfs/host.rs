use super::relay::{List, Read, Remove, Stat, Write};
use super::storage::{self, VfsError, VolumeEntry, Volumes};
use super::{Local, VfsCtx};
use crate::cap::bindings::workbooks::engine::vfs::{
    Entry, EntryKind, Error, Host, Metadata, Volume,
};
use crate::cap::relay::Serve;

fn volume(v: Volume) -> storage::Volume {
    match v {
        Volume::Workspace => storage::Volume::Workspace,
        Volume::Memory => storage::Volume::Memory,
        Volume::Tmp => storage::Volume::Tmp,
    }
}

fn kind(k: storage::EntryKind) -> EntryKind {
    match k {
        storage::EntryKind::File => EntryKind::File,
        storage::EntryKind::Directory => EntryKind::Directory,
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

impl Local {
    fn volumes(&mut self) -> Result<&Volumes, VfsError> {
        if self.volumes.is_none() {
            let (storage, tenant, id) = self
                .source
                .as_ref()
                .ok_or_else(|| VfsError::Unavailable("no volumes for this store".into()))?;
            let volumes = storage.get().and_then(|s| s.volumes(tenant, id))?;
            self.volumes = Some(volumes);
        }
        self.volumes
            .as_ref()
            .ok_or_else(|| VfsError::Unavailable("no volumes for this store".into()))
    }
}

impl Serve<Read> for Local {
    fn serve(&mut self, Read { volume, path }: Read) -> Result<Vec<u8>, VfsError> {
        self.volumes()?.read(volume, &path)
    }
}

impl Serve<Write> for Local {
    fn serve(&mut self, Write { volume, path, data }: Write) -> Result<(), VfsError> {
        self.volumes()?.write(volume, &path, &data)
    }
}

impl Serve<List> for Local {
    fn serve(&mut self, List { volume, dir }: List) -> Result<Vec<VolumeEntry>, VfsError> {
        self.volumes()?.list(volume, &dir)
    }
}

impl Serve<Remove> for Local {
    fn serve(&mut self, Remove { volume, path }: Remove) -> Result<bool, VfsError> {
        self.volumes()?.remove(volume, &path)
    }
}

impl Serve<Stat> for Local {
    fn serve(&mut self, Stat { volume, path }: Stat) -> Result<storage::Metadata, VfsError> {
        self.volumes()?.stat(volume, &path)
    }
}

impl Host for VfsCtx {
    fn read(&mut self, v: Volume, path: String) -> Result<Vec<u8>, Error> {
        let volume = volume(v);
        self.0.run(Read { volume, path }).map_err(error)
    }

    fn write(&mut self, v: Volume, path: String, data: Vec<u8>) -> Result<(), Error> {
        let volume = volume(v);
        self.0.run(Write { volume, path, data }).map_err(error)
    }

    fn list_dir(&mut self, v: Volume, dir: String) -> Result<Vec<Entry>, Error> {
        let volume = volume(v);
        let entries = self.0.run(List { volume, dir }).map_err(error)?;
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
        let volume = volume(v);
        self.0.run(Remove { volume, path }).map_err(error)
    }

    fn stat(&mut self, v: Volume, path: String) -> Result<Metadata, Error> {
        let volume = volume(v);
        let m = self.0.run(Stat { volume, path }).map_err(error)?;
        Ok(Metadata {
            kind: kind(m.kind),
            size: m.size,
            modified_ms: m.modified_ms,
        })
    }
}
