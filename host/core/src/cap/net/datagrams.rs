//! How many WASI 0.3 datagram calls one store has waiting.
//!
//! Threat: 0.3's `udp-socket.receive` and `send` are async. A `receive`
//! waits holding a 64 KiB buffer the host allocated for the datagram to
//! come, a `send` holding the datagram it was given, and a guest may start
//! any number before the first is answered: one socket bound to port 0,
//! with no datagram ever sent to it, made the host hold 64 KiB per call
//! for as many calls as the guest started.
//!
//! Served here: both calls are linked over wasmtime-wasi's and take a slot
//! of the store's [`UDP_CALLS_WAITING_PER_STORE`] for as long as they run,
//! given back when the call is answered or cancelled (the slot is dropped
//! with the call's future); each then runs wasmtime-wasi's implementation
//! unchanged.
//!
//! Invariant: a store has at most [`UDP_CALLS_WAITING_PER_STORE`] datagram
//! calls in the host at once, so what they hold is bounded by that many
//! datagrams; the call past it fails at once with `other` naming the limit
//! and holds nothing. At 0.2 a datagram call is synchronous (it sends or
//! receives what is ready and returns), so nothing waits there.

use super::SOCKETS_03;
use super::sockets::{GuardedLookup, SocketGate};
use crate::cap::shadow::answered;
use crate::limits::UDP_CALLS_WAITING_PER_STORE;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use wasmtime::component::{Accessor, Linker, Resource};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::p3::bindings::sockets::types as p3;
use wasmtime_wasi::sockets::{UdpSocket, WasiSockets, WasiSocketsView};

/// One datagram call's place among its store's calls waiting; the call
/// gives it back when its future ends or is dropped.
struct Slot(Arc<SocketGate>);

impl Slot {
    /// A slot of `gate`'s store, if it has fewer calls waiting than its cap.
    fn take(gate: Arc<SocketGate>) -> Option<Self> {
        gate.datagram_calls
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < UDP_CALLS_WAITING_PER_STORE).then_some(n + 1)
            })
            .ok()?;
        Some(Self(gate))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.datagram_calls.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The refusal past the cap; 0.3's `error-code` has no case for it.
fn refusal() -> p3::ErrorCode {
    p3::ErrorCode::Other(Some(format!(
        "udp-calls-waiting: a store has at most {UDP_CALLS_WAITING_PER_STORE} \
         datagram calls (send, receive) waiting at once"
    )))
}

/// A slot for a call of the store `accessor` serves: `Ok(None)` where the
/// store has no gate (never linked this way), `Err` past the cap.
fn slot<T>(
    accessor: &Accessor<T>,
    lookup: fn(&mut T) -> GuardedLookup<'_>,
) -> Result<Option<Slot>, p3::ErrorCode> {
    match accessor.with(|mut access| lookup(access.get()).gate.cloned()) {
        Some(gate) => Slot::take(gate).map(Some).ok_or_else(refusal),
        None => Ok(None),
    }
}

/// Links the counted 0.3 `send` and `receive` over wasmtime-wasi's; called
/// right after `wasi:sockets/types@0.3.0` is linked.
pub(crate) fn add_03_to_linker<T: WasiView + 'static>(
    l: &mut Linker<T>,
    lookup: fn(&mut T) -> GuardedLookup<'_>,
) -> wasmtime::Result<()> {
    type Send = (Resource<UdpSocket>, Vec<u8>, Option<p3::IpSocketAddress>);
    l.allow_shadowing(true);
    let linked = l.instance(SOCKETS_03).and_then(|mut types| {
        types.func_wrap_concurrent(
            "[method]udp-socket.send",
            move |accessor: &Accessor<T>, (socket, data, remote): Send| {
                Box::pin(async move {
                    let _slot = match slot(accessor, lookup) {
                        Ok(slot) => slot,
                        Err(refused) => return Ok((Err(refused),)),
                    };
                    let sockets = accessor.with_getter::<WasiSockets>(T::sockets);
                    let sent = <WasiSockets as p3::HostUdpSocketWithStore<T>>::send(
                        &sockets, socket, data, remote,
                    )
                    .await;
                    answered(sent)
                })
            },
        )?;
        types.func_wrap_concurrent(
            "[method]udp-socket.receive",
            move |accessor: &Accessor<T>, (socket,): (Resource<UdpSocket>,)| {
                Box::pin(async move {
                    let _slot = match slot(accessor, lookup) {
                        Ok(slot) => slot,
                        Err(refused) => return Ok((Err(refused),)),
                    };
                    let sockets = accessor.with_getter::<WasiSockets>(T::sockets);
                    let received =
                        <WasiSockets as p3::HostUdpSocketWithStore<T>>::receive(&sockets, socket)
                            .await;
                    answered(received)
                })
            },
        )
    });
    l.allow_shadowing(false);
    linked
}
