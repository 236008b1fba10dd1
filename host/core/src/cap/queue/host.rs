use super::QueueCtx;
use crate::cadence::Denial;
use crate::cap::bindings::workbooks::host::queue::{Host, QueueError as Error};
use crate::cap::relay::{Call, Relay, answered_async};
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

impl QueueCtx {
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

/// `call`'s answer from `relay`; a relay that fails is `unavailable`.
async fn relayed<T: serde::de::DeserializeOwned>(
    relay: &dyn Relay,
    call: Call,
) -> Result<T, Error> {
    answered_async(relay, call, Error::Unavailable).await
}

impl Host for QueueCtx {
    async fn push(&mut self, name: String, message: Vec<u8>) -> Result<u32, Error> {
        if let Some(relay) = self.relay.clone() {
            return relayed(&*relay, Call::QueuePush { name, message }).await;
        }
        self.admit()?.push(&name, &message).map_err(error)
    }

    async fn pop(&mut self, name: String, timeout_ms: u32) -> Result<Option<Vec<u8>>, Error> {
        if let Some(relay) = self.relay.clone() {
            return relayed(&*relay, Call::QueuePop { name, timeout_ms }).await;
        }
        let queues = self.admit()?;
        if timeout_ms == 0 {
            return queues.pop(&name).map_err(error);
        }
        let wait = Duration::from_millis(u64::from(timeout_ms)).min(QUEUE_MAX_WAIT);
        queues.pop_wait(&name, wait).await.map_err(error)
    }

    async fn len(&mut self, name: String) -> Result<u32, Error> {
        if let Some(relay) = self.relay.clone() {
            return relayed(&*relay, Call::QueueLen { name }).await;
        }
        self.admit()?.len(&name).map_err(error)
    }
}
