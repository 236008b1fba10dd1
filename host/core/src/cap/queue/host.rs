use super::QUEUE_MAX_WAIT;
use super::bindings::workbooks::host::queue::{Error, Host};
use super::relay::{Fault, Len, Pop, Push};
use super::storage::TenantQueues;
use super::{Local, QueueCtx};
use crate::cadence::Denial;
use crate::cap::relay::ServeAsync;
use std::time::Duration;

/// How a grant's prefixes name this cap and its names.
const SCOPED_AS: crate::grants::CapNoun = crate::grants::CapNoun {
    cap: "queue",
    noun: "queue",
};

impl Local {
    /// The cadence, then the grant's scope for queue `name` (a name
    /// outside its prefixes is a refused name, `invalid-name`, naming the
    /// grant; a grant expired or revoked refuses every call, `revoked`;
    /// audited either way), then the tenant's queues.
    fn admit(&mut self, name: &str) -> Result<TenantQueues, Fault> {
        let (storage, tenant, cadence) = self
            .source
            .as_ref()
            .ok_or_else(|| Fault::Unavailable("queue not granted".into()))?;
        cadence.admit(tenant, "queue").map_err(|d| match d {
            Denial::Revoked => Fault::Revoked,
            _ => Fault::RateLimited,
        })?;
        if let Some(scope) = &self.scope {
            let scoped = scope.now().map_err(|e| {
                cadence.deny(tenant, "queue", Denial::Guard(e.reason()), &e.to_string());
                Fault::Revoked
            })?;
            scoped
                .judge_name(SCOPED_AS, name.as_bytes())
                .map_err(|why| {
                    cadence.deny(tenant, "queue", Denial::Guard("out_of_scope"), &why);
                    Fault::InvalidName(why)
                })?;
        }
        if self.queues.is_none() {
            let queues = storage
                .get()
                .and_then(|s| s.queues(tenant))
                .map_err(|e| Fault::Unavailable(e.to_string()))?;
            self.queues = Some(queues);
        }
        self.queues
            .clone()
            .ok_or_else(|| Fault::Unavailable("queue not granted".into()))
    }
}

impl ServeAsync<Push> for Local {
    async fn serve(&mut self, Push { name, message }: Push) -> Result<u32, Fault> {
        self.admit(&name)?
            .push(&name, &message)
            .map_err(Fault::from)
    }
}

impl ServeAsync<Pop> for Local {
    async fn serve(&mut self, Pop { name, timeout_ms }: Pop) -> Result<Option<Vec<u8>>, Fault> {
        let queues = self.admit(&name)?;
        if timeout_ms == 0 {
            return queues.pop(&name).map_err(Fault::from);
        }
        let wait = Duration::from_millis(u64::from(timeout_ms)).min(QUEUE_MAX_WAIT);
        queues.pop_wait(&name, wait).await.map_err(Fault::from)
    }
}

impl ServeAsync<Len> for Local {
    async fn serve(&mut self, Len { name }: Len) -> Result<u32, Fault> {
        self.admit(&name)?.len(&name).map_err(Fault::from)
    }
}

impl Host for QueueCtx {
    async fn push(&mut self, name: String, message: Vec<u8>) -> Result<u32, Error> {
        self.0
            .run_async(Push { name, message })
            .await
            .map_err(Error::from)
    }

    async fn pop(&mut self, name: String, timeout_ms: u32) -> Result<Option<Vec<u8>>, Error> {
        self.0
            .run_async(Pop { name, timeout_ms })
            .await
            .map_err(Error::from)
    }

    async fn len(&mut self, name: String) -> Result<u32, Error> {
        self.0.run_async(Len { name }).await.map_err(Error::from)
    }
}
