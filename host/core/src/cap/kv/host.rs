use super::KvCtx;
use crate::cap::bindings::workbooks::host::kv::{Error, Host};
use crate::cap::relay::{Call, Relay, answered};
use crate::limits::KV_MAX_KEYS_PER_TENANT;
use crate::store::{KvError, TenantKv};

fn error(e: KvError) -> Error {
    match e {
        KvError::InvalidKey(why) => Error::InvalidKey(why.to_string()),
        KvError::ValueTooLarge(n) => Error::ValueTooLarge(n),
        KvError::TooManyKeys(n) => Error::TooManyKeys(n),
        KvError::Unavailable(why) => Error::Unavailable(why),
    }
}

impl KvCtx {
    fn tenant(&mut self) -> Result<&TenantKv, Error> {
        let (storage, tenant, cadence) = self
            .source
            .as_ref()
            .ok_or_else(|| Error::Unavailable("no tenant for this store".into()))?;
        cadence.admit(tenant, "kv").map_err(|d| match d {
            crate::cadence::Denial::Revoked => Error::Revoked,
            _ => Error::RateLimited,
        })?;
        if self.tenant.is_none() {
            let kv = storage
                .get()
                .and_then(|s| s.kv(tenant))
                .map_err(|e| Error::Unavailable(e.to_string()))?;
            self.tenant = Some(kv);
        }
        self.tenant
            .as_ref()
            .ok_or_else(|| Error::Unavailable("no tenant for this store".into()))
    }
}

/// `call`'s answer from `relay`; a relay that fails is `unavailable`.
fn relayed<T: serde::de::DeserializeOwned>(relay: &dyn Relay, call: Call) -> Result<T, Error> {
    answered(relay, call, Error::Unavailable)
}

impl Host for KvCtx {
    fn get(&mut self, key: Vec<u8>) -> Result<Option<Vec<u8>>, Error> {
        if let Some(relay) = &self.relay {
            return relayed(&**relay, Call::KvGet { key });
        }
        self.tenant()?.get(&key).map_err(error)
    }

    fn put(&mut self, key: Vec<u8>, value: Vec<u8>) -> Result<(), Error> {
        if let Some(relay) = &self.relay {
            return relayed(&**relay, Call::KvPut { key, value });
        }
        self.tenant()?.put(&key, &value).map_err(error)
    }

    fn delete(&mut self, key: Vec<u8>) -> Result<bool, Error> {
        if let Some(relay) = &self.relay {
            return relayed(&**relay, Call::KvDelete { key });
        }
        self.tenant()?.delete(&key).map_err(error)
    }

    fn contains(&mut self, key: Vec<u8>) -> Result<bool, Error> {
        if let Some(relay) = &self.relay {
            return relayed(&**relay, Call::KvContains { key });
        }
        self.tenant()?.contains(&key).map_err(error)
    }

    fn keys(&mut self, prefix: Vec<u8>, limit: u32) -> Result<Vec<Vec<u8>>, Error> {
        if let Some(relay) = &self.relay {
            return relayed(&**relay, Call::KvKeys { prefix, limit });
        }
        let limit = limit.min(KV_MAX_KEYS_PER_TENANT) as usize;
        self.tenant()?.keys(&prefix, limit).map_err(error)
    }
}
