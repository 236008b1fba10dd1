use super::relay::{List, Read, Remove, Stat, Write};
use super::{Local, VfsCtx};
use crate::cap::bindings::workbooks::engine::vfs::{
    Entry, EntryKind, Error, Host, Metadata, Volume,
};
use crate::cap::relay::Serve;
use crate::store::{self, VfsError, Volumes};

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

impl Local {
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

impl Serve<Read> for Local {
    fn serve(&mut self, Read { volume: v, path }: Read) -> Result<Vec<u8>, Error> {
        self.volumes()?.read(volume(v), &path).map_err(error)
    }
}

impl Serve<Write> for Local {
    fn serve(
        &mut self,
        Write {
            volume: v,
            path,
            data,
        }: Write,
    ) -> Result<(), Error> {
        self.volumes()?
            .write(volume(v), &path, &data)
            .map_err(error)
    }
}

impl Serve<List> for Local {
    fn serve(&mut self, List { volume: v, dir }: List) -> Result<Vec<Entry>, Error> {
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
}

impl Serve<Remove> for Local {
    fn serve(&mut self, Remove { volume: v, path }: Remove) -> Result<bool, Error> {
        self.volumes()?.remove(volume(v), &path).map_err(error)
    }
}

impl Serve<Stat> for Local {
    fn serve(&mut self, Stat { volume: v, path }: Stat) -> Result<Metadata, Error> {
        let m = self.volumes()?.stat(volume(v), &path).map_err(error)?;
        Ok(Metadata {
            kind: kind(m.kind),
            size: m.size,
            modified_ms: m.modified_ms,
        })
    }
}

impl Host for VfsCtx {
    fn read(&mut self, volume: Volume, path: String) -> Result<Vec<u8>, Error> {
        self.0.run(Read { volume, path })
    }

    fn write(&mut self, volume: Volume, path: String, data: Vec<u8>) -> Result<(), Error> {
        self.0.run(Write { volume, path, data })
    }

    fn list_dir(&mut self, volume: Volume, dir: String) -> Result<Vec<Entry>, Error> {
        self.0.run(List { volume, dir })
    }

    fn remove(&mut self, volume: Volume, path: String) -> Result<bool, Error> {
        self.0.run(Remove { volume, path })
    }

    fn stat(&mut self, volume: Volume, path: String) -> Result<Metadata, Error> {
        self.0.run(Stat { volume, path })
    }
}
