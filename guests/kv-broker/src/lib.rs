//! The kv broker: serves the guest-facing `workbooks:engine/kv` interface over
//! the host's tenant-scoped `workbooks:host/kv` primitive.
//!
//! The host composes this component with every guest that imports kv (wac
//! plug at dock time), so the guest sees kv and never the primitive. It owns
//! the guest-facing shape: string keys, NUL refused, keys listed as strings.
//! The host owns the hard limits (value size, key count, key length) and the
//! tenant, so swapping this broker can change the shape but never widen what
//! a guest may store or whose keys it reaches.

wit_bindgen::generate!({
    path: ["../../wit", "../../wit/host"],
    world: "workbooks:host/kv-broker",
    generate_all,
});

use exports::workbooks::engine::kv::{Error as KvError, Guest};
use workbooks::host::kv as host;

/// Keys a listing returns at most; the host caps a tenant at this many keys.
const LIST_LIMIT: u32 = 10_000;

struct KvBroker;

fn check_key(key: &str) -> Result<&[u8], KvError> {
    if key.contains('\0') {
        return Err(KvError::InvalidKey("key contains NUL".into()));
    }
    Ok(key.as_bytes())
}

impl Guest for KvBroker {
    fn get(key: String) -> Result<Option<Vec<u8>>, KvError> {
        host::get(check_key(&key)?)
    }

    fn set(key: String, value: Vec<u8>) -> Result<(), KvError> {
        host::put(check_key(&key)?, &value)
    }

    fn delete(key: String) -> Result<bool, KvError> {
        host::delete(check_key(&key)?)
    }

    fn exists(key: String) -> Result<bool, KvError> {
        host::contains(check_key(&key)?)
    }

    fn list_keys(prefix: String) -> Result<Vec<String>, KvError> {
        let keys = host::keys(check_key(&prefix)?, LIST_LIMIT)?;
        // Every key was written through `set`, so it is UTF-8.
        Ok(keys
            .into_iter()
            .filter_map(|k| String::from_utf8(k).ok())
            .collect())
    }
}

export!(KvBroker);
