//! Relaying: a store whose storage, signing and launch calls are served
//! by another process. A container-tier child holds no home, no database
//! and no keys; its `kv`, `vfs` volumes, `queue`, `secrets` and `launch`
//! calls go to its parent, which serves them from a store built exactly
//! as an in-process run of the same command would be built.
//!
//! Invariant: a [`Call`] names an operation and its arguments, never a
//! tenant, an instance, a grant or a budget; the serving side answers
//! with its own, fixed when it started the child. So a child that sends
//! forged calls (native code that escaped its guest) reaches only what its
//! command was granted, through the same checks and cadence as any other
//! call: a cap it was not granted is refused as it would be in process.
//! This side trusts the answers: they come from the parent that started it.

use crate::cap::bindings::workbooks::engine::command_types::{PipelineStage, TaskInput};
use crate::cap::bindings::workbooks::engine::vfs::Volume;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;

/// One relayed operation, with its arguments as the guest gave them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Call {
    /// `kv.get`.
    KvGet { key: Vec<u8> },
    /// `kv.put`.
    KvPut { key: Vec<u8>, value: Vec<u8> },
    /// `kv.delete`.
    KvDelete { key: Vec<u8> },
    /// `kv.contains`.
    KvContains { key: Vec<u8> },
    /// `kv.keys`.
    KvKeys { prefix: Vec<u8>, limit: u32 },
    /// `vfs.read`.
    VfsRead { volume: Volume, path: String },
    /// `vfs.write`.
    VfsWrite {
        volume: Volume,
        path: String,
        data: Vec<u8>,
    },
    /// `vfs.list-dir`.
    VfsList { volume: Volume, dir: String },
    /// `vfs.remove`.
    VfsRemove { volume: Volume, path: String },
    /// `vfs.stat`.
    VfsStat { volume: Volume, path: String },
    /// `queue.push`.
    QueuePush { name: String, message: Vec<u8> },
    /// `queue.pop`.
    QueuePop { name: String, timeout_ms: u32 },
    /// `queue.len`.
    QueueLen { name: String },
    /// `secrets.hmac-sha256`.
    SecretsHmac { name: String, data: Vec<u8> },
    /// `secrets.ed25519-sign`.
    SecretsSign { name: String, data: Vec<u8> },
    /// `secrets.ed25519-public-key`.
    SecretsPublic { name: String },
    /// `launch.run` (needs `commands`).
    Run {
        name: String,
        argv: Vec<String>,
        stdin: Vec<u8>,
    },
    /// `launch.pipeline` (needs `commands`).
    Pipeline { stages: Vec<PipelineStage> },
    /// `launch.start` (needs `exec`); answered with the job's number.
    Start {
        name: String,
        argv: Vec<String>,
        stdin: Vec<u8>,
    },
    /// `launch.run-many` (needs `parallel`).
    RunMany {
        name: String,
        inputs: Vec<TaskInput>,
        width: u32,
    },
    /// `job.wait` of a job [`Call::Start`] numbered.
    JobWait { job: u32 },
    /// `job.kill`.
    JobKill { job: u32 },
    /// A job dropped: it stops, and its number means nothing after.
    JobDrop { job: u32 },
    /// A preview 1 module's `workbooks.exec` (needs `exec`).
    ModuleExec {
        name: String,
        argv: Vec<String>,
        stdin: Vec<u8>,
    },
}

/// Why a relayed call got no answer: the channel failed, or the serving
/// side could not read the call. Guests see it as their cap's
/// `unavailable` (or `refused`) error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("relay: {0}")]
pub(crate) struct RelayError(pub(crate) String);

/// An answer on its way.
pub(crate) type Answering = Pin<Box<dyn Future<Output = Result<Vec<u8>, RelayError>> + Send>>;

/// Where a store's relayed calls go. The answer is the serving side's
/// typed result, encoded with `postcard`.
pub(crate) trait Relay: Send + Sync + std::fmt::Debug {
    /// Sends `call` and blocks the thread until its answer comes.
    fn call(&self, call: &Call) -> Result<Vec<u8>, RelayError>;
    /// Sends `call`; its answer, when it comes.
    fn call_async(&self, call: &Call) -> Answering;
    /// Sends `call` and does not wait for an answer (a dropped job).
    fn tell(&self, call: &Call);
}

fn decoded<T: DeserializeOwned>(bytes: Result<Vec<u8>, RelayError>) -> Result<T, RelayError> {
    postcard::from_bytes(&bytes?).map_err(|e| RelayError(format!("unreadable answer: {e}")))
}

/// `call` through `relay`, its answer decoded as `T`.
pub(crate) fn ask<T: DeserializeOwned>(relay: &dyn Relay, call: Call) -> Result<T, RelayError> {
    decoded(relay.call(&call))
}

/// `call` through `relay` without blocking the thread.
pub(crate) async fn ask_async<T: DeserializeOwned>(
    relay: &dyn Relay,
    call: Call,
) -> Result<T, RelayError> {
    decoded(relay.call_async(&call).await)
}

/// A cap call's own result from `relay`; a relay that fails becomes the
/// error `failed` makes of why.
pub(crate) fn answered<T: DeserializeOwned, E: DeserializeOwned>(
    relay: &dyn Relay,
    call: Call,
    failed: impl FnOnce(String) -> E,
) -> Result<T, E> {
    ask::<Result<T, E>>(relay, call).unwrap_or_else(|e| Err(failed(e.to_string())))
}

/// [`answered`] without blocking the thread.
pub(crate) async fn answered_async<T: DeserializeOwned, E: DeserializeOwned>(
    relay: &dyn Relay,
    call: Call,
    failed: impl FnOnce(String) -> E,
) -> Result<T, E> {
    ask_async::<Result<T, E>>(relay, call)
        .await
        .unwrap_or_else(|e| Err(failed(e.to_string())))
}

/// An answer as the serving side encodes it.
pub(crate) fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, RelayError> {
    postcard::to_allocvec(value).map_err(|e| RelayError(format!("cannot encode an answer: {e}")))
}

/// A call as the channel carries it.
pub(crate) fn encode_call(call: &Call) -> Result<Vec<u8>, RelayError> {
    postcard::to_allocvec(call).map_err(|e| RelayError(format!("cannot encode a call: {e}")))
}

/// A call read off the channel; anything else is refused by name.
pub(crate) fn decode_call(bytes: &[u8]) -> Result<Call, RelayError> {
    postcard::from_bytes(bytes).map_err(|e| RelayError(format!("not a call: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_round_trips_and_garbage_is_not_a_call() {
        let call = Call::VfsWrite {
            volume: Volume::Workspace,
            path: "a/b".into(),
            data: vec![0, 1, 255],
        };
        let bytes = encode_call(&call).unwrap();
        assert_eq!(encode_call(&decode_call(&bytes).unwrap()).unwrap(), bytes);
        assert!(decode_call(&[0xff, 0xff, 0xff]).is_err());
        // A call's bytes carry no tenant: the first byte is the variant.
        let bytes = encode_call(&Call::KvGet { key: b"k".to_vec() }).unwrap();
        assert_eq!(bytes, [0, 1, b'k']);
    }
}
