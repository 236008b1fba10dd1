//! `secrets`' relayed operations: one struct each, answered by [`Local`]
//! on the serving side, where the keys stay (see [`crate::cap::relay`]).
//! The interface has no `unavailable`: a relay that fails is the key not
//! found, with the reason.

use super::bindings::workbooks::host::secrets::Error;
use crate::cap::relay::relay_calls;
use serde::{Deserialize, Serialize};

/// `secrets`' refusal as the serving side answers it: the WIT
/// `error`, variant for variant (the bindgen type carries no serde).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Fault {
    /// See the WIT `error`.
    Revoked,
    /// See the WIT `error`.
    RateLimited,
    /// See the WIT `error`.
    NotFound(String),
    /// See the WIT `error`.
    WrongKind(String),
    /// See the WIT `error`.
    DataTooLarge(u64),
}

impl From<Fault> for Error {
    fn from(f: Fault) -> Self {
        match f {
            Fault::Revoked => Error::Revoked,
            Fault::RateLimited => Error::RateLimited,
            Fault::NotFound(name) => Error::NotFound(name),
            Fault::WrongKind(kind) => Error::WrongKind(kind),
            Fault::DataTooLarge(n) => Error::DataTooLarge(n),
        }
    }
}

relay_calls! {
    Secrets, serve sync,
    unanswered |op, why| Err(Fault::NotFound(format!("{} ({why})", op.name)));
    /// `secrets.hmac-sha256`.
    Hmac { name: String, data: Vec<u8> } -> Result<Vec<u8>, Fault>;
    /// `secrets.ed25519-sign`.
    Sign { name: String, data: Vec<u8> } -> Result<Vec<u8>, Fault>;
    /// `secrets.ed25519-public-key`.
    Public { name: String } -> Result<Vec<u8>, Fault>;
}
