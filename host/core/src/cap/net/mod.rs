//! `net`: outgoing HTTP and sockets, every connection behind the SSRF
//! floor.
//!
//! Interfaces: `workbooks:engine/net@0.1.0` (send, fetch, fetch-many),
//! served here in the host on the guarded transport; `wasi:http/outgoing-handler`
//! (wasmtime-wasi-http, with [`hooks::GuardedHooks`]
//! as the send hook, so every request the guest builds goes through the
//! floor and to the pinned address; the guest follows redirects itself,
//! so each hop is a new, re-checked request), and `wasi:sockets` (every
//! address a socket binds, connects, sends to or receives from is judged by
//! [`sockets::SocketGate`], the store's `socket_addr_check`, and every name
//! lookup passes the same gate). Invariant: none of these is linked without
//! the `net` cap, and with it no byte leaves the host for an address the
//! floor or the operator's allow-list refuses, and no connect, datagram or
//! lookup escapes revocation or the rate limit.
//!
//! Why none of this has a broker component. `net` moves bodies (up to
//! 8 MiB), and a component hop copies every byte again: measured with
//! `cargo bench -p workbooks-cli --bench net`, a 1 MiB `net.fetch` took
//! 1.44 ms served here and 3.31 ms through a net broker (+1.9 ms per MiB;
//! `--bench brokers` shows the same +1.9 ms for a 1 MB value crossing the
//! kv broker). `wasi:http` and `wasi:sockets` values are resources of
//! `wasi:http/types` and `wasi:io` at the exact 0.2.x patch each guest was
//! built against (toolchains pin different ones), and wac-graph merges the
//! guest's and a broker's `wasi:http/types` imports into one, sharing the
//! resource types, only when the names match exactly, version included; so
//! a broker exporting one version cannot be plugged into guests of another; the send hook and the
//! socket gate already hold every guard a broker would add. All of it is
//! linked only with `net`.

mod connected;
mod datagrams;
pub(crate) mod held;
pub(crate) mod hooks;
mod host;
mod listen_at;
mod socket_count;
pub(crate) mod sockets;

use crate::cadence::Holding;
use crate::cap::bindings::workbooks::engine::net;
use crate::cap::unit::{CapUnit, Holds, Opening};
use crate::egress::NetAccess;
use crate::storage::StorageError;
use std::sync::Arc;
use wasmtime::component::{HasSelf, Linker};
use wasmtime_wasi::WasiCtxBuilder;
use wasmtime_wasi::WasiView;
use wasmtime_wasi::sockets::{WasiSockets, WasiSocketsView};
use wasmtime_wasi_http::{WasiHttp, WasiHttpCtx, WasiHttpCtxView};

// The `wasi:sockets` instances the socket count (`socket_count`), the
// listener placement (`listen_at`) and the datagram calls (`datagrams`)
// link over, by the exact names wasmtime-wasi 48 links:
// `net_sockets_hold`, `net_listen`, `wasi03_sockets_hold`,
// `wasi03_listen` and `wasi03_udp_held` fail if these stop matching.

/// `wasi:sockets/tcp` at 0.2 (socket count, listener placement).
const TCP_02: &str = "wasi:sockets/tcp@0.2.12";
/// `wasi:sockets/types` at 0.3 (socket count, listener placement,
/// datagram calls).
const SOCKETS_03: &str = "wasi:sockets/types@0.3.0";

/// The network reach of one store; the default reaches nothing.
#[derive(Default)]
pub(crate) struct NetCtx {
    pub(crate) access: Option<NetAccess>,
    pub(crate) http: WasiHttpCtx,
    pub(crate) hooks: hooks::GuardedHooks,
    pub(crate) gate: Option<Arc<sockets::SocketGate>>,
    /// What the store's `wasi:http` values hold in the host, counted
    /// against its budget; set from the store's memory cap.
    pub(crate) held: held::Held,
}

impl std::fmt::Debug for NetCtx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetCtx")
            .field("access", &self.access)
            .finish()
    }
}

impl NetCtx {
    /// Reach through `access`, each request's connection counted in
    /// `descriptors`.
    pub(crate) fn new(access: NetAccess, descriptors: Arc<Holding>) -> Self {
        Self {
            hooks: hooks::GuardedHooks::new(access.clone(), descriptors),
            access: Some(access),
            http: WasiHttpCtx::new(),
            gate: None,
            held: held::Held::default(),
        }
    }
}

/// Links `net`, the outbound half of `wasi:http`, and `wasi:sockets`.
pub(crate) fn add_to_linker<T: WasiView + Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut NetCtx,
    http: fn(&mut T) -> WasiHttpCtxView<'_>,
    lookup: fn(&mut T) -> sockets::GuardedLookup<'_>,
) -> wasmtime::Result<()> {
    use wasmtime_wasi_http::p2::bindings::http as wasi_http;
    net::add_to_linker::<T, HasSelf<NetCtx>>(linker, get)?;
    // wasi:http/types is linked by dock::linker (a served handler gets it
    // without net); the reach is here.
    wasi_http::outgoing_handler::add_to_linker::<T, WasiHttp>(linker, http)?;
    let options = wasmtime_wasi::p2::bindings::LinkOptions::default();
    use wasmtime_wasi::p2::bindings::sockets as wasi_sockets;
    wasi_sockets::tcp_create_socket::add_to_linker::<T, WasiSockets>(linker, T::sockets)?;
    wasi_sockets::tcp::add_to_linker::<T, WasiSockets>(linker, T::sockets)?;
    wasi_sockets::udp_create_socket::add_to_linker::<T, WasiSockets>(linker, T::sockets)?;
    wasi_sockets::udp::add_to_linker::<T, WasiSockets>(linker, T::sockets)?;
    wasi_sockets::instance_network::add_to_linker::<T, WasiSockets>(linker, T::sockets)?;
    wasi_sockets::network::add_to_linker::<T, WasiSockets>(linker, &(&options).into(), T::sockets)?;
    wasi_sockets::ip_name_lookup::add_to_linker::<T, sockets::GuardedLookupData>(linker, lookup)?;
    // Each socket is a descriptor: the calls that make one are counted;
    // a wildcard bind is placed on loopback.
    socket_count::add_to_linker(linker, lookup)?;
    // Under a scope an open connection is judged again at every read and
    // write.
    connected::add_to_linker(linker, lookup)?;
    listen_at::add_to_linker(linker, lookup)
}

/// Links the 0.3.0 `wasi:sockets` and `wasi:http` client.
pub(crate) fn add_03_to_linker<T: WasiView + Send + 'static>(
    linker: &mut Linker<T>,
    http: fn(&mut T) -> WasiHttpCtxView<'_>,
    lookup: fn(&mut T) -> sockets::GuardedLookup<'_>,
) -> wasmtime::Result<()> {
    // WASI 0.3: the same socket gate (wasmtime-wasi's sockets judge every
    // address through the store's `socket_addr_check` at either version),
    // the same guarded lookup, and the http client through the same send
    // hook (`wasi:http/types@0.3.0` is linked by dock::linker, as at 0.2).
    use wasmtime_wasi::p3::bindings::sockets as wasi_sockets_03;
    wasi_sockets_03::types::add_to_linker::<T, WasiSockets>(linker, T::sockets)?;
    socket_count::add_03_to_linker(linker, lookup)?;
    listen_at::add_03_to_linker(linker, lookup)?;
    datagrams::add_03_to_linker(linker, lookup)?;
    wasi_sockets_03::ip_name_lookup::add_to_linker::<T, sockets::GuardedLookupData>(
        linker, lookup,
    )?;
    wasmtime_wasi_http::p3::bindings::http::client::add_to_linker::<T, WasiHttp>(linker, http)?;
    Ok(())
}

/// The `net` unit: the net interface, `wasi:http` and `wasi:sockets`
/// (0.2 and 0.3), all behind the socket gate and the egress guard.
pub(crate) struct Net;

impl CapUnit for Net {
    const INTERFACE: &'static str = "workbooks:engine/net";
    const PER_TENANT: bool = false;
    type Ctx = NetCtx;

    fn link<T: Holds<Self>>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
        add_to_linker(linker, T::context, T::http, T::lookup)
    }

    fn link_03<T: Holds<Self>>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
        add_03_to_linker(linker, T::http, T::lookup)
    }

    fn open(o: &Opening<'_>, wasi: &mut WasiCtxBuilder) -> Result<NetCtx, StorageError> {
        let guard = o.access.client.guard().clone();
        let gate = Arc::new(
            sockets::SocketGate::new(
                guard,
                o.cadence.clone(),
                o.tenant.to_string(),
                o.descriptors.clone(),
            )
            .scoped(o.scope.cloned()),
        );
        let mut ctx = NetCtx::new(o.access.clone(), o.descriptors.clone());
        ctx.gate = Some(gate.clone());
        wasi.allow_tcp(true)
            .allow_udp(true)
            .allow_ip_name_lookup(true)
            .socket_addr_check(move |addr, usage| {
                Box::pin(std::future::ready(gate.check(addr, usage)))
            });
        Ok(ctx)
    }
}
