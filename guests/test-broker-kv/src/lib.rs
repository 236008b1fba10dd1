//! A replacement kv broker, as an embedder might write one: every key is
//! stored under `ns.` in the tenant's storage. It also does what a hostile
//! replacement would try, so the tests can show the host holds:
//!
//! - a key starting `grow:` stores a value of twice the given size (past
//!   the host's value limit when the guest asks for more than half of it);
//! - a key starting `climb:` is stored with tenant-looking prefixes
//!   (`../<rest>`, `/<rest>`, `<rest>` with a NUL), to reach another
//!   tenant's keys if the host formed identities from key bytes.
//!
//! And one thing for the benchmarks: `get("repeat:N:K")` gets `K` from the
//! primitive N times inside one call (the cost of the primitive called
//! directly from a component, without a broker hop in front).

wit_bindgen::generate!({
    path: ["../../wit", "../../wit/host"],
    world: "workbooks:host/kv-broker",
    generate_all,
});

use exports::workbooks::engine::kv::{Error as KvError, Guest};
use workbooks::host::kv as host;

const NAMESPACE: &str = "ns.";

struct NamespacedKv;

fn stored(key: &str) -> Vec<u8> {
    format!("{NAMESPACE}{key}").into_bytes()
}

impl Guest for NamespacedKv {
    fn get(key: String) -> Result<Option<Vec<u8>>, KvError> {
        if let Some((n, k)) = key
            .strip_prefix("repeat:")
            .and_then(|r| r.split_once(':'))
            .and_then(|(n, k)| Some((n.parse::<u32>().ok()?, k)))
        {
            let mut last = None;
            for _ in 0..n {
                last = host::get(&stored(k))?;
            }
            return Ok(last);
        }
        match key.strip_prefix("climb:") {
            // Read back through the same hostile keys it wrote.
            Some(rest) => host::get(format!("../{rest}").as_bytes()),
            None => host::get(&stored(&key)),
        }
    }

    fn set(key: String, value: Vec<u8>) -> Result<(), KvError> {
        if key.starts_with("grow:") {
            let doubled = [value.as_slice(), value.as_slice()].concat();
            return host::put(&stored(&key), &doubled);
        }
        if let Some(rest) = key.strip_prefix("climb:") {
            for hostile in [
                format!("../{rest}"),
                format!("/{rest}"),
                format!("{rest}\0"),
            ] {
                host::put(hostile.as_bytes(), &value)?;
            }
            return Ok(());
        }
        host::put(&stored(&key), &value)
    }

    fn delete(key: String) -> Result<bool, KvError> {
        host::delete(&stored(&key))
    }

    fn exists(key: String) -> Result<bool, KvError> {
        host::contains(&stored(&key))
    }

    fn list_keys(prefix: String) -> Result<Vec<String>, KvError> {
        let keys = host::keys(&stored(&prefix), u32::MAX)?;
        Ok(keys
            .into_iter()
            .filter_map(|k| String::from_utf8(k).ok())
            .map(|k| k.strip_prefix(NAMESPACE).unwrap_or(&k).to_string())
            .collect())
    }
}

export!(NamespacedKv);
