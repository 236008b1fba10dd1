use super::KV_MAX_KEYS_PER_TENANT;
use super::bindings::workbooks::host::kv::{Error, Host};
use super::relay::{Contains, Delete, Fault, Get, Keys, Put};
use super::storage::TenantKv;
use super::{KvCtx, Local};
use crate::cadence::Denial;
use crate::cap::relay::Serve;
use crate::grants::{CapNoun, Scoped};

/// How a grant's prefixes name this cap and its names.
const SCOPED_AS: CapNoun = CapNoun {
    cap: "kv",
    noun: "key",
};

impl Local {
    /// The cadence, then `judge` (the grant's scope), then the tenant's
    /// keys.
    fn tenant(
        &mut self,
        judge: impl FnOnce(&Self) -> Result<(), Fault>,
    ) -> Result<&TenantKv, Fault> {
        let (storage, tenant, cadence) = self
            .source
            .as_ref()
            .ok_or_else(|| Fault::Unavailable("no tenant for this store".into()))?;
        cadence.admit(tenant, "kv").map_err(|d| match d {
            Denial::Revoked => Fault::Revoked,
            _ => Fault::RateLimited,
        })?;
        let (storage, tenant) = (storage.clone(), tenant.clone());
        judge(self)?;
        if self.tenant.is_none() {
            let kv = storage
                .get()
                .and_then(|s| s.kv(&tenant))
                .map_err(|e| Fault::Unavailable(e.to_string()))?;
            self.tenant = Some(kv);
        }
        self.tenant
            .as_ref()
            .ok_or_else(|| Fault::Unavailable("no tenant for this store".into()))
    }

    /// The grant as it is now, judging `key`: a key outside its prefixes
    /// is a refused key (`invalid-key`, naming the grant), a grant expired
    /// or revoked refuses every call (`revoked`). Audited either way.
    fn in_scope(&self, key: &[u8]) -> Result<(), Fault> {
        self.scoped(|s| s.judge_name(SCOPED_AS, key).map(|_| ()))
    }

    /// The prefixes a listing of `prefix` reaches under the grant.
    fn listing(&self, prefix: &[u8]) -> Result<Vec<Vec<u8>>, Fault> {
        match &self.scope {
            None => Ok(vec![prefix.to_vec()]),
            Some(_) => self.scoped(|s| s.listing(SCOPED_AS, prefix)),
        }
    }

    fn scoped<T>(&self, judge: impl FnOnce(&Scoped) -> Result<T, String>) -> Result<T, Fault>
    where
        T: Default,
    {
        let Some(scope) = &self.scope else {
            return Ok(T::default());
        };
        let deny = |reason: &'static str, detail: &str| {
            if let Some((_, tenant, cadence)) = &self.source {
                cadence.deny(tenant, "kv", Denial::Guard(reason), detail);
            }
        };
        let scoped = scope.now().map_err(|e| {
            deny(e.reason(), &e.to_string());
            Fault::Revoked
        })?;
        judge(&scoped).map_err(|why| {
            deny("out_of_scope", &why);
            Fault::InvalidKey(why)
        })
    }
}

impl Serve<Get> for Local {
    fn serve(&mut self, Get { key }: Get) -> Result<Option<Vec<u8>>, Fault> {
        self.tenant(|l| l.in_scope(&key))?
            .get(&key)
            .map_err(Fault::from)
    }
}

impl Serve<Put> for Local {
    fn serve(&mut self, Put { key, value }: Put) -> Result<(), Fault> {
        self.tenant(|l| l.in_scope(&key))?
            .put(&key, &value)
            .map_err(Fault::from)
    }
}

impl Serve<Delete> for Local {
    fn serve(&mut self, Delete { key }: Delete) -> Result<bool, Fault> {
        self.tenant(|l| l.in_scope(&key))?
            .delete(&key)
            .map_err(Fault::from)
    }
}

impl Serve<Contains> for Local {
    fn serve(&mut self, Contains { key }: Contains) -> Result<bool, Fault> {
        self.tenant(|l| l.in_scope(&key))?
            .contains(&key)
            .map_err(Fault::from)
    }
}

impl Serve<Keys> for Local {
    fn serve(&mut self, Keys { prefix, limit }: Keys) -> Result<Vec<Vec<u8>>, Fault> {
        let limit = limit.min(KV_MAX_KEYS_PER_TENANT) as usize;
        let mut prefixes = Vec::new();
        let kv = self.tenant(|l| {
            prefixes = l.listing(&prefix)?;
            Ok(())
        })?;
        let mut keys = Vec::new();
        for p in &prefixes {
            keys.extend(kv.keys(p, limit).map_err(Fault::from)?);
        }
        if prefixes.len() > 1 {
            keys.sort();
            keys.dedup();
            keys.truncate(limit);
        }
        Ok(keys)
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
