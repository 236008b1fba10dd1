//! `queue`'s relayed operations: one struct each, answered by [`Local`]
//! on the serving side (see [`crate::cap::relay`]).

use super::Local;
use crate::cap::bindings::workbooks::host::queue::QueueError as Error;
use crate::cap::relay::relay_calls;

relay_calls! {
    Queue, serve async Local, unanswered |_, why| Err(Error::Unavailable(why.to_string()));
    /// `queue.push`.
    Push { name: String, message: Vec<u8> } -> Result<u32, Error>;
    /// `queue.pop`.
    Pop { name: String, timeout_ms: u32 } -> Result<Option<Vec<u8>>, Error>;
    /// `queue.len`.
    Len { name: String } -> Result<u32, Error>;
}
