//! The relay's channel: one Unix stream socket between a container-tier
//! child and its parent, made with `socketpair` before the child starts
//! and handed to it as an inherited descriptor (the child has no network
//! and no path to anything of its parent's). Its frames are
//! `workbooks_wire::relay`'s; a call carries a `postcard`-encoded
//! `crate::cap::relay::Call`. The child may have several calls out (a
//! job waited on while another call runs), matched by id; the parent
//! answers them in order, one at a time.

use super::{RELAY_MAX_CALL_BYTES, answer};
use crate::cap::relay::{Answering, Relay, RelayError, decode_call};
use crate::state::StoreState;
use futures::channel::oneshot;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use workbooks_wire::relay::{HEAD_BYTES, Head, MAX_ANSWER_BYTES, answer_frame, read_answer};

type Pending = HashMap<u64, oneshot::Sender<Result<Vec<u8>, RelayError>>>;

/// Calls waiting for their answers, and why no more will come once the
/// channel is gone.
#[derive(Default)]
struct Waiting {
    pending: Pending,
    closed: Option<String>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The child's end: sends calls, and a thread of its own reads the
/// answers (so a call made from synchronous host code never needs the
/// runtime that is blocked on it).
pub(crate) struct RelayClient {
    out: Mutex<UnixStream>,
    waiting: Arc<Mutex<Waiting>>,
    next: AtomicU64,
}

impl std::fmt::Debug for RelayClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RelayClient").finish_non_exhaustive()
    }
}

impl RelayClient {
    /// Starts the client on the inherited socket `fd`.
    pub(crate) fn start(fd: OwnedFd) -> std::io::Result<Arc<Self>> {
        let stream = UnixStream::from(fd);
        let reader = stream.try_clone()?;
        let waiting = Arc::new(Mutex::new(Waiting::default()));
        let answers = waiting.clone();
        std::thread::Builder::new()
            .name("wb-relay".into())
            .spawn(move || read_answers(reader, &answers))?;
        Ok(Arc::new(Self {
            out: Mutex::new(stream),
            waiting,
            next: AtomicU64::new(1),
        }))
    }

    fn send(
        &self,
        body: Vec<u8>,
    ) -> Result<oneshot::Receiver<Result<Vec<u8>, RelayError>>, RelayError> {
        // The parent closes the channel on a call past the cap, failing
        // every later call too: refuse this one alone, before it leaves.
        if body.len() > RELAY_MAX_CALL_BYTES {
            return Err(RelayError(format!(
                "a call of {} bytes is more than the container tier relays ({RELAY_MAX_CALL_BYTES} bytes)",
                body.len()
            )));
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        {
            let mut waiting = lock(&self.waiting);
            if let Some(why) = &waiting.closed {
                return Err(RelayError(why.clone()));
            }
            waiting.pending.insert(id, tx);
        }
        let sent = Head::encode(id, body.len()).and_then(|head| {
            let mut out = lock(&self.out);
            out.write_all(&head)?;
            out.write_all(&body)
        });
        if let Err(e) = sent {
            lock(&self.waiting).pending.remove(&id);
            return Err(RelayError(format!("the parent is gone: {e}")));
        }
        Ok(rx)
    }
}

fn gone(_: oneshot::Canceled) -> Result<Vec<u8>, RelayError> {
    Err(RelayError("the parent closed the channel".into()))
}

impl Relay for RelayClient {
    fn call(&self, call: Vec<u8>) -> Result<Vec<u8>, RelayError> {
        let rx = self.send(call)?;
        futures::executor::block_on(rx).unwrap_or_else(gone)
    }

    fn call_async(&self, call: Vec<u8>) -> Answering {
        let rx = self.send(call);
        Box::pin(async move { rx?.await.unwrap_or_else(gone) })
    }

    fn tell(&self, call: Vec<u8>) {
        let _ = self.send(call);
    }
}

/// The child's reading thread: hands each answer to its call, and fails
/// every call still out when the channel ends.
fn read_answers(mut input: UnixStream, waiting: &Mutex<Waiting>) {
    let why = loop {
        let mut head = [0u8; HEAD_BYTES];
        if let Err(e) = input.read_exact(&mut head) {
            break format!("the parent closed the channel ({e})");
        }
        let Head { id, body } = match Head::parse(head, 1..=MAX_ANSWER_BYTES) {
            Ok(head) => head,
            Err(e) => break e.to_string(),
        };
        let mut body = vec![0u8; body];
        if let Err(e) = input.read_exact(&mut body) {
            break format!("the parent closed the channel mid-answer ({e})");
        }
        let result = read_answer(body).map_err(RelayError);
        if let Some(tx) = lock(waiting).pending.remove(&id) {
            let _ = tx.send(result);
        }
    };
    let mut waiting = lock(waiting);
    for (_, tx) in waiting.pending.drain() {
        let _ = tx.send(Err(RelayError(why.clone())));
    }
    waiting.closed = Some(why);
}

/// The parent's end: answers the child's calls from `state`, one at a
/// time, until the child closes the channel or sends what is not a frame.
pub(crate) async fn serve(stream: tokio::net::UnixStream, state: &mut StoreState) {
    let (mut input, mut output) = stream.into_split();
    loop {
        let mut head = [0u8; HEAD_BYTES];
        if input.read_exact(&mut head).await.is_err() {
            return;
        }
        // Refused before anything is allocated for it: the child is the
        // untrusted side.
        let Head { id, body } = match Head::parse(head, 0..=RELAY_MAX_CALL_BYTES) {
            Ok(head) => head,
            Err(e) => {
                tracing::warn!("relay: a child sent {e}; channel closed");
                return;
            }
        };
        let mut body = vec![0u8; body];
        if input.read_exact(&mut body).await.is_err() {
            return;
        }
        let answered = match decode_call(&body) {
            Ok(call) => answer(state, call).await,
            Err(e) => Err(e),
        };
        let answered = answered.as_deref().map_err(|e| e.0.as_str());
        let Ok(frame) = answer_frame(id, answered) else {
            return;
        };
        if output.write_all(&frame).await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cap::relay::Op;

    #[test]
    fn a_call_past_the_cap_is_refused_alone_and_never_sent() {
        let (parent, child) = UnixStream::pair().unwrap();
        let client = RelayClient::start(OwnedFd::from(child)).unwrap();
        let huge = crate::cap::kv::relay::Get {
            key: vec![0; RELAY_MAX_CALL_BYTES + 1],
        };
        let err = client.call(huge.encoded().unwrap()).unwrap_err();
        assert!(
            err.0.contains("more than the container tier relays"),
            "{err}"
        );
        parent.set_nonblocking(true).unwrap();
        let mut head = [0u8; HEAD_BYTES];
        assert_eq!(
            (&parent).read(&mut head).unwrap_err().kind(),
            std::io::ErrorKind::WouldBlock,
            "nothing reached the parent"
        );
        // The channel is still open for the next call.
        assert!(lock(&client.waiting).closed.is_none());
        let small = crate::cap::kv::relay::Get { key: b"k".to_vec() };
        let _pending = client.send(small.encoded().unwrap()).unwrap();
        parent.set_nonblocking(false).unwrap();
        (&parent).read_exact(&mut head).unwrap();
    }
}
