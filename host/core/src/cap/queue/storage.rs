//! One tenant's named FIFO queues.
//!
//! Layout in the tenant's tree: a message is `m [name len u8] name [seq u64
//! BE]`, a queue's bounds are `h [name len u8] name` → `[head u64][tail
//! u64]`, and the tenant's usage is `t` → `[queues u32][bytes u64]`. A
//! queue exists while it holds messages: the pop that empties it removes
//! its bounds. Push and pop change message, bounds and usage in one atomic
//! batch under the queue write lock, so no cap can be raced and a crash
//! cannot lose or duplicate a message. Waiters in this process are woken
//! when a message arrives.
//!
//! Threat: queue names are the guest's to choose, so without a tenant-wide
//! cap one tenant could hold any number of queues of 1000 × 256 KiB each.
//! A tenant holds at most [`QUEUE_MAX_PER_TENANT`] non-empty queues and
//! [`QUEUE_MAX_TENANT_BYTES`] of messages in all.

use super::{
    QUEUE_MAX_DEPTH, QUEUE_MAX_MESSAGE_BYTES, QUEUE_MAX_PER_TENANT, QUEUE_MAX_TENANT_BYTES,
};
use crate::storage::{Storage, StorageError, name_fault, validate_name};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

/// Why a queue operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum QueueError {
    /// The queue name was refused.
    #[error("invalid queue name: {0}")]
    InvalidName(&'static str),
    /// Over [`QUEUE_MAX_MESSAGE_BYTES`].
    #[error("message larger than {0} bytes")]
    MessageTooLarge(u64),
    /// The queue holds [`QUEUE_MAX_DEPTH`] messages.
    #[error("queue already holds {0} messages")]
    Full(u32),
    /// The tenant holds [`QUEUE_MAX_PER_TENANT`] non-empty queues.
    #[error("the tenant already holds {0} queues")]
    TooManyQueues(u32),
    /// The tenant's queues hold [`QUEUE_MAX_TENANT_BYTES`] in all.
    #[error("the tenant's queues would hold more than {0} bytes")]
    TenantFull(u64),
    /// The backend failed.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
}

impl From<sled::Error> for QueueError {
    fn from(e: sled::Error) -> Self {
        QueueError::Unavailable(e.to_string())
    }
}

impl From<StorageError> for QueueError {
    fn from(e: StorageError) -> Self {
        QueueError::Unavailable(e.to_string())
    }
}

/// What every tenant's queues of one database share: the write lock
/// (push and pop read the bounds and usage and write them back under it)
/// and the wake-ups for waiting pops, by (tenant, queue).
#[derive(Debug, Default)]
struct Shared {
    writes: Mutex<()>,
    waiters: Mutex<HashMap<(String, String), Arc<Notify>>>,
}

/// A tenant's queues. Cheap to clone.
#[derive(Clone, Debug)]
pub struct TenantQueues {
    storage: Storage,
    shared: Arc<Shared>,
    tenant: String,
    tree: sled::Tree,
}

impl Storage {
    /// The queues of `tenant`.
    pub fn queues(&self, tenant: &str) -> Result<TenantQueues, StorageError> {
        validate_name("tenant", tenant)?;
        Ok(TenantQueues {
            storage: self.clone(),
            shared: self.shared(),
            tenant: tenant.to_string(),
            tree: self.tree(&format!("queue/{tenant}"))?,
        })
    }
}

/// The key of the tenant's usage record.
const USAGE: &[u8] = b"t";

fn usage_value(queues: u32, bytes: u64) -> [u8; 12] {
    let mut v = [0u8; 12];
    v[..4].copy_from_slice(&queues.to_be_bytes());
    v[4..].copy_from_slice(&bytes.to_be_bytes());
    v
}

fn check_name(name: &str) -> Result<(), QueueError> {
    name_fault(name).map_or(Ok(()), |why| Err(QueueError::InvalidName(why)))
}

fn key(tag: u8, name: &str, seq: Option<u64>) -> Vec<u8> {
    let mut k = Vec::with_capacity(2 + name.len() + 8);
    k.push(tag);
    k.push(name.len() as u8);
    k.extend_from_slice(name.as_bytes());
    if let Some(seq) = seq {
        k.extend_from_slice(&seq.to_be_bytes());
    }
    k
}

impl TenantQueues {
    fn lock(&self) -> std::sync::MutexGuard<'_, ()> {
        self.shared.writes.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn bounds(&self, name: &str) -> Result<(u64, u64), QueueError> {
        Ok(match self.tree.get(key(b'h', name, None))? {
            Some(v) if v.len() == 16 => (
                u64::from_be_bytes(v[..8].try_into().unwrap_or_default()),
                u64::from_be_bytes(v[8..].try_into().unwrap_or_default()),
            ),
            _ => (0, 0),
        })
    }

    fn bounds_value(head: u64, tail: u64) -> [u8; 16] {
        let mut v = [0u8; 16];
        v[..8].copy_from_slice(&head.to_be_bytes());
        v[8..].copy_from_slice(&tail.to_be_bytes());
        v
    }

    /// Non-empty queues and message bytes of the tenant. Trees written
    /// before usage was recorded are counted once, by a scan.
    fn usage(&self) -> Result<(u32, u64), QueueError> {
        if let Some(v) = self.tree.get(USAGE)?
            && v.len() == 12
        {
            let queues = u32::from_be_bytes(v[..4].try_into().unwrap_or_default());
            let bytes = u64::from_be_bytes(v[4..].try_into().unwrap_or_default());
            return Ok((queues, bytes));
        }
        let mut queues = 0u32;
        for item in self.tree.scan_prefix([b'h']) {
            let (_, v) = item?;
            if v.len() == 16 && v[..8] != v[8..] {
                queues += 1;
            }
        }
        let mut bytes = 0u64;
        for item in self.tree.scan_prefix([b'm']) {
            bytes += item?.1.len() as u64;
        }
        Ok((queues, bytes))
    }

    fn waiters(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), Arc<Notify>>> {
        self.shared
            .waiters
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Wakes the pops waiting on `name`, if any wait.
    fn wake(&self, name: &str) {
        let key = (self.tenant.clone(), name.to_string());
        if let Some(n) = self.waiters().get(&key) {
            n.notify_waiters();
        }
    }

    /// Appends a message; returns the new length. Durable when it returns.
    pub fn push(&self, name: &str, message: &[u8]) -> Result<u32, QueueError> {
        check_name(name)?;
        if message.len() > QUEUE_MAX_MESSAGE_BYTES {
            return Err(QueueError::MessageTooLarge(QUEUE_MAX_MESSAGE_BYTES as u64));
        }
        let len = {
            let _guard = self.lock();
            let (head, tail) = self.bounds(name)?;
            if tail - head >= u64::from(QUEUE_MAX_DEPTH) {
                return Err(QueueError::Full(QUEUE_MAX_DEPTH));
            }
            let (queues, bytes) = self.usage()?;
            let new_queue = head == tail;
            if new_queue && queues >= QUEUE_MAX_PER_TENANT {
                return Err(QueueError::TooManyQueues(QUEUE_MAX_PER_TENANT));
            }
            let bytes = bytes + message.len() as u64;
            if bytes > QUEUE_MAX_TENANT_BYTES {
                return Err(QueueError::TenantFull(QUEUE_MAX_TENANT_BYTES));
            }
            let mut batch = sled::Batch::default();
            batch.insert(key(b'm', name, Some(tail)), message);
            batch.insert(
                key(b'h', name, None),
                &Self::bounds_value(head, tail + 1)[..],
            );
            batch.insert(
                USAGE,
                &usage_value(queues + u32::from(new_queue), bytes)[..],
            );
            self.tree.apply_batch(batch)?;
            (tail + 1 - head) as u32
        };
        self.storage.flush()?;
        self.wake(name);
        Ok(len)
    }

    /// Takes the oldest message without waiting.
    pub fn pop(&self, name: &str) -> Result<Option<Vec<u8>>, QueueError> {
        check_name(name)?;
        let message = {
            let _guard = self.lock();
            let (head, tail) = self.bounds(name)?;
            if head == tail {
                return Ok(None);
            }
            let k = key(b'm', name, Some(head));
            let message = self.tree.get(&k)?.map(|v| v.to_vec());
            let (queues, bytes) = self.usage()?;
            let emptied = head + 1 == tail;
            let size = message.as_ref().map_or(0, |m| m.len() as u64);
            let mut batch = sled::Batch::default();
            batch.remove(k);
            if emptied {
                batch.remove(key(b'h', name, None));
            } else {
                batch.insert(
                    key(b'h', name, None),
                    &Self::bounds_value(head + 1, tail)[..],
                );
            }
            batch.insert(
                USAGE,
                &usage_value(
                    queues.saturating_sub(u32::from(emptied)),
                    bytes.saturating_sub(size),
                )[..],
            );
            self.tree.apply_batch(batch)?;
            message
        };
        self.storage.flush()?;
        Ok(message)
    }

    /// Takes the oldest message, waiting up to `timeout` for one.
    pub(crate) async fn pop_wait(
        &self,
        name: &str,
        timeout: Duration,
    ) -> Result<Option<Vec<u8>>, QueueError> {
        let deadline = tokio::time::Instant::now() + timeout;
        let key = (self.tenant.clone(), name.to_string());
        let notify = self.waiters().entry(key.clone()).or_default().clone();
        let popped = loop {
            let arrived = notify.notified();
            match self.pop(name) {
                Ok(None) => {}
                done => break done,
            }
            if tokio::time::timeout_at(deadline, arrived).await.is_err() {
                break self.pop(name);
            }
        };
        // The last waiter takes the entry with it.
        let mut waiters = self.waiters();
        if Arc::strong_count(&notify) == 2 {
            waiters.remove(&key);
        }
        popped
    }

    /// The number of messages waiting.
    pub fn len(&self, name: &str) -> Result<u32, QueueError> {
        check_name(name)?;
        let (head, tail) = self.bounds(name)?;
        Ok((tail - head) as u32)
    }

    /// Whether the queue is empty.
    pub fn is_empty(&self, name: &str) -> Result<bool, QueueError> {
        Ok(self.len(name)? == 0)
    }
}

#[cfg(test)]
mod tests {
    use crate::storage::Storage;

    #[test]
    fn a_tree_without_a_usage_record_is_counted_by_a_scan() {
        let dir = tempfile::tempdir().unwrap();
        let storage = Storage::open(dir.path()).unwrap();
        let q = storage.queues("old").unwrap();
        q.push("a", b"12345").unwrap();
        q.push("a", b"678").unwrap();
        q.push("b", b"9").unwrap();
        // As a tree written before usage was recorded would be.
        q.tree.remove(super::USAGE).unwrap();
        assert_eq!(q.usage().unwrap(), (2, 9));
        assert_eq!(q.pop("b").unwrap().unwrap(), b"9");
        assert_eq!(q.usage().unwrap(), (1, 8));
    }

    /// Many stores of one tenant (each its own handle) pushing to one
    /// queue and popping at once: bounds and usage are read and written
    /// back under the write lock, so they stay exact, and no message is
    /// lost or taken twice, only if every handle takes the same one.
    #[test]
    fn bounds_and_usage_stay_exact_when_many_handles_push_and_pop_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let storage = Storage::open(dir.path()).unwrap();
        let workers: Vec<_> = (0..8)
            .map(|w| {
                let q = storage.queues("t").unwrap();
                std::thread::spawn(move || {
                    for i in 0..30 {
                        q.push("q", format!("{w}/{i}").as_bytes()).unwrap();
                    }
                    (0..10)
                        .map(|_| q.pop("q").unwrap().expect("a message"))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut popped: Vec<_> = workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect();
        let q = storage.queues("t").unwrap();
        assert_eq!(q.len("q").unwrap(), 8 * 20);
        while let Some(m) = q.pop("q").unwrap() {
            popped.push(m);
        }
        popped.sort();
        popped.dedup();
        assert_eq!(popped.len(), 8 * 30, "a message lost or taken twice");
        assert_eq!(q.usage().unwrap(), (0, 0));
    }
}
