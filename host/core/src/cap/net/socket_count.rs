//! How many sockets one store holds.
//!
//! Threat: a `wasi:sockets` socket is an OS descriptor from the moment it
//! is made, and the store's table (10 000 entries) let one guest hold as
//! many: past a service's usual soft limit of 1 024, so one request to a
//! served handler stopped `wbx serve` accepting and made another tenant's
//! run in the daemon wait for the first to end.
//!
//! Served here: the calls that make a socket (`create-tcp-socket`,
//! `create-udp-socket` and `tcp-socket.accept` at 0.2, `tcp-socket.create`
//! and `udp-socket.create` at 0.3) are linked over wasmtime-wasi's and
//! first count the sockets in the store's table (a sweep: a socket dropped
//! or closed is simply no longer there).
//!
//! Invariant: a store holds at most [`MAX_SOCKETS_PER_STORE`] sockets, and
//! all stores of its tenant at most their per-tenant count of descriptors
//! (`crate::cadence::Descriptors`); the call that would make one more
//! fails with `new-socket-limit` (0.2) or `other` naming the limits (0.3),
//! and the descriptor is never opened.
//! Connections a 0.3 listener accepts come through a stream wasmtime-wasi
//! fills itself, past any call linked here: so the store keeps its count
//! in its holding (`crate::cadence::Holding`), set after every socket made
//! and lowered by every socket dropped (each socket resource's drop is
//! linked over wasmtime-wasi's, and deletes it as that does), and the
//! socket gate resets a connection that would take the store or its tenant
//! past the cap. Not covered: a connection accepted while the stream was
//! being dropped is counted until the store's next socket call.

use super::sockets::GuardedLookup;
use super::{SOCKETS_03, TCP_02};
use crate::cadence::Kind;
use crate::cap::shadow::{answered, count, drop_then};
use crate::limits::MAX_SOCKETS_PER_STORE;
use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource, ResourceTable};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::p2::bindings::sockets as p2;
use wasmtime_wasi::p2::{DynInputStream, DynOutputStream};
use wasmtime_wasi::p3::bindings::sockets::types as p3;
use wasmtime_wasi::sockets::WasiSocketsView;

/// The instances whose socket-making calls are counted: the exact names
/// wasmtime-wasi 48 links. `net_sockets_hold` and `wasi03_sockets_hold`
/// fail if these stop matching.
const TCP_CREATE_02: &str = "wasi:sockets/tcp-create-socket@0.2.12";
const UDP_CREATE_02: &str = "wasi:sockets/udp-create-socket@0.2.12";
const UDP_02: &str = "wasi:sockets/udp@0.2.12";

/// The sockets in `table`, at either version.
pub(crate) fn live(table: &mut ResourceTable) -> usize {
    count(table, |entry| {
        entry.is::<wasmtime_wasi::p2::TcpSocket>()
            || entry.is::<wasmtime_wasi::p2::UdpSocket>()
            || entry.is::<wasmtime_wasi::sockets::TcpSocket>()
            || entry.is::<wasmtime_wasi::sockets::UdpSocket>()
    })
}

/// The store's socket gate, where it has one.
type Lookup<T> = fn(&mut T) -> GuardedLookup<'_>;

/// A socket dropped leaves the store's count, and its tenant's, at once:
/// the count the next accepted connection is admitted by.
fn released<T>(state: &mut T, lookup: Lookup<T>) {
    if let Some(gate) = lookup(state).gate {
        gate.descriptors().release(Kind::Socket);
    }
}

/// The sockets the store holds (one sweep), if it and its tenant may hold
/// one more (taken for the call in the tenant's count): the caller is then
/// [`done`].
fn room<T: WasiView>(state: &mut T, lookup: Lookup<T>) -> Option<usize> {
    let held = live(state.ctx().table);
    match lookup(state).gate {
        Some(gate) => gate.descriptors().reserve(Kind::Socket, held),
        None => held < MAX_SOCKETS_PER_STORE,
    }
    .then_some(held)
}

/// The call [`room`] found `held` sockets for is done and `made` one or
/// not: the store holds `held` plus the one it made (no other call of the
/// store ran meanwhile).
fn done<T>(state: &mut T, lookup: Lookup<T>, held: usize, made: bool) {
    if let Some(gate) = lookup(state).gate {
        let now = held + usize::from(made);
        gate.descriptors().finish(Kind::Socket, made, Some(now));
    }
}

type Made02<R> = wasmtime::Result<(Result<R, p2::network::ErrorCode>,)>;

/// Links the counted 0.2 calls over wasmtime-wasi's; called right after
/// those are linked.
pub(crate) fn add_to_linker<T: WasiView + Send + 'static>(
    l: &mut Linker<T>,
    lookup: Lookup<T>,
) -> wasmtime::Result<()> {
    use p2::network::{ErrorCode, IpAddressFamily};
    type Tcp = wasmtime_wasi::p2::TcpSocket;
    type Accepted = (
        Resource<Tcp>,
        Resource<DynInputStream>,
        Resource<DynOutputStream>,
    );
    l.allow_shadowing(true);
    l.instance(TCP_CREATE_02)?.func_wrap(
        "create-tcp-socket",
        move |mut store: StoreContextMut<'_, T>,
              (family,): (IpAddressFamily,)|
              -> Made02<Resource<Tcp>> {
            let state = store.data_mut();
            let Some(held) = room(state, lookup) else {
                return Ok((Err(ErrorCode::NewSocketLimit),));
            };
            let made = p2::tcp_create_socket::Host::create_tcp_socket(&mut state.sockets(), family);
            done(state, lookup, held, made.is_ok());
            answered(made)
        },
    )?;
    l.instance(UDP_CREATE_02)?.func_wrap_async(
        "create-udp-socket",
        move |mut store: StoreContextMut<'_, T>, (family,): (IpAddressFamily,)| {
            Box::new(async move {
                let state = store.data_mut();
                let Some(held) = room(state, lookup) else {
                    return Ok((Err(ErrorCode::NewSocketLimit),));
                };
                let made =
                    p2::udp_create_socket::Host::create_udp_socket(&mut state.sockets(), family)
                        .await;
                done(state, lookup, held, made.is_ok());
                answered::<Resource<wasmtime_wasi::p2::UdpSocket>, _>(made)
            })
        },
    )?;
    let mut tcp = l.instance(TCP_02)?;
    tcp.func_wrap(
        "[method]tcp-socket.accept",
        move |mut store: StoreContextMut<'_, T>,
              (listener,): (Resource<Tcp>,)|
              -> Made02<Accepted> {
            let state = store.data_mut();
            let Some(held) = room(state, lookup) else {
                return Ok((Err(ErrorCode::NewSocketLimit),));
            };
            let accepted = p2::tcp::HostTcpSocket::accept(&mut state.sockets(), listener);
            done(state, lookup, held, accepted.is_ok());
            answered(accepted)
        },
    )?;
    let release = move |state: &mut T| released(state, lookup);
    drop_then::<T, Tcp>(&mut tcp, "tcp-socket", release)?;
    drop_then::<T, wasmtime_wasi::p2::UdpSocket>(&mut l.instance(UDP_02)?, "udp-socket", release)?;
    l.allow_shadowing(false);
    Ok(())
}

type Made03<R> = wasmtime::Result<(Result<R, p3::ErrorCode>,)>;

/// The refusal at 0.3, whose `error-code` has no socket-limit case.
fn limit_03<T: WasiView>(state: &mut T, lookup: Lookup<T>) -> p3::ErrorCode {
    let tenant = lookup(state)
        .gate
        .map_or(0, |g| g.descriptors().tenant_cap());
    p3::ErrorCode::Other(Some(format!(
        "new-socket-limit: a store holds at most {MAX_SOCKETS_PER_STORE} sockets, \
         and a tenant's stores {tenant} sockets and files together"
    )))
}

/// The same over the 0.3 calls.
pub(crate) fn add_03_to_linker<T: WasiView + Send + 'static>(
    l: &mut Linker<T>,
    lookup: Lookup<T>,
) -> wasmtime::Result<()> {
    use p3::IpAddressFamily;
    use wasmtime_wasi::sockets::{TcpSocket, UdpSocket};
    l.allow_shadowing(true);
    let mut types = l.instance(SOCKETS_03)?;
    types.func_wrap(
        "[static]tcp-socket.create",
        move |mut store: StoreContextMut<'_, T>,
              (family,): (IpAddressFamily,)|
              -> Made03<Resource<TcpSocket>> {
            let state = store.data_mut();
            let Some(held) = room(state, lookup) else {
                return Ok((Err(limit_03(state, lookup)),));
            };
            let made = p3::HostTcpSocket::create(&mut state.sockets(), family);
            done(state, lookup, held, made.is_ok());
            answered(made)
        },
    )?;
    types.func_wrap_async(
        "[static]udp-socket.create",
        move |mut store: StoreContextMut<'_, T>, (family,): (IpAddressFamily,)| {
            Box::new(async move {
                let state = store.data_mut();
                let Some(held) = room(state, lookup) else {
                    return Ok((Err(limit_03(state, lookup)),));
                };
                let made = p3::HostUdpSocket::create(&mut state.sockets(), family).await;
                done(state, lookup, held, made.is_ok());
                answered::<Resource<UdpSocket>, _>(made)
            })
        },
    )?;
    let release = move |state: &mut T| released(state, lookup);
    drop_then::<T, TcpSocket>(&mut types, "tcp-socket", release)?;
    drop_then::<T, UdpSocket>(&mut types, "udp-socket", release)?;
    l.allow_shadowing(false);
    Ok(())
}
