//! `kv`'s relayed operations: one struct each, answered by [`Local`] on
//! the serving side (see [`crate::cap::relay`]).

use super::Local;
use crate::cap::bindings::workbooks::host::kv::Error;
use crate::cap::relay::relay_calls;

relay_calls! {
    Kv, serve sync Local, unanswered |_, why| Err(Error::Unavailable(why.to_string()));
    /// `kv.get`.
    Get { key: Vec<u8> } -> Result<Option<Vec<u8>>, Error>;
    /// `kv.put`.
    Put { key: Vec<u8>, value: Vec<u8> } -> Result<(), Error>;
    /// `kv.delete`.
    Delete { key: Vec<u8> } -> Result<bool, Error>;
    /// `kv.contains`.
    Contains { key: Vec<u8> } -> Result<bool, Error>;
    /// `kv.keys`.
    Keys { prefix: Vec<u8>, limit: u32 } -> Result<Vec<Vec<u8>>, Error>;
}
