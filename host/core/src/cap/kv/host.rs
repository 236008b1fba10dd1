use super::KV_MAX_KEYS_PER_TENANT;
use super::bindings::workbooks::host::kv::{Error, Host};
use super::relay::{Contains, Delete, Fault, Get, Keys, Put};
use super::storage::TenantKv;
use super::{KvCtx, Local};
use crate::cap::relay::Serve;

impl Local {
    fn tenant(&mut self) -> Result<&TenantKv, Fault> {
        let (storage, tenant, cadence) = self
            .source
            .as_ref()
            .ok_or_else(|| Fault::Unavailable("no tenant for this store".into()))?;
        cadence.admit(tenant, "kv").map_err(|d| match d {
            crate::cadence::Denial::Revoked => Fault::Revoked,
            _ => Fault::RateLimited,
        })?;
        if self.tenant.is_none() {
            let kv = storage
                .get()
                .and_then(|s| s.kv(tenant))
                .map_err(|e| Fault::Unavailable(e.to_string()))?;
            self.tenant = Some(kv);
        }
        self.tenant
            .as_ref()
            .ok_or_else(|| Fault::Unavailable("no tenant for this store".into()))
    }
}

impl Serve<Get> for Local {
    fn serve(&mut self, Get { key }: Get) -> Result<Option<Vec<u8>>, Fault> {
        self.tenant()?.get(&key).map_err(Fault::from)
    }
}

impl Serve<Put> for Local {
    fn serve(&mut self, Put { key, value }: Put) -> Result<(), Fault> {
        self.tenant()?.put(&key, &value).map_err(Fault::from)
    }
}

impl Serve<Delete> for Local {
    fn serve(&mut self, Delete { key }: Delete) -> Result<bool, Fault> {
        self.tenant()?.delete(&key).map_err(Fault::from)
    }
}

impl Serve<Contains> for Local {
    fn serve(&mut self, Contains { key }: Contains) -> Result<bool, Fault> {
        self.tenant()?.contains(&key).map_err(Fault::from)
    }
}

impl Serve<Keys> for Local {
    fn serve(&mut self, Keys { prefix, limit }: Keys) -> Result<Vec<Vec<u8>>, Fault> {
        let limit = limit.min(KV_MAX_KEYS_PER_TENANT) as usize;
        self.tenant()?.keys(&prefix, limit).map_err(Fault::from)
    }
}

impl Host for KvCtx {
    fn get(&mut self, key: Vec<u8>) -> Result<Option<Vec<u8>>, Error> {
        self.0.run(Get { key }).map_err(Error::from)
    }

    fn put(&mut self, key: Vec<u8>, value: Vec<u8>) -> Result<(), Error> {
        self.0.run(Put { key, value }).map_err(Error::from)
    }

    fn delete(&mut self, key: Vec<u8>) -> Result<bool, Error> {
        self.0.run(Delete { key }).map_err(Error::from)
    }

    fn contains(&mut self, key: Vec<u8>) -> Result<bool, Error> {
        self.0.run(Contains { key }).map_err(Error::from)
    }

    fn keys(&mut self, prefix: Vec<u8>, limit: u32) -> Result<Vec<Vec<u8>>, Error> {
        self.0.run(Keys { prefix, limit }).map_err(Error::from)
    }
}
