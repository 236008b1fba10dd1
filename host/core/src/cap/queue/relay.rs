//! `queue`'s relayed operations: one struct each, answered by [`Local`]
//! on the serving side (see [`crate::cap::relay`]).

use super::bindings::workbooks::host::queue::Error;
use super::storage::QueueError;
use crate::cap::relay::relay_calls;
use serde::{Deserialize, Serialize};

/// `queue`'s refusal as the serving side answers it: the WIT
/// `error`, variant for variant (the bindgen type carries no serde).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Fault {
    /// See the WIT `error`.
    Revoked,
    /// See the WIT `error`.
    RateLimited,
    /// See the WIT `error`.
    InvalidName(String),
    /// See the WIT `error`.
    MessageTooLarge(u64),
    /// See the WIT `error`.
    QueueFull(u32),
    /// See the WIT `error`.
    TooManyQueues(u32),
    /// See the WIT `error`.
    TenantFull(u64),
    /// See the WIT `error`.
    Unavailable(String),
}

impl From<QueueError> for Fault {
    fn from(e: QueueError) -> Self {
        match e {
            QueueError::InvalidName(why) => Fault::InvalidName(why.to_string()),
            QueueError::MessageTooLarge(n) => Fault::MessageTooLarge(n),
            QueueError::Full(n) => Fault::QueueFull(n),
            QueueError::TooManyQueues(n) => Fault::TooManyQueues(n),
            QueueError::TenantFull(n) => Fault::TenantFull(n),
            QueueError::Unavailable(why) => Fault::Unavailable(why),
        }
    }
}

impl From<Fault> for Error {
    fn from(f: Fault) -> Self {
        match f {
            Fault::Revoked => Error::Revoked,
            Fault::RateLimited => Error::RateLimited,
            Fault::InvalidName(why) => Error::InvalidName(why),
            Fault::MessageTooLarge(n) => Error::MessageTooLarge(n),
            Fault::QueueFull(n) => Error::QueueFull(n),
            Fault::TooManyQueues(n) => Error::TooManyQueues(n),
            Fault::TenantFull(n) => Error::TenantFull(n),
            Fault::Unavailable(why) => Error::Unavailable(why),
        }
    }
}

relay_calls! {
    Queue, serve async, unanswered |_, why| Err(Fault::Unavailable(why.to_string()));
    /// `queue.push`.
    Push { name: String, message: Vec<u8> } -> Result<u32, Fault>;
    /// `queue.pop`.
    Pop { name: String, timeout_ms: u32 } -> Result<Option<Vec<u8>>, Fault>;
    /// `queue.len`.
    Len { name: String } -> Result<u32, Fault>;
}
