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

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

/// Declares [`Call`] and [`CallRef`] from the relayed units of
/// `crate::cap::units!`, in its order, which is the wire's (and
/// `tests/native/escapee.c` hand-writes it).
macro_rules! calls {
    (
        units { $($_field:ident: $_unit:ident,)* }
        relayed { $($field:ident: $unit:ident,)* }
    ) => {
        /// One relayed call: the unit it is for, then that unit's own
        /// call (each relayed unit declares its operations with
        /// [`relay_calls!`], in its folder).
        #[derive(Debug, Serialize, Deserialize)]
        pub(crate) enum Call {
            $(
                #[doc = concat!("A `", stringify!($field), "` call.")]
                $unit(<crate::cap::$field::$unit as Relayed>::Call),
            )*
        }

        /// [`Call`] by reference: what an operation is encoded as without
        /// giving it up (it is still needed if the relay fails). Same
        /// variants, same order, so the same bytes.
        #[derive(Serialize)]
        pub(crate) enum CallRef<'a> {
            $(
                #[doc = concat!("A `", stringify!($field), "` call, borrowed.")]
                $unit(<crate::cap::$field::$unit as Relayed>::CallRef<'a>),
            )*
        }
    };
}

crate::cap::units!(calls);

/// A unit a container-tier child reaches through its parent: its calls
/// (declared with [`relay_calls!`]) and how the serving side answers one
/// from the unit's context in the store it built for the child.
pub(crate) trait Relayed: crate::cap::unit::CapUnit {
    /// One of its calls, as the serving side reads it.
    type Call: std::fmt::Debug + Serialize + DeserializeOwned;
    /// One of its calls by reference, as the calling side sends it.
    type CallRef<'a>: Serialize;
    /// Answers `call` from the unit's context (and the store's resource
    /// table), encoded.
    fn answer(
        call: Self::Call,
        ctx: &mut Self::Ctx,
        table: &mut wasmtime::component::ResourceTable,
    ) -> impl Future<Output = Result<Vec<u8>, RelayError>> + Send;
}

/// Why a relayed call got no answer: the channel failed, or the serving
/// side could not read the call. Each operation turns it into its cap's
/// own error ([`Op::unanswered`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("relay: {0}")]
pub(crate) struct RelayError(pub(crate) String);

/// An answer on its way.
pub(crate) type Answering = Pin<Box<dyn Future<Output = Result<Vec<u8>, RelayError>> + Send>>;

/// Where a store's relayed calls go: each an encoded [`Call`]; the answer
/// is the serving side's typed result, encoded with `postcard`.
pub(crate) trait Relay: Send + Sync + std::fmt::Debug {
    /// Sends `call` and blocks the thread until its answer comes.
    fn call(&self, call: Vec<u8>) -> Result<Vec<u8>, RelayError>;
    /// Sends `call`; its answer, when it comes.
    fn call_async(&self, call: Vec<u8>) -> Answering;
    /// Sends `call` and does not wait for an answer (a dropped job).
    fn tell(&self, call: Vec<u8>);
}

/// One operation of a relayed cap: its arguments as the guest gave them
/// (never a tenant, an instance or a grant), and the answer it gets.
pub(crate) trait Op: Send + Sync {
    /// What the guest gets back, as the serving side encodes it.
    type Answer: Serialize + DeserializeOwned + Send;
    /// This operation as the channel carries it.
    fn encoded(&self) -> Result<Vec<u8>, RelayError>;
    /// The answer when the relay fails: the cap's own error naming `why`
    /// (`unavailable` for storage, `refused` for launch, and so on).
    fn unanswered(&self, why: RelayError) -> Self::Answer;
}

/// A local backend's answer to one operation, on the calling thread.
///
/// Every check of the operation (cadence, grant, limits) lives here: a
/// cap's `Host` method only hands the operation to its [`Backend`], and
/// the relay's serving side calls this same impl, so a check written in
/// the `Host` method instead would not hold for relayed calls.
pub(crate) trait Serve<O: Op> {
    /// Answers `op` here.
    fn serve(&mut self, op: O) -> O::Answer;
}

/// A local backend's answer to one operation that may wait.
pub(crate) trait ServeAsync<O: Op>: Send {
    /// Answers `op` here.
    fn serve(&mut self, op: O) -> impl Future<Output = O::Answer> + Send;
}

/// Where a cap context's calls are answered: here, or by the relay's
/// serving side. The default is local, and a default local backend
/// reaches nothing.
#[derive(Debug)]
pub(crate) enum Backend<L> {
    /// Answered in this process.
    Local(L),
    /// Sent to the serving side (see the module docs).
    Relayed(Arc<dyn Relay>),
}

impl<L: Default> Default for Backend<L> {
    fn default() -> Self {
        Backend::Local(L::default())
    }
}

impl<L> Backend<L> {
    /// Relayed through `relay` when there is one, else `local`.
    pub(crate) fn open(relay: Option<&Arc<dyn Relay>>, local: impl FnOnce() -> L) -> Self {
        match relay {
            Some(relay) => Backend::Relayed(relay.clone()),
            None => Backend::Local(local()),
        }
    }

    /// `op`'s answer, here or through the relay.
    pub(crate) fn run<O: Op>(&mut self, op: O) -> O::Answer
    where
        L: Serve<O>,
    {
        match self {
            Backend::Local(local) => local.serve(op),
            Backend::Relayed(relay) => ask(&**relay, op),
        }
    }

    /// `op`'s answer, here or through the relay, without blocking.
    pub(crate) async fn run_async<O: Op>(&mut self, op: O) -> O::Answer
    where
        L: ServeAsync<O>,
    {
        match self {
            Backend::Local(local) => local.serve(op).await,
            Backend::Relayed(relay) => ask_async(&**relay, op).await,
        }
    }
}

fn decoded<T: DeserializeOwned>(bytes: Result<Vec<u8>, RelayError>) -> Result<T, RelayError> {
    postcard::from_bytes(&bytes?).map_err(|e| RelayError(format!("unreadable answer: {e}")))
}

/// `op`'s answer from `relay`, blocking the thread.
pub(crate) fn ask<O: Op>(relay: &dyn Relay, op: O) -> O::Answer {
    let answer = op.encoded().and_then(|call| decoded(relay.call(call)));
    answer.unwrap_or_else(|why| op.unanswered(why))
}

/// `op`'s answer from `relay`, without blocking the thread.
pub(crate) async fn ask_async<O: Op>(relay: &dyn Relay, op: O) -> O::Answer {
    let answer = match op.encoded() {
        Ok(call) => decoded(relay.call_async(call).await),
        Err(why) => Err(why),
    };
    answer.unwrap_or_else(|why| op.unanswered(why))
}

/// Sends `op` to `relay` without waiting for its answer.
pub(crate) fn tell<O: Op>(relay: &dyn Relay, op: &O) {
    if let Ok(call) = op.encoded() {
        relay.tell(call);
    }
}

/// An answer as the serving side encodes it.
pub(crate) fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, RelayError> {
    postcard::to_allocvec(value).map_err(|e| RelayError(format!("cannot encode an answer: {e}")))
}

/// A call as the channel carries it.
pub(crate) fn encode_call(call: &CallRef<'_>) -> Result<Vec<u8>, RelayError> {
    postcard::to_allocvec(call).map_err(|e| RelayError(format!("cannot encode a call: {e}")))
}

/// A call read off the channel; anything else is refused by name.
pub(crate) fn decode_call(bytes: &[u8]) -> Result<Call, RelayError> {
    postcard::from_bytes(bytes).map_err(|e| RelayError(format!("not a call: {e}")))
}

/// Declares one relayed cap's operations, each once: its struct (the
/// guest's arguments), its answer and, where the cap's usual one does
/// not fit, what it answers when the relay fails. Makes the cap's `Call`
/// (owned, read by the serving side) and `CallRef` (borrowed, sent),
/// [`Op`] for each operation, and, for a cap served by a [`Backend`]
/// (the context's field `0`), its [`Relayed`] impl, which the serving side
/// calls; `by_hand` leaves that impl to the cap.
///
/// ```ignore
/// relay_calls! {
///     Kv, serve sync, unanswered |_, why| Err(Error::Unavailable(why.to_string()));
///     /// `kv.get`.
///     Get { key: Vec<u8> } -> Result<Option<Vec<u8>>, Error>;
/// }
/// ```
macro_rules! relay_calls {
    (
        $unit:ident, serve $mode:ident, unanswered $default:expr;
        $(
            $(#[$doc:meta])*
            $op:ident { $($field:ident: $fty:ty),* $(,)? } -> $answer:ty $(, unanswered $fail:expr)?;
        )*
    ) => {
        $(
            $(#[$doc])*
            #[derive(Debug, serde::Serialize, serde::Deserialize)]
            pub(crate) struct $op { $(pub(crate) $field: $fty),* }

            impl $crate::cap::relay::Op for $op {
                type Answer = $answer;

                fn encoded(&self) -> Result<Vec<u8>, $crate::cap::relay::RelayError> {
                    $crate::cap::relay::encode_call(&$crate::cap::relay::CallRef::$unit(CallRef::$op(self)))
                }

                fn unanswered(&self, why: $crate::cap::relay::RelayError) -> $answer {
                    $crate::cap::relay::relay_calls!(@fallback self, why, [$($fail)?] [$default])
                }
            }
        )*

        /// One relayed call of this cap, as the serving side reads it.
        #[derive(Debug, serde::Serialize, serde::Deserialize)]
        pub(crate) enum Call { $($(#[$doc])* $op($op),)* }

        /// [`Call`] by reference, as the calling side sends it.
        #[derive(serde::Serialize)]
        pub(crate) enum CallRef<'a> { $($(#[$doc])* $op(&'a $op),)* }

        $crate::cap::relay::relay_calls!(@answer $unit $mode [$($op)*]);
    };
    (@fallback $this:ident, $why:ident, [$fail:expr] [$default:expr]) => {
        $crate::cap::relay::unanswered($this, $why, $fail)
    };
    (@fallback $this:ident, $why:ident, [] [$default:expr]) => {
        $crate::cap::relay::unanswered($this, $why, $default)
    };
    (@answer $unit:ident by_hand [$($op:ident)*]) => {};
    (@answer $unit:ident $mode:ident [$($op:ident)*]) => {
        impl $crate::cap::relay::Relayed for super::$unit {
            type Call = Call;
            type CallRef<'a> = CallRef<'a>;

            async fn answer(
                call: Call,
                ctx: &mut <Self as $crate::cap::unit::CapUnit>::Ctx,
                _: &mut wasmtime::component::ResourceTable,
            ) -> Result<Vec<u8>, $crate::cap::relay::RelayError> {
                let backend = &mut ctx.0;
                match call {
                    $(Call::$op(op) => $crate::cap::relay::encode(
                        &$crate::cap::relay::relay_calls!(@run $mode backend op),
                    ),)*
                }
            }
        }
    };
    (@run sync $backend:ident $op:ident) => { $backend.run($op) };
    (@run async $backend:ident $op:ident) => { $backend.run_async($op).await };
}
pub(crate) use relay_calls;

/// Applies an operation's fallback: typed by the operation, so the
/// closure in [`relay_calls!`] needs no annotations.
pub(crate) fn unanswered<O: Op>(
    op: &O,
    why: RelayError,
    fallback: impl FnOnce(&O, RelayError) -> O::Answer,
) -> O::Answer {
    fallback(op, why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_round_trips_and_garbage_is_not_a_call() {
        use crate::cap::vfs::storage::Volume;
        use crate::cap::{kv, vfs};
        let write = vfs::relay::Write {
            volume: Volume::Workspace,
            path: "a/b".into(),
            data: vec![0, 1, 255],
        };
        let bytes = write.encoded().unwrap();
        let Call::Vfs(vfs::relay::Call::Write(back)) = decode_call(&bytes).unwrap() else {
            panic!("not the vfs write it was");
        };
        assert_eq!(back.encoded().unwrap(), bytes);
        assert!(decode_call(&[0xff, 0xff, 0xff]).is_err());
        // A call's bytes carry no tenant: the cap's variant, the
        // operation's, then its arguments.
        let bytes = kv::relay::Get { key: b"k".to_vec() }.encoded().unwrap();
        assert_eq!(bytes, [0, 0, 1, b'k']);
    }

    /// The bytes of `name[]` in the container tests' escapee, which
    /// hand-writes its forged calls.
    fn escapee_array(name: &str) -> Vec<u8> {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/native/escapee.c");
        let source = std::fs::read_to_string(path).expect("escapee.c");
        let start = source.find(&format!("{name}[] = {{")).expect(name);
        let body = &source[start..];
        let body = &body[body.find('{').unwrap() + 1..body.find('}').unwrap()];
        body.split(',')
            .map(|t| match t.trim() {
                c if c.starts_with('\'') => c.as_bytes()[1],
                n => n.parse().expect(n),
            })
            .collect()
    }

    #[test]
    fn the_escapees_forged_calls_are_the_calls_they_are_named_for() {
        use crate::cap::{kv, launch, secrets};
        let put = decode_call(&escapee_array("kv_put")).unwrap();
        let Call::Kv(kv::relay::Call::Put(put)) = put else {
            panic!("kv_put decodes to {put:?}");
        };
        assert_eq!((put.key, put.value), (b"pwned".to_vec(), b"x".to_vec()));
        let sign = decode_call(&escapee_array("keys_sign")).unwrap();
        let Call::Secrets(secrets::relay::Call::Sign(sign)) = sign else {
            panic!("keys_sign decodes to {sign:?}");
        };
        assert_eq!(sign.name, "victim-key");
        let wait = decode_call(&escapee_array("job_wait")).unwrap();
        let Call::Launch(launch::relay::Call::JobWait(wait)) = wait else {
            panic!("job_wait decodes to {wait:?}");
        };
        assert_eq!(wait.job, 7);
    }
}
