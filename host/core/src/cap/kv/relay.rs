//! `kv`'s relayed operations: one struct each, answered by [`Local`] on
//! the serving side (see [`crate::cap::relay`]).

use super::bindings::workbooks::host::kv::Error;
use super::storage::KvError;
use crate::cap::relay::relay_calls;
use serde::{Deserialize, Serialize};

/// `kv`'s refusal as the serving side answers it: the WIT `error`,
/// variant for variant (the bindgen type carries no serde).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Fault {
    /// See the WIT `error`.
    Revoked,
    /// See the WIT `error`.
    RateLimited,
    /// See the WIT `error`.
    InvalidKey(String),
    /// See the WIT `error`.
    ValueTooLarge(u64),
    /// See the WIT `error`.
    TooManyKeys(u32),
    /// See the WIT `error`.
    Unavailable(String),
}

impl From<KvError> for Fault {
    fn from(e: KvError) -> Self {
        match e {
            KvError::InvalidKey(why) => Fault::InvalidKey(why.to_string()),
            KvError::ValueTooLarge(n) => Fault::ValueTooLarge(n),
            KvError::TooManyKeys(n) => Fault::TooManyKeys(n),
            KvError::Unavailable(why) => Fault::Unavailable(why),
        }
    }
}

impl From<Fault> for Error {
    fn from(f: Fault) -> Self {
        match f {
            Fault::Revoked => Error::Revoked,
            Fault::RateLimited => Error::RateLimited,
            Fault::InvalidKey(why) => Error::InvalidKey(why),
            Fault::ValueTooLarge(n) => Error::ValueTooLarge(n),
            Fault::TooManyKeys(n) => Error::TooManyKeys(n),
            Fault::Unavailable(why) => Error::Unavailable(why),
        }
    }
}

relay_calls! {
    Kv, serve sync, unanswered |_, why| Err(Fault::Unavailable(why.to_string()));
    /// `kv.get`.
    Get { key: Vec<u8> } -> Result<Option<Vec<u8>>, Fault>;
    /// `kv.put`.
    Put { key: Vec<u8>, value: Vec<u8> } -> Result<(), Fault>;
    /// `kv.delete`.
    Delete { key: Vec<u8> } -> Result<bool, Fault>;
    /// `kv.contains`.
    Contains { key: Vec<u8> } -> Result<bool, Fault>;
    /// `kv.keys`.
    Keys { prefix: Vec<u8>, limit: u32 } -> Result<Vec<Vec<u8>>, Fault>;
}
