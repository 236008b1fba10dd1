//! The queue broker: serves the guest-facing `workbooks:engine/queue`
//! interface over the host's `workbooks:host/fifo` primitive.
//!
//! It owns the guest-facing shape: `pop` and `pop-wait` are one primitive
//! call with a wait of zero or the caller's, and the message cap is
//! expressed before the bytes cross. The host owns what must be trusted:
//! the tenant, the cadence, the queue name (it forms a storage identity),
//! the message, depth and tenant caps and the longest wait, so a swapped
//! broker cannot store more, wait longer, or reach another tenant's queues.

wit_bindgen::generate!({
    path: ["../../wit", "../../wit/host"],
    world: "workbooks:host/queue-broker",
});

use exports::workbooks::engine::queue::{Error, Guest};
use workbooks::host::fifo::{self, FifoError};

/// The largest message; the host holds the same limit.
const MAX_MESSAGE_BYTES: usize = 256 << 10;

struct QueueBroker;

fn map_error(e: FifoError) -> Error {
    match e {
        FifoError::Revoked => Error::Revoked,
        FifoError::RateLimited => Error::RateLimited,
        FifoError::InvalidName(why) => Error::InvalidName(why),
        FifoError::MessageTooLarge(limit) => Error::MessageTooLarge(limit),
        FifoError::QueueFull(limit) => Error::QueueFull(limit),
        FifoError::TooManyQueues(limit) => Error::TooManyQueues(limit),
        FifoError::TenantFull(limit) => Error::TenantFull(limit),
        FifoError::Unavailable(why) => Error::Unavailable(why),
    }
}

impl Guest for QueueBroker {
    fn push(name: String, message: Vec<u8>) -> Result<u32, Error> {
        if message.len() > MAX_MESSAGE_BYTES {
            return Err(Error::MessageTooLarge(MAX_MESSAGE_BYTES as u64));
        }
        fifo::push(&name, &message).map_err(map_error)
    }

    fn pop(name: String) -> Result<Option<Vec<u8>>, Error> {
        fifo::pop(&name, 0).map_err(map_error)
    }

    fn pop_wait(name: String, timeout_ms: u32) -> Result<Option<Vec<u8>>, Error> {
        fifo::pop(&name, timeout_ms).map_err(map_error)
    }

    fn len(name: String) -> Result<u32, Error> {
        fifo::len(&name).map_err(map_error)
    }
}

export!(QueueBroker);
