use super::SECRETS_MAX_DATA_BYTES;
use super::bindings::workbooks::host::secrets::{Error, Host};
use super::keyring::{Secret, SecretError};
use super::relay::{Fault, Hmac, Public, Sign};
use super::{Local, SecretsCtx};
use crate::cadence::Denial;
use crate::cap::relay::Serve;
use crate::grants::CapNoun;

/// How a grant's names name this cap and its names.
const SCOPED_AS: CapNoun = CapNoun {
    cap: "secrets",
    noun: "secret",
};

impl Local {
    /// The cadence, the grant's scope, the data cap, then the named key of
    /// the store's tenant. A name the grant does not name is not found
    /// (the text names the grant); a grant expired or revoked refuses every
    /// call. Audited either way, by name (never a key's bytes).
    fn secret(&self, name: &str, data_len: usize) -> Result<Secret, Fault> {
        let (keyring, tenant, cadence) =
            self.0.as_ref().ok_or(Fault::NotFound(name.to_string()))?;
        cadence.admit(tenant, "secrets").map_err(|d| match d {
            Denial::Revoked => Fault::Revoked,
            _ => Fault::RateLimited,
        })?;
        if let Some(scope) = &self.1 {
            let deny = |reason, detail: &str| {
                cadence.deny(tenant, "secrets", Denial::Guard(reason), detail);
            };
            let scoped = scope.now().map_err(|e| {
                deny(e.reason(), &e.to_string());
                Fault::Revoked
            })?;
            scoped.judge_named(SCOPED_AS, name).map_err(|why| {
                deny("out_of_scope", &why);
                Fault::NotFound(why)
            })?;
        }
        if data_len > SECRETS_MAX_DATA_BYTES {
            return Err(Fault::DataTooLarge(SECRETS_MAX_DATA_BYTES as u64));
        }
        keyring.get(tenant, name).ok_or_else(|| {
            cadence.deny(tenant, "secrets", Denial::Guard("secret_not_found"), name);
            Fault::NotFound(name.to_string())
        })
    }
}

fn kind_error(e: SecretError) -> Fault {
    match e {
        SecretError::WrongKind(k) => Fault::WrongKind(format!("{k:?}").to_lowercase()),
        other => Fault::WrongKind(other.to_string()),
    }
}

impl Serve<Hmac> for Local {
    fn serve(&mut self, Hmac { name, data }: Hmac) -> Result<Vec<u8>, Fault> {
        self.secret(&name, data.len())?
            .hmac_sha256(&data)
            .map_err(kind_error)
    }
}

impl Serve<Sign> for Local {
    fn serve(&mut self, Sign { name, data }: Sign) -> Result<Vec<u8>, Fault> {
        self.secret(&name, data.len())?
            .ed25519_sign(&data)
            .map_err(kind_error)
    }
}

impl Serve<Public> for Local {
    fn serve(&mut self, Public { name }: Public) -> Result<Vec<u8>, Fault> {
        self.secret(&name, 0)?
            .ed25519_public_key()
            .map_err(kind_error)
    }
}

impl Host for SecretsCtx {
    fn hmac_sha256(&mut self, name: String, data: Vec<u8>) -> Result<Vec<u8>, Error> {
        self.0.run(Hmac { name, data }).map_err(Error::from)
    }

    fn ed25519_sign(&mut self, name: String, data: Vec<u8>) -> Result<Vec<u8>, Error> {
        self.0.run(Sign { name, data }).map_err(Error::from)
    }

    fn ed25519_public_key(&mut self, name: String) -> Result<Vec<u8>, Error> {
        self.0.run(Public { name }).map_err(Error::from)
    }
}
