//! The vfs interface's relayed operations: one struct each, answered by
//! [`Local`] on the serving side (see [`crate::cap::relay`]).

use super::Local;
use crate::cap::bindings::workbooks::engine::vfs::{Entry, Error, Metadata, Volume};
use crate::cap::relay::relay_calls;

relay_calls! {
    Vfs, serve sync Local, unanswered |_, why| Err(Error::Unavailable(why.to_string()));
    /// `vfs.read`.
    Read { volume: Volume, path: String } -> Result<Vec<u8>, Error>;
    /// `vfs.write`.
    Write { volume: Volume, path: String, data: Vec<u8> } -> Result<(), Error>;
    /// `vfs.list-dir`.
    List { volume: Volume, dir: String } -> Result<Vec<Entry>, Error>;
    /// `vfs.remove`.
    Remove { volume: Volume, path: String } -> Result<bool, Error>;
    /// `vfs.stat`.
    Stat { volume: Volume, path: String } -> Result<Metadata, Error>;
}
