use super::relay::{Len, Pop, Push};
use super::{Local, QueueCtx};
use crate::cadence::Denial;
use crate::cap::bindings::workbooks::host::queue::{Host, QueueError as Error};
use crate::cap::relay::ServeAsync;
use crate::limits::QUEUE_MAX_WAIT;
use crate::store::{QueueError, TenantQueues};
use std::time::Duration;

fn error(e: QueueError) -> Error {
    match e {
        QueueError::InvalidName(why) => Error::InvalidName(why.to_string()),
        QueueError::MessageTooLarge(n) => Error::MessageTooLarge(n),
        QueueError::Full(n) => Error::QueueFull(n),
        QueueError::TooManyQueues(n) => Error::TooManyQueues(n),
        QueueError::TenantFull(n) => Error::TenantFull(n),
        QueueError::Unavailable(why) => Error::Unavailable(why),
    }
}

impl Local {
    /// The cadence, then the tenant's queues.
    fn admit(&mut self) -> Result<TenantQueues, Error> {
        let (storage, tenant, cadence) = self
            .source
            .as_ref()
            .ok_or_else(|| Error::Unavailable("queue not granted".into()))?;
        cadence.admit(tenant, "queue").map_err(|d| match d {
            Denial::Revoked => Error::Revoked,
            _ => Error::RateLimited,
        })?;
        if self.queues.is_none() {
            let queues = storage
                .get()
                .and_then(|s| s.queues(tenant))
                .map_err(|e| Error::Unavailable(e.to_string()))?;
            self.queues = Some(queues);
        }
        self.queues
            .clone()
            .ok_or_else(|| Error::Unavailable("queue not granted".into()))
    }
}

impl ServeAsync<Push> for Local {
    async fn serve(&mut self, Push { name, message }: Push) -> Result<u32, Error> {
        self.admit()?.push(&name, &message).map_err(error)
    }
}

impl ServeAsync<Pop> for Local {
    async fn serve(&mut self, Pop { name, timeout_ms }: Pop) -> Result<Option<Vec<u8>>, Error> {
        let queues = self.admit()?;
        if timeout_ms == 0 {
            return queues.pop(&name).map_err(error);
        }
        let wait = Duration::from_millis(u64::from(timeout_ms)).min(QUEUE_MAX_WAIT);
        queues.pop_wait(&name, wait).await.map_err(error)
    }
}

impl ServeAsync<Len> for Local {
    async fn serve(&mut self, Len { name }: Len) -> Result<u32, Error> {
        self.admit()?.len(&name).map_err(error)
    }
}

impl Host for QueueCtx {
    async fn push(&mut self, name: String, message: Vec<u8>) -> Result<u32, Error> {
        self.0.run_async(Push { name, message }).await
    }

    async fn pop(&mut self, name: String, timeout_ms: u32) -> Result<Option<Vec<u8>>, Error> {
        self.0.run_async(Pop { name, timeout_ms }).await
    }

    async fn len(&mut self, name: String) -> Result<u32, Error> {
        self.0.run_async(Len { name }).await
    }
}
