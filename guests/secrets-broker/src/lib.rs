//! The secrets broker: serves the guest-facing `workbooks:engine/secrets`
//! interface over the host's `workbooks:host/secrets` primitive.
//!
//! It owns the guest-facing shape: names are checked here (a name the
//! host could never hold is `not-found` without a host call) and the data
//! cap is expressed before the bytes cross. The host owns what must be
//! trusted: the key material, the tenant, the cadence, and the same data
//! cap, so a swapped broker cannot sign more, reach another tenant's keys,
//! or read a private key (no primitive returns one).

wit_bindgen::generate!({
    path: ["../../wit", "../../wit/host"],
    world: "workbooks:host/secrets-broker",
    generate_all,
});

use exports::workbooks::engine::secrets::{Error, Guest};
use workbooks::host::secrets as host;

/// The most data one signing call takes; the host holds the same limit.
const MAX_DATA_BYTES: usize = 1 << 20;
/// The longest key name the host stores.
const MAX_NAME_BYTES: usize = 128;

struct SecretsBroker;

/// The name, if the host could hold a key by it.
fn checked(name: &str) -> Result<&str, Error> {
    let plausible = !name.is_empty()
        && name.len() <= MAX_NAME_BYTES
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if plausible {
        Ok(name)
    } else {
        Err(Error::NotFound(name.chars().take(64).collect()))
    }
}

fn within_cap(data: &[u8]) -> Result<&[u8], Error> {
    if data.len() > MAX_DATA_BYTES {
        return Err(Error::DataTooLarge(MAX_DATA_BYTES as u64));
    }
    Ok(data)
}

impl Guest for SecretsBroker {
    fn hmac_sha256(name: String, data: Vec<u8>) -> Result<Vec<u8>, Error> {
        host::hmac_sha256(checked(&name)?, within_cap(&data)?)
    }

    fn ed25519_sign(name: String, data: Vec<u8>) -> Result<Vec<u8>, Error> {
        host::ed25519_sign(checked(&name)?, within_cap(&data)?)
    }

    fn ed25519_public_key(name: String) -> Result<Vec<u8>, Error> {
        host::ed25519_public_key(checked(&name)?)
    }
}

export!(SecretsBroker);
