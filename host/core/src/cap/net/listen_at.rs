//! Where a guest's listener sits.
//!
//! Threat: a TCP listener on the wildcard address is a port on every
//! interface. Other hosts see it open and their handshakes complete (the
//! socket gate resets each such connection only when the guest accepts
//! it, and until then its bytes wait in the kernel's queue), so a guest
//! granted loopback could still show a port to the network.
//!
//! Served here: a TCP bind to the wildcard address (0.2's `start-bind`,
//! 0.3's `bind`) binds the family's loopback instead wherever the
//! operator opened it to guests, at the same port; 0.3's `listen` on a
//! socket never bound (which wasmtime-wasi would bind to the wildcard
//! itself) binds that loopback first. Each call is linked over
//! wasmtime-wasi's and then runs it unchanged, with the gate's checks.
//!
//! Invariant: no guest listens on a wildcard address. Where loopback is
//! opened a wildcard bind is a loopback bind; where it is closed the bind
//! stays (a socket bound there may still connect out) and the gate refuses
//! to listen on it. Cost: where loopback is opened, a socket a guest bound
//! to the wildcard before connecting reaches loopback only; a guest that
//! connects without binding first (what the standard libraries do) is
//! unaffected.

use super::sockets::GuardedLookup;
use super::{SOCKETS_03, TCP_02};
use crate::cap::shadow::answered;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use wasmtime::StoreContextMut;
use wasmtime::component::{Access, Linker, Resource};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::p2::bindings::sockets as p2;
use wasmtime_wasi::p3::bindings::sockets::types as p3;
use wasmtime_wasi::sockets::{WasiSockets, WasiSocketsView};

/// Where the store's gate puts a TCP bind to `addr`; a store without a
/// gate is never linked this way, and keeps the address.
fn placed<T>(
    state: &mut T,
    lookup: fn(&mut T) -> GuardedLookup<'_>,
    addr: SocketAddr,
) -> SocketAddr {
    match lookup(state).gate {
        Some(gate) => gate.tcp_bind_at(addr),
        None => addr,
    }
}

/// Links the placed 0.2 bind over wasmtime-wasi's; called right after
/// `wasi:sockets/tcp` is linked.
pub(crate) fn add_to_linker<T: WasiView + Send + 'static>(
    l: &mut Linker<T>,
    lookup: fn(&mut T) -> GuardedLookup<'_>,
) -> wasmtime::Result<()> {
    type Tcp = wasmtime_wasi::p2::TcpSocket;
    type Network = p2::network::Network;
    type At = p2::network::IpSocketAddress;
    l.allow_shadowing(true);
    l.instance(TCP_02)?.func_wrap_async(
        "[method]tcp-socket.start-bind",
        move |mut store: StoreContextMut<'_, T>,
              (socket, network, local): (Resource<Tcp>, Resource<Network>, At)| {
            Box::new(async move {
                let state = store.data_mut();
                let local = placed(state, lookup, local.into()).into();
                let bound = p2::tcp::HostTcpSocket::start_bind(
                    &mut state.sockets(),
                    socket,
                    network,
                    local,
                )
                .await;
                answered(bound)
            })
        },
    )?;
    l.allow_shadowing(false);
    Ok(())
}

/// The same over 0.3's `bind` and `listen`.
pub(crate) fn add_03_to_linker<T: WasiView + Send + 'static>(
    l: &mut Linker<T>,
    lookup: fn(&mut T) -> GuardedLookup<'_>,
) -> wasmtime::Result<()> {
    use wasmtime_wasi::sockets::TcpSocket;
    type Accepting = wasmtime::component::StreamReader<Resource<TcpSocket>>;
    l.allow_shadowing(true);
    let mut types = l.instance(SOCKETS_03)?;
    types.func_wrap_async(
        "[method]tcp-socket.bind",
        move |mut store: StoreContextMut<'_, T>,
              (socket, local): (Resource<TcpSocket>, p3::IpSocketAddress)| {
            Box::new(async move {
                let state = store.data_mut();
                let local = placed(state, lookup, local.into()).into();
                let bound = p3::HostTcpSocket::bind(&mut state.sockets(), socket, local).await;
                answered(bound)
            })
        },
    )?;
    types.func_wrap_async(
        "[method]tcp-socket.listen",
        move |mut store: StoreContextMut<'_, T>, (socket,): (Resource<TcpSocket>,)| {
            Box::new(async move {
                bind_before_listen(store.data_mut(), lookup, socket.rep()).await;
                let listening = <WasiSockets as p3::HostTcpSocketWithStore<T>>::listen(
                    Access::<T, WasiSockets>::new(store, T::sockets),
                    socket,
                )
                .await;
                answered::<Accepting, _>(listening)
            })
        },
    )?;
    l.allow_shadowing(false);
    Ok(())
}

/// Binds the socket at `rep` to its family's opened loopback (port 0) if
/// it was never bound and the gate places a wildcard bind there; anything
/// else is left to wasmtime-wasi's `listen`, which names the error (a
/// socket already connecting stays in its state, and listening on the
/// wildcard is refused by the gate).
async fn bind_before_listen<T: WasiView>(
    state: &mut T,
    lookup: fn(&mut T) -> GuardedLookup<'_>,
    rep: u32,
) {
    use wasmtime_wasi::sockets::TcpSocket;
    let borrow = || Resource::<TcpSocket>::new_borrow(rep);
    let mut view = state.sockets();
    if p3::HostTcpSocket::get_local_address(&mut view, borrow()).is_ok() {
        return;
    }
    let Ok(family) = p3::HostTcpSocket::get_address_family(&mut view, borrow()) else {
        return;
    };
    let wildcard: IpAddr = match family {
        p3::IpAddressFamily::Ipv4 => Ipv4Addr::UNSPECIFIED.into(),
        p3::IpAddressFamily::Ipv6 => Ipv6Addr::UNSPECIFIED.into(),
    };
    let at = placed(state, lookup, SocketAddr::new(wildcard, 0));
    if at.ip().is_unspecified() {
        return;
    }
    // A refusal here is not the guest's answer: `listen` runs next and
    // reports the socket's own state.
    let _ = p3::HostTcpSocket::bind(&mut state.sockets(), borrow(), at.into()).await;
}
