use super::relay::{Contains, Delete, Get, Keys, Put};
use super::{KvCtx, Local};
use crate::cap::bindings::workbooks::host::kv::{Error, Host};
use crate::cap::relay::Serve;
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

impl Local {
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

impl Serve<Get> for Local {
    fn serve(&mut self, Get { key }: Get) -> Result<Option<Vec<u8>>, Error> {
        self.tenant()?.get(&key).map_err(error)
    }
}

impl Serve<Put> for Local {
    fn serve(&mut self, Put { key, value }: Put) -> Result<(), Error> {
        self.tenant()?.put(&key, &value).map_err(error)
    }
}

impl Serve<Delete> for Local {
    fn serve(&mut self, Delete { key }: Delete) -> Result<bool, Error> {
        self.tenant()?.delete(&key).map_err(error)
    }
}

impl Serve<Contains> for Local {
    fn serve(&mut self, Contains { key }: Contains) -> Result<bool, Error> {
        self.tenant()?.contains(&key).map_err(error)
    }
}

impl Serve<Keys> for Local {
    fn serve(&mut self, Keys { prefix, limit }: Keys) -> Result<Vec<Vec<u8>>, Error> {
        let limit = limit.min(KV_MAX_KEYS_PER_TENANT) as usize;
        self.tenant()?.keys(&prefix, limit).map_err(error)
    }
}

impl Host for KvCtx {
    fn get(&mut self, key: Vec<u8>) -> Result<Option<Vec<u8>>, Error> {
        self.0.run(Get { key })
    }

    fn put(&mut self, key: Vec<u8>, value: Vec<u8>) -> Result<(), Error> {
        self.0.run(Put { key, value })
    }

    fn delete(&mut self, key: Vec<u8>) -> Result<bool, Error> {
        self.0.run(Delete { key })
    }

    fn contains(&mut self, key: Vec<u8>) -> Result<bool, Error> {
        self.0.run(Contains { key })
    }

    fn keys(&mut self, prefix: Vec<u8>, limit: u32) -> Result<Vec<Vec<u8>>, Error> {
        self.0.run(Keys { prefix, limit })
    }
}
