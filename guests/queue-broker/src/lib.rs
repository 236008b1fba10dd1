//! The queue broker: serves the guest-facing `workbooks:engine/queue`
//! interface over the host's `workbooks:host/queue` primitive.
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
    generate_all,
});

use exports::workbooks::engine::queue::{Error, Guest};
use workbooks::host::queue as host;

/// The largest message; the host holds the same limit.
const MAX_MESSAGE_BYTES: usize = 256 << 10;

struct QueueBroker;

impl Guest for QueueBroker {
    fn push(name: String, message: Vec<u8>) -> Result<u32, Error> {
        if message.len() > MAX_MESSAGE_BYTES {
            return Err(Error::MessageTooLarge(MAX_MESSAGE_BYTES as u64));
        }
        host::push(&name, &message)
    }

    fn pop(name: String) -> Result<Option<Vec<u8>>, Error> {
        host::pop(&name, 0)
    }

    fn pop_wait(name: String, timeout_ms: u32) -> Result<Option<Vec<u8>>, Error> {
        host::pop(&name, timeout_ms)
    }

    fn len(name: String) -> Result<u32, Error> {
        host::len(&name)
    }
}

export!(QueueBroker);
