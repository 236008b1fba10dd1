//! `secrets`' relayed operations: one struct each, answered by [`Local`]
//! on the serving side, where the keys stay (see [`crate::cap::relay`]).
//! The interface has no `unavailable`: a relay that fails is the key not
//! found, with the reason.

use super::Local;
use crate::cap::bindings::workbooks::host::secrets::KeyError;
use crate::cap::relay::relay_calls;

relay_calls! {
    Secrets, serve sync Local,
    unanswered |op, why| Err(KeyError::NotFound(format!("{} ({why})", op.name)));
    /// `secrets.hmac-sha256`.
    Hmac { name: String, data: Vec<u8> } -> Result<Vec<u8>, KeyError>;
    /// `secrets.ed25519-sign`.
    Sign { name: String, data: Vec<u8> } -> Result<Vec<u8>, KeyError>;
    /// `secrets.ed25519-public-key`.
    Public { name: String } -> Result<Vec<u8>, KeyError>;
}
