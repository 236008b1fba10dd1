//! One instance's volumes: `workspace`, `memory`, `tmp`, kept in the tree
//! `vfs/<tenant>/<instance>` of the engine's [`Storage`].
//!
//! No tree is keyed by an instance id alone: two tenants that pick the
//! same id reach different volumes. Volumes written before that scoping
//! (`vfs/<instance>`) are refused by id until the operator gives them to a
//! tenant or drops them ([`super::legacy`]).
//!
//! Layout in the instance's tree: a file is `[volume tag] path` →
//! `[modified-ms u64 LE] bytes`; a volume's usage is `[0xFF, tag]` →
//! `[bytes u64 LE][files u32 LE]`. Directories are implied by file paths; a
//! path is never both a file and a directory. Every path goes through
//! [`normalize`](super::path::normalize) first. Writes and removes
//! update file and usage in one atomic batch under the vfs write lock, then
//! flush.

use super::path::normalize;
use super::{VFS_MAX_FILE_BYTES, VFS_MAX_FILES_PER_VOLUME, VFS_MAX_VOLUME_BYTES};
use crate::storage::{Storage, StorageError, validate_name};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

const USAGE_TAG: u8 = 0xFF;

/// A named volume of an instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Volume {
    /// The working tree.
    Workspace,
    /// Long-term memory.
    Memory,
    /// Scratch, cleared when the instance starts or resumes.
    Tmp,
}

impl Volume {
    /// Every volume.
    pub const ALL: [Volume; 3] = [Volume::Workspace, Volume::Memory, Volume::Tmp];

    fn tag(self) -> u8 {
        match self {
            Volume::Workspace => 1,
            Volume::Memory => 2,
            Volume::Tmp => 3,
        }
    }

    /// The volume's name.
    pub fn name(self) -> &'static str {
        match self {
            Volume::Workspace => "workspace",
            Volume::Memory => "memory",
            Volume::Tmp => "tmp",
        }
    }

    /// Parses a volume name.
    pub fn parse(name: &str) -> Option<Volume> {
        Volume::ALL.into_iter().find(|v| v.name() == name)
    }
}

/// Why a vfs operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize, Deserialize)]
pub enum VfsError {
    /// The path was refused.
    #[error("invalid path: {0}")]
    InvalidPath(String),
    /// Nothing at the path.
    #[error("not found")]
    NotFound,
    /// The path is a directory.
    #[error("is a directory")]
    IsDirectory,
    /// A parent of the path is a file.
    #[error("not a directory")]
    NotDirectory,
    /// Over [`VFS_MAX_FILE_BYTES`].
    #[error("file larger than {0} bytes")]
    FileTooLarge(u64),
    /// Over [`VFS_MAX_VOLUME_BYTES`].
    #[error("volume would exceed {0} bytes")]
    VolumeFull(u64),
    /// Over [`VFS_MAX_FILES_PER_VOLUME`].
    #[error("volume already holds {0} files")]
    TooManyFiles(u32),
    /// The backend failed.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
}

impl From<sled::Error> for VfsError {
    fn from(e: sled::Error) -> Self {
        VfsError::Unavailable(e.to_string())
    }
}

impl From<StorageError> for VfsError {
    fn from(e: StorageError) -> Self {
        VfsError::Unavailable(e.to_string())
    }
}

/// File or directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum EntryKind {
    /// A file.
    File,
    /// A directory.
    Directory,
}

/// Metadata of a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Metadata {
    /// File or directory.
    pub kind: EntryKind,
    /// Bytes; 0 for a directory.
    pub size: u64,
    /// Last write in ms since the Unix epoch; 0 for a directory.
    pub modified_ms: u64,
}

/// One child of a directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VolumeEntry {
    /// One path segment.
    pub name: String,
    /// File or directory.
    pub kind: EntryKind,
    /// Bytes; 0 for a directory.
    pub size: u64,
}

/// An instance's volumes. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Volumes {
    storage: Storage,
    tree: sled::Tree,
    /// The database's vfs state, looked up once for every write.
    shared: Arc<VfsShared>,
}

fn key(volume: Volume, path: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(path.len() + 1);
    k.push(volume.tag());
    k.extend_from_slice(path.as_bytes());
    k
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn file_path(path: &str) -> Result<String, VfsError> {
    normalize(path, false).map_err(VfsError::InvalidPath)
}

/// What every store of one database shares for vfs: the write lock that
/// keeps a volume's usage true, and the instance ids that still have
/// unscoped volumes (read from the tree names on first use).
#[derive(Debug, Default)]
pub(super) struct VfsShared {
    writes: Mutex<()>,
    legacy: OnceLock<Mutex<BTreeSet<String>>>,
}

impl VfsShared {
    /// Holds the write lock until the guard drops.
    pub(super) fn writes(&self) -> MutexGuard<'_, ()> {
        self.writes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The ids with unscoped volumes in `storage`, scanned on first use.
    pub(super) fn legacy(&self, storage: &Storage) -> MutexGuard<'_, BTreeSet<String>> {
        self.legacy
            .get_or_init(|| Mutex::new(super::legacy::scan(storage.tree_names())))
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }
}

/// The tree holding the volumes of instance `id` of `tenant`.
pub(super) fn volume_tree(tenant: &str, id: &str) -> String {
    format!("vfs/{tenant}/{id}")
}

impl Storage {
    /// The volumes of instance `id` of `tenant`.
    pub fn volumes(&self, tenant: &str, id: &str) -> Result<Volumes, StorageError> {
        validate_name("tenant", tenant)?;
        validate_name("instance", id)?;
        let shared = self.vfs();
        if shared.legacy(self).contains(id) {
            return Err(StorageError::LegacyVolumes { id: id.to_string() });
        }
        let tree = self.tree(&volume_tree(tenant, id))?;
        Ok(Volumes {
            storage: self.clone(),
            tree,
            shared,
        })
    }

    /// What every store of this database shares for vfs.
    pub(super) fn vfs(&self) -> Arc<VfsShared> {
        self.shared::<VfsShared>()
    }
}

impl Volumes {
    /// Bytes and files held by `volume`.
    pub fn usage(&self, volume: Volume) -> Result<(u64, u32), VfsError> {
        let raw = self.tree.get([USAGE_TAG, volume.tag()])?;
        Ok(match raw {
            Some(v) if v.len() == 12 => {
                let bytes = u64::from_le_bytes(v[..8].try_into().unwrap_or([0; 8]));
                let files = u32::from_le_bytes(v[8..].try_into().unwrap_or([0; 4]));
                (bytes, files)
            }
            _ => (0, 0),
        })
    }

    fn usage_value(bytes: u64, files: u32) -> [u8; 12] {
        let mut v = [0u8; 12];
        v[..8].copy_from_slice(&bytes.to_le_bytes());
        v[8..].copy_from_slice(&files.to_le_bytes());
        v
    }

    fn is_dir(&self, volume: Volume, path: &str) -> Result<bool, VfsError> {
        if path.is_empty() {
            return Ok(true);
        }
        let prefix = key(volume, &format!("{path}/"));
        Ok(self.tree.scan_prefix(prefix).next().transpose()?.is_some())
    }

    /// Reads a whole file.
    pub fn read(&self, volume: Volume, path: &str) -> Result<Vec<u8>, VfsError> {
        let p = file_path(path)?;
        match self.tree.get(key(volume, &p))? {
            Some(v) => Ok(v.get(8..).unwrap_or_default().to_vec()),
            None if self.is_dir(volume, &p)? => Err(VfsError::IsDirectory),
            None => Err(VfsError::NotFound),
        }
    }

    /// Creates or replaces a file; durable when it returns.
    pub fn write(&self, volume: Volume, path: &str, data: &[u8]) -> Result<(), VfsError> {
        let p = file_path(path)?;
        if data.len() as u64 > VFS_MAX_FILE_BYTES {
            return Err(VfsError::FileTooLarge(VFS_MAX_FILE_BYTES));
        }
        {
            let _guard = self.shared.writes();
            for (i, _) in p.match_indices('/') {
                if self.tree.contains_key(key(volume, &p[..i]))? {
                    return Err(VfsError::NotDirectory);
                }
            }
            if self.is_dir(volume, &p)? {
                return Err(VfsError::IsDirectory);
            }
            let k = key(volume, &p);
            let old = self.tree.get(&k)?.map(|v| v.len().saturating_sub(8) as u64);
            let (bytes, files) = self.usage(volume)?;
            let bytes = bytes - old.unwrap_or(0).min(bytes) + data.len() as u64;
            if bytes > VFS_MAX_VOLUME_BYTES {
                return Err(VfsError::VolumeFull(VFS_MAX_VOLUME_BYTES));
            }
            let files = files + u32::from(old.is_none());
            if files > VFS_MAX_FILES_PER_VOLUME {
                return Err(VfsError::TooManyFiles(VFS_MAX_FILES_PER_VOLUME));
            }
            let mut value = Vec::with_capacity(8 + data.len());
            value.extend_from_slice(&now_ms().to_le_bytes());
            value.extend_from_slice(data);
            let mut batch = sled::Batch::default();
            batch.insert(k, value);
            batch.insert(
                &[USAGE_TAG, volume.tag()][..],
                &Self::usage_value(bytes, files)[..],
            );
            self.tree.apply_batch(batch)?;
        }
        self.storage.flush()?;
        Ok(())
    }

    /// Removes a file; returns whether it existed.
    pub fn remove(&self, volume: Volume, path: &str) -> Result<bool, VfsError> {
        let p = file_path(path)?;
        {
            let _guard = self.shared.writes();
            let k = key(volume, &p);
            let Some(old) = self.tree.get(&k)? else {
                if self.is_dir(volume, &p)? {
                    return Err(VfsError::IsDirectory);
                }
                return Ok(false);
            };
            let (bytes, files) = self.usage(volume)?;
            let size = old.len().saturating_sub(8) as u64;
            let mut batch = sled::Batch::default();
            batch.remove(k);
            batch.insert(
                &[USAGE_TAG, volume.tag()][..],
                &Self::usage_value(bytes.saturating_sub(size), files.saturating_sub(1))[..],
            );
            self.tree.apply_batch(batch)?;
        }
        self.storage.flush()?;
        Ok(true)
    }

    /// Describes a file or directory.
    pub fn stat(&self, volume: Volume, path: &str) -> Result<Metadata, VfsError> {
        let p = normalize(path, true).map_err(VfsError::InvalidPath)?;
        if let Some(v) = self.tree.get(key(volume, &p))? {
            let modified_ms = v
                .get(..8)
                .and_then(|b| b.try_into().ok())
                .map(u64::from_le_bytes)
                .unwrap_or(0);
            return Ok(Metadata {
                kind: EntryKind::File,
                size: v.len().saturating_sub(8) as u64,
                modified_ms,
            });
        }
        if self.is_dir(volume, &p)? {
            return Ok(Metadata {
                kind: EntryKind::Directory,
                size: 0,
                modified_ms: 0,
            });
        }
        Err(VfsError::NotFound)
    }

    /// Lists the direct children of a directory (`""` is the root).
    pub fn list(&self, volume: Volume, dir: &str) -> Result<Vec<VolumeEntry>, VfsError> {
        let d = normalize(dir, true).map_err(VfsError::InvalidPath)?;
        let prefix = if d.is_empty() {
            vec![volume.tag()]
        } else {
            key(volume, &format!("{d}/"))
        };
        let mut out: Vec<VolumeEntry> = Vec::new();
        for item in self.tree.scan_prefix(&prefix) {
            let (k, v) = item?;
            let rest = String::from_utf8_lossy(&k[prefix.len()..]).into_owned();
            match rest.split_once('/') {
                Some((child, _)) => {
                    if out.last().is_none_or(|e| e.name != child) {
                        out.push(VolumeEntry {
                            name: child.to_string(),
                            kind: EntryKind::Directory,
                            size: 0,
                        });
                    }
                }
                None => out.push(VolumeEntry {
                    name: rest,
                    kind: EntryKind::File,
                    size: v.len().saturating_sub(8) as u64,
                }),
            }
        }
        if out.is_empty() && !d.is_empty() {
            if self.tree.contains_key(key(volume, &d))? {
                return Err(VfsError::NotDirectory);
            }
            return Err(VfsError::NotFound);
        }
        Ok(out)
    }

    /// Every file of `volume`, in path order, with its bytes: one file in
    /// memory at a time.
    pub fn files(
        &self,
        volume: Volume,
    ) -> impl Iterator<Item = Result<(String, Vec<u8>), VfsError>> + '_ {
        self.tree.scan_prefix([volume.tag()]).map(|item| {
            let (k, v) = item?;
            let path = String::from_utf8_lossy(&k[1..]).into_owned();
            Ok((path, v.get(8..).unwrap_or_default().to_vec()))
        })
    }

    /// Removes every file of `volume`.
    pub fn clear(&self, volume: Volume) -> Result<(), VfsError> {
        {
            let _guard = self.shared.writes();
            let mut batch = sled::Batch::default();
            for k in self.tree.scan_prefix([volume.tag()]).keys() {
                batch.remove(k?);
            }
            batch.remove(&[USAGE_TAG, volume.tag()][..]);
            self.tree.apply_batch(batch)?;
        }
        self.storage.flush()?;
        Ok(())
    }
}
