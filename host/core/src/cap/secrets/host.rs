use super::keyring::{Secret, SecretError};
use super::relay::{Hmac, Public, Sign};
use super::{Local, SecretsCtx};
use crate::cadence::Denial;
use crate::cap::bindings::workbooks::host::secrets::{Host, KeyError};
use crate::cap::relay::Serve;
use crate::limits::SECRETS_MAX_DATA_BYTES;

impl Local {
    /// The cadence, the data cap, then the named key of the store's tenant.
    fn secret(&self, name: &str, data_len: usize) -> Result<Secret, KeyError> {
        let (keyring, tenant, cadence) = self
            .0
            .as_ref()
            .ok_or(KeyError::NotFound(name.to_string()))?;
        cadence.admit(tenant, "secrets").map_err(|d| match d {
            Denial::Revoked => KeyError::Revoked,
            _ => KeyError::RateLimited,
        })?;
        if data_len > SECRETS_MAX_DATA_BYTES {
            return Err(KeyError::DataTooLarge(SECRETS_MAX_DATA_BYTES as u64));
        }
        keyring.get(tenant, name).ok_or_else(|| {
            cadence.deny(tenant, "secrets", Denial::Guard("secret_not_found"), name);
            KeyError::NotFound(name.to_string())
        })
    }
}

fn kind_error(e: SecretError) -> KeyError {
    match e {
        SecretError::WrongKind(k) => KeyError::WrongKind(format!("{k:?}").to_lowercase()),
        other => KeyError::WrongKind(other.to_string()),
    }
}

impl Serve<Hmac> for Local {
    fn serve(&mut self, Hmac { name, data }: Hmac) -> Result<Vec<u8>, KeyError> {
        self.secret(&name, data.len())?
            .hmac_sha256(&data)
            .map_err(kind_error)
    }
}

impl Serve<Sign> for Local {
    fn serve(&mut self, Sign { name, data }: Sign) -> Result<Vec<u8>, KeyError> {
        self.secret(&name, data.len())?
            .ed25519_sign(&data)
            .map_err(kind_error)
    }
}

impl Serve<Public> for Local {
    fn serve(&mut self, Public { name }: Public) -> Result<Vec<u8>, KeyError> {
        self.secret(&name, 0)?
            .ed25519_public_key()
            .map_err(kind_error)
    }
}

impl Host for SecretsCtx {
    fn hmac_sha256(&mut self, name: String, data: Vec<u8>) -> Result<Vec<u8>, KeyError> {
        self.0.run(Hmac { name, data })
    }

    fn ed25519_sign(&mut self, name: String, data: Vec<u8>) -> Result<Vec<u8>, KeyError> {
        self.0.run(Sign { name, data })
    }

    fn ed25519_public_key(&mut self, name: String) -> Result<Vec<u8>, KeyError> {
        self.0.run(Public { name })
    }
}
