//! The vfs interface's relayed operations: one struct each, answered by
//! [`Local`] on the serving side (see [`crate::cap::relay`]). They carry
//! the store's own types, not the bindgen ones.

use super::storage::{Metadata, VfsError, Volume, VolumeEntry};
use crate::cap::relay::relay_calls;

relay_calls! {
    Vfs, serve sync, unanswered |_, why| Err(VfsError::Unavailable(why.to_string()));
    /// `vfs.read`.
    Read { volume: Volume, path: String } -> Result<Vec<u8>, VfsError>;
    /// `vfs.write`.
    Write { volume: Volume, path: String, data: Vec<u8> } -> Result<(), VfsError>;
    /// `vfs.list-dir`.
    List { volume: Volume, dir: String } -> Result<Vec<VolumeEntry>, VfsError>;
    /// `vfs.remove`.
    Remove { volume: Volume, path: String } -> Result<bool, VfsError>;
    /// `vfs.stat`.
    Stat { volume: Volume, path: String } -> Result<Metadata, VfsError>;
}
