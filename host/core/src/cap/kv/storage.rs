//! One tenant's durable keys.
//!
//! Layout in the tenant's tree: `d<key>` holds a value, `#count` holds the
//! number of keys as a little-endian u32. A put that adds a key writes the
//! value and the new count in one atomic batch, under the kv write lock, so
//! the count never drifts and the key cap cannot be raced.

use super::{KV_MAX_KEY_BYTES, KV_MAX_KEYS_PER_TENANT, KV_MAX_VALUE_BYTES};
use crate::storage::{Storage, StorageError, validate_name};
use std::sync::{Arc, Mutex};

const DATA: u8 = b'd';
const COUNT_KEY: &[u8] = b"#count";

/// Why a kv operation was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KvError {
    /// The key was refused.
    #[error("invalid key: {0}")]
    InvalidKey(&'static str),
    /// The value is over [`KV_MAX_VALUE_BYTES`].
    #[error("value larger than {0} bytes")]
    ValueTooLarge(u64),
    /// The tenant holds [`KV_MAX_KEYS_PER_TENANT`] keys already.
    #[error("tenant already holds {0} keys")]
    TooManyKeys(u32),
    /// The backend failed.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
}

impl From<StorageError> for KvError {
    fn from(e: StorageError) -> Self {
        KvError::Unavailable(e.to_string())
    }
}

impl From<sled::Error> for KvError {
    fn from(e: sled::Error) -> Self {
        KvError::Unavailable(e.to_string())
    }
}

/// The kv write lock, one per database: a put that adds a key reads the
/// count and writes it back under it.
#[derive(Debug, Default)]
struct Writes(Mutex<()>);

/// A tenant's keys. Cheap to clone.
#[derive(Clone, Debug)]
pub struct TenantKv {
    storage: Storage,
    writes: Arc<Writes>,
    tree: sled::Tree,
}

impl Storage {
    /// The kv store of `tenant`.
    pub fn kv(&self, tenant: &str) -> Result<TenantKv, StorageError> {
        validate_name("tenant", tenant)?;
        Ok(TenantKv {
            storage: self.clone(),
            writes: self.shared(),
            tree: self.tree(&format!("kv/{tenant}"))?,
        })
    }
}

fn data_key(key: &[u8]) -> Result<Vec<u8>, KvError> {
    if key.is_empty() {
        return Err(KvError::InvalidKey("empty"));
    }
    if key.len() > KV_MAX_KEY_BYTES {
        return Err(KvError::InvalidKey("longer than 512 bytes"));
    }
    let mut k = Vec::with_capacity(key.len() + 1);
    k.push(DATA);
    k.extend_from_slice(key);
    Ok(k)
}

impl TenantKv {
    fn lock(&self) -> std::sync::MutexGuard<'_, ()> {
        self.writes.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The value under `key`.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, KvError> {
        Ok(self.tree.get(data_key(key)?)?.map(|v| v.to_vec()))
    }

    /// Whether `key` holds a value.
    pub fn contains(&self, key: &[u8]) -> Result<bool, KvError> {
        Ok(self.tree.contains_key(data_key(key)?)?)
    }

    /// Number of keys the tenant holds.
    pub fn len(&self) -> Result<u32, KvError> {
        Ok(self
            .tree
            .get(COUNT_KEY)?
            .and_then(|v| v.as_ref().try_into().ok())
            .map(u32::from_le_bytes)
            .unwrap_or(0))
    }

    /// Whether the tenant holds no keys.
    pub fn is_empty(&self) -> Result<bool, KvError> {
        Ok(self.len()? == 0)
    }

    /// Stores `value` under `key`; durable when it returns.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<(), KvError> {
        let k = data_key(key)?;
        if value.len() > KV_MAX_VALUE_BYTES {
            return Err(KvError::ValueTooLarge(KV_MAX_VALUE_BYTES as u64));
        }
        {
            let _guard = self.lock();
            let mut batch = sled::Batch::default();
            if !self.tree.contains_key(&k)? {
                let count = self.len()?;
                if count >= KV_MAX_KEYS_PER_TENANT {
                    return Err(KvError::TooManyKeys(KV_MAX_KEYS_PER_TENANT));
                }
                batch.insert(COUNT_KEY, &(count + 1).to_le_bytes());
            }
            batch.insert(k, value);
            self.tree.apply_batch(batch)?;
        }
        self.storage.flush()?;
        Ok(())
    }

    /// Removes `key`; returns whether it existed. Durable when it returns.
    pub fn delete(&self, key: &[u8]) -> Result<bool, KvError> {
        let k = data_key(key)?;
        let existed = {
            let _guard = self.lock();
            if !self.tree.contains_key(&k)? {
                return Ok(false);
            }
            let mut batch = sled::Batch::default();
            batch.remove(k);
            batch.insert(COUNT_KEY, &self.len()?.saturating_sub(1).to_le_bytes());
            self.tree.apply_batch(batch)?;
            true
        };
        self.storage.flush()?;
        Ok(existed)
    }

    /// Up to `limit` keys starting with `prefix`, in byte order.
    pub fn keys(&self, prefix: &[u8], limit: usize) -> Result<Vec<Vec<u8>>, KvError> {
        let mut p = Vec::with_capacity(prefix.len() + 1);
        p.push(DATA);
        p.extend_from_slice(prefix);
        self.tree
            .scan_prefix(p)
            .keys()
            .take(limit)
            .map(|k| Ok(k?[1..].to_vec()))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use crate::storage::Storage;

    /// The attack a per-handle lock would lose to: many stores of one
    /// tenant (each its own handle) adding and removing keys at once. The
    /// count is read and written back under the write lock, so it stays
    /// exact only if every handle of the database takes the same one.
    #[test]
    fn the_key_count_stays_exact_when_many_handles_write_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let storage = Storage::open(dir.path()).unwrap();
        let writers: Vec<_> = (0..8)
            .map(|w| {
                let kv = storage.kv("t").unwrap();
                std::thread::spawn(move || {
                    for i in 0..40 {
                        kv.put(format!("{w}/{i}").as_bytes(), b"v").unwrap();
                    }
                    for i in (0..40).step_by(2) {
                        assert!(kv.delete(format!("{w}/{i}").as_bytes()).unwrap());
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        let kv = storage.kv("t").unwrap();
        assert_eq!(kv.keys(b"", usize::MAX).unwrap().len(), 8 * 20);
        assert_eq!(kv.len().unwrap(), 8 * 20);
        // Another database has its own lock.
        let other = tempfile::tempdir().unwrap();
        let other = Storage::open(other.path()).unwrap().kv("t").unwrap();
        assert!(std::sync::Arc::ptr_eq(
            &kv.writes,
            &storage.kv("u").unwrap().writes
        ));
        assert!(!std::sync::Arc::ptr_eq(&kv.writes, &other.writes));
    }
}
