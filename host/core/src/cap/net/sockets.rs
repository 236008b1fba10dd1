//! `wasi:sockets` behind the whole cadence: every connect, datagram and
//! name lookup of a guest passes the cadence.
//!
//! Threat: the raw socket interfaces are a path out of the sandbox beside
//! the engine's own `net` interface, so they get the same treatment: a
//! revoked tenant cannot connect, send a datagram or look a name up, and
//! stops receiving datagrams; every connect, datagram sent and lookup counts
//! against the rate limit; every address is judged by the SSRF floor,
//! including the addresses a lookup returns (an internal address is left
//! out of the answer, so a guest cannot map the internal network by name).
//! A guest listens and takes connections on this host's loopback only,
//! and only where the operator opened loopback to guests (`WB_NET_ALLOW`
//! covering `127.0.0.1`, `::1`): a listener it asks for on another
//! address is refused, a TCP bind to the wildcard address binds the opened
//! loopback instead (`listen_at`), a connection from a loopback address
//! that is not opened is reset before the guest sees it, and
//! each accepted connection passes revocation and the rate limit (inbound
//! traffic from the network is `wbx serve`'s, with its own limits) and is
//! taken only while the store holds fewer sockets than its cap and its
//! tenant's stores fewer descriptors than theirs (a connection past either
//! is reset: a 0.3 listener hands connections through
//! a stream wasmtime-wasi fills itself, so the count it is admitted by is
//! the store's holding as last counted, plus the accepts since). A port
//! is chosen by the guest only on an opened loopback address (elsewhere it
//! binds port 0, so it cannot squat a port the host's services want), and
//! it receives datagrams only from addresses this store sent to or from an
//! opened loopback address: after binding `0.0.0.0:0` a socket would
//! otherwise take datagrams from any public host that guessed the port.
//! With loopback opened, guests of different tenants can reach each other's
//! listeners as they reach any loopback service. Not covered: a TCP stream
//! connected (or accepted) before a revocation runs on until the guest
//! closes it or its call ends.

use crate::cadence::{Cadence, Denial, Holding, Kind};
use crate::egress::NetGuard;
use crate::grants::Scope;
use crate::limits::{SCOPE_MAX_LOOKED_UP, SOCKET_MAX_UDP_PEERS};
use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, Mutex};
use wasmtime::component::Resource;
use wasmtime_wasi::p2::SocketError;
use wasmtime_wasi::p2::bindings::sockets::ip_name_lookup::{
    Host as LookupHost, HostResolveAddressStream, ResolveAddressStream,
};
use wasmtime_wasi::p2::bindings::sockets::network::{
    ErrorCode, Host as NetworkHost, HostNetwork, IpAddress, Network,
};
use wasmtime_wasi::p3::bindings::sockets::ip_name_lookup as p3_lookup;
use wasmtime_wasi::sockets::{SocketAddrUse, WasiSockets, WasiSocketsCtxView, WasiSocketsView};

/// The name socket use is admitted and audited under.
const AUDITED_AS: &str = "net";

/// Judges every socket use of one store.
#[derive(Debug)]
pub(crate) struct SocketGate {
    guard: NetGuard,
    cadence: Arc<Cadence>,
    tenant: String,
    /// Where this store's guest has sent datagrams: the only sources it
    /// may receive from.
    udp_peers: Mutex<HashSet<SocketAddr>>,
    /// The store's descriptors, in its tenant's ledger: the sockets it
    /// holds, the connections accepted included.
    descriptors: Arc<Holding>,
    /// The store's 0.3 datagram calls waiting now (`datagrams`).
    pub(super) datagram_calls: AtomicUsize,
    /// The destinations the grant allows (`None`: the floor alone).
    scope: Option<Scope>,
    /// Under a scope: the names this store looked up, by the addresses
    /// they were answered, so a connect to one is judged by its name.
    looked_up: Mutex<HashMap<IpAddr, Vec<String>>>,
    /// 0.2 lookups in progress: the name each stream answers.
    lookups: Mutex<HashMap<u32, String>>,
}

impl SocketGate {
    /// A gate for `tenant` judging addresses with `guard`, counting the
    /// store's sockets in `descriptors`.
    pub(crate) fn new(
        guard: NetGuard,
        cadence: Arc<Cadence>,
        tenant: String,
        descriptors: Arc<Holding>,
    ) -> Self {
        Self {
            guard,
            cadence,
            tenant,
            udp_peers: Mutex::new(HashSet::new()),
            datagram_calls: AtomicUsize::new(0),
            descriptors,
            scope: None,
            looked_up: Mutex::new(HashMap::new()),
            lookups: Mutex::new(HashMap::new()),
        }
    }

    /// This gate, judging every connect and lookup by `scope` too.
    pub(crate) fn scoped(mut self, scope: Option<Scope>) -> Self {
        self.scope = scope;
        self
    }

    /// Whether a connect to `addr` over `scheme` is in scope: the scope
    /// names the address, or a name this store looked up and was
    /// answered it.
    /// The refusal's reason otherwise (`out_of_scope`, or the grant's own
    /// when it expired or was revoked).
    fn in_scope(&self, scheme: &str, addr: SocketAddr) -> Result<(), &'static str> {
        let Some(scope) = &self.scope else {
            return Ok(());
        };
        let scoped = scope.now().map_err(|e| e.reason())?;
        let Some(net) = scoped.net() else {
            return Ok(());
        };
        let looked_up = self.looked_up.lock().unwrap_or_else(|p| p.into_inner());
        let names = looked_up.get(&addr.ip().to_canonical());
        let names = names.map(|n| n.iter().map(String::as_str));
        match net.allows_addr(scheme, addr.ip(), addr.port(), names.into_iter().flatten()) {
            true => Ok(()),
            false => Err("out_of_scope"),
        }
    }

    /// Whether this gate judges by a scope (so an open connection is
    /// judged again, `super::connected`).
    pub(crate) fn is_scoped(&self) -> bool {
        self.scope.is_some()
    }

    /// Whether an open TCP connection to `peer` may still carry bytes:
    /// the grant as it is now allows it. A refusal is audited.
    pub(crate) fn still_allows(&self, peer: SocketAddr) -> Result<(), &'static str> {
        self.in_scope("tcp", peer).inspect_err(|why| {
            self.deny(why, peer);
        })
    }

    /// Under a scope: notes that 0.2 lookup stream `rep` answers `name`;
    /// false (the lookup is refused) when the store already has
    /// [`SCOPE_MAX_LOOKED_UP`] lookups in progress.
    fn begin_lookup(&self, rep: u32, name: String) -> bool {
        if self.scope.is_none() {
            return true;
        }
        let mut lookups = self.lookups.lock().unwrap_or_else(|p| p.into_inner());
        if lookups.len() >= SCOPE_MAX_LOOKED_UP {
            return false;
        }
        lookups.insert(rep, name);
        true
    }

    /// The name 0.2 lookup stream `rep` answers, noted at its start.
    fn lookup_name(&self, rep: u32) -> Option<String> {
        let lookups = self.lookups.lock().unwrap_or_else(|p| p.into_inner());
        lookups.get(&rep).cloned()
    }

    /// Forgets 0.2 lookup stream `rep`.
    fn end_lookup(&self, rep: u32) {
        let mut lookups = self.lookups.lock().unwrap_or_else(|p| p.into_inner());
        lookups.remove(&rep);
    }

    /// Remembers that a lookup of `name` answered `ip` (under a scope).
    fn learn(&self, name: &str, ip: IpAddr) {
        if self.scope.is_none() {
            return;
        }
        let mut looked_up = self.looked_up.lock().unwrap_or_else(|p| p.into_inner());
        let at = looked_up.len();
        let names = match looked_up.get_mut(&ip.to_canonical()) {
            Some(names) => names,
            None if at >= SCOPE_MAX_LOOKED_UP => return,
            None => looked_up.entry(ip.to_canonical()).or_default(),
        };
        let name = name.trim_end_matches('.').to_ascii_lowercase();
        if !names.contains(&name) && names.len() < SCOPE_MAX_LOOKED_UP {
            names.push(name);
        }
    }

    /// The store's descriptors, for the calls that make a socket.
    pub(crate) fn descriptors(&self) -> &Holding {
        &self.descriptors
    }

    fn deny(&self, why: &'static str, addr: SocketAddr) -> bool {
        self.cadence.deny(
            &self.tenant,
            AUDITED_AS,
            Denial::Guard(why),
            &addr.to_string(),
        );
        false
    }

    /// Whether the guest may use `addr` for `usage`; every refusal is
    /// audited.
    pub(crate) fn check(&self, addr: SocketAddr, usage: SocketAddrUse) -> bool {
        use SocketAddrUse as U;
        match usage {
            U::TcpBind | U::UdpBind => self.may_bind(addr) || self.deny("socket_bind", addr),
            U::TcpListen => self.may_listen(addr) || self.deny("socket_listen", addr),
            U::TcpAccept => {
                if !self.opened_loopback(addr.ip()) {
                    return self.deny("socket_accept", addr);
                }
                if self.cadence.admit(&self.tenant, AUDITED_AS).is_err() {
                    return false;
                }
                self.descriptors.take_one(Kind::Socket) || self.deny("new_socket_limit", addr)
            }
            U::TcpConnect | U::UdpSend => {
                if self.cadence.admit(&self.tenant, AUDITED_AS).is_err() {
                    return false;
                }
                if let Err(d) = self.guard.check_ip(addr.ip()) {
                    return self.deny(d.reason(), addr);
                }
                let scheme = if matches!(usage, U::TcpConnect) {
                    "tcp"
                } else {
                    "udp"
                };
                if let Err(reason) = self.in_scope(scheme, addr) {
                    return self.deny(reason, addr);
                }
                if matches!(usage, U::UdpSend) {
                    let mut peers = self.udp_peers.lock().unwrap_or_else(|p| p.into_inner());
                    if !peers.contains(&addr) {
                        if peers.len() >= SOCKET_MAX_UDP_PEERS {
                            drop(peers);
                            return self.deny("udp_too_many_peers", addr);
                        }
                        peers.insert(addr);
                    }
                }
                true
            }
            U::UdpReceive => {
                if self.cadence.revocations().is_revoked(&self.tenant) {
                    self.cadence
                        .deny(&self.tenant, AUDITED_AS, Denial::Revoked, &addr.to_string());
                    return false;
                }
                // A datagram from outside the grant as it is now (narrowed,
                // expired, revoked) is dropped.
                if let Err(reason) = self.in_scope("udp", addr) {
                    return self.deny(reason, addr);
                }
                let sent_to = self
                    .udp_peers
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .contains(&addr);
                sent_to || self.opened_loopback(addr.ip()) || self.deny("udp_unsolicited", addr)
            }
        }
    }

    /// Whether `ip` is this host's loopback and the floor lets guests
    /// reach it (only the operator's allow-list does).
    fn opened_loopback(&self, ip: IpAddr) -> bool {
        ip.to_canonical().is_loopback() && self.guard.check_ip(ip).is_ok()
    }

    /// A bind names its port only on an opened loopback address; port 0
    /// may go anywhere (the system refuses an address not this host's).
    fn may_bind(&self, addr: SocketAddr) -> bool {
        addr.port() == 0 || self.opened_loopback(addr.ip())
    }

    /// A listener sits on an opened loopback address only: never on the
    /// wildcard address, which [`Self::tcp_bind_at`] turns into loopback
    /// wherever loopback is opened.
    fn may_listen(&self, local: SocketAddr) -> bool {
        self.opened_loopback(local.ip())
    }

    /// Where a TCP bind to `addr` goes: the wildcard address of a family
    /// whose loopback is opened to guests binds that loopback at the same
    /// port, so a listener is never a port on every interface; any other
    /// address (a wildcard where loopback is closed included) is kept.
    pub(crate) fn tcp_bind_at(&self, addr: SocketAddr) -> SocketAddr {
        let loopback: IpAddr = match addr.ip() {
            IpAddr::V4(v4) if v4.is_unspecified() => Ipv4Addr::LOCALHOST.into(),
            IpAddr::V6(v6) if v6.is_unspecified() => Ipv6Addr::LOCALHOST.into(),
            _ => return addr,
        };
        if self.opened_loopback(loopback) {
            SocketAddr::new(loopback, addr.port())
        } else {
            addr
        }
    }

    /// Whether a lookup may tell the guest about `address`: only if the
    /// floor would let it connect there.
    fn may_know(&self, address: &IpAddress) -> bool {
        self.may_know_ip(ip_of(address))
    }

    /// Whether a lookup may answer `ip`.
    fn may_know_ip(&self, ip: IpAddr) -> bool {
        self.guard.check_ip(ip).is_ok()
    }

    /// Revocation, the rate limit and the scope for one name lookup: a
    /// scoped store looks up only names its scope allows a socket to.
    fn admit_lookup(&self, name: &str) -> bool {
        let admitted = self.cadence.admit(&self.tenant, AUDITED_AS).is_ok();
        if !admitted {
            tracing::info!(name, "refused a name lookup");
            return false;
        }
        let refused = self.scope.as_ref().and_then(|scope| match scope.now() {
            Err(e) => Some(e.reason()),
            Ok(s) => s
                .net()
                .is_some_and(|n| !n.allows_name(name))
                .then_some("out_of_scope"),
        });
        if let Some(reason) = refused {
            self.cadence
                .deny(&self.tenant, AUDITED_AS, Denial::Guard(reason), name);
            return false;
        }
        true
    }
}

/// A 0.2 address as the standard library's.
fn ip_of(address: &IpAddress) -> IpAddr {
    match *address {
        IpAddress::Ipv4((a, b, c, d)) => Ipv4Addr::new(a, b, c, d).into(),
        IpAddress::Ipv6((a, b, c, d, e, f, g, h)) => Ipv6Addr::new(a, b, c, d, e, f, g, h).into(),
    }
}

/// `wasi:sockets/ip-name-lookup` with the cadence in front of
/// wasmtime-wasi's resolver.
pub(crate) struct GuardedLookup<'a> {
    /// wasmtime-wasi's sockets view.
    pub(crate) sockets: WasiSocketsCtxView<'a>,
    /// The store's gate; `None` (never linked that way) refuses every lookup.
    pub(crate) gate: Option<&'a Arc<SocketGate>>,
}

/// [`wasmtime::component::HasData`] for [`GuardedLookup`].
pub(crate) struct GuardedLookupData;

impl wasmtime::component::HasData for GuardedLookupData {
    type Data<'a> = GuardedLookup<'a>;
}

impl NetworkHost for GuardedLookup<'_> {
    fn convert_error_code(&mut self, error: SocketError) -> wasmtime::Result<ErrorCode> {
        NetworkHost::convert_error_code(&mut self.sockets, error)
    }

    fn network_error_code(
        &mut self,
        err: Resource<wasmtime::Error>,
    ) -> wasmtime::Result<Option<ErrorCode>> {
        NetworkHost::network_error_code(&mut self.sockets, err)
    }
}

impl HostNetwork for GuardedLookup<'_> {
    fn drop(&mut self, network: Resource<Network>) -> wasmtime::Result<()> {
        HostNetwork::drop(&mut self.sockets, network)
    }
}

impl LookupHost for GuardedLookup<'_> {
    fn resolve_addresses(
        &mut self,
        network: Resource<Network>,
        name: String,
    ) -> Result<Resource<ResolveAddressStream>, SocketError> {
        let Some(gate) = self.gate.filter(|g| g.admit_lookup(&name)) else {
            return Err(ErrorCode::AccessDenied.into());
        };
        let stream = LookupHost::resolve_addresses(&mut self.sockets, network, name.clone())?;
        if !gate.begin_lookup(stream.rep(), name) {
            HostResolveAddressStream::drop(&mut self.sockets, stream).map_err(SocketError::trap)?;
            return Err(ErrorCode::AccessDenied.into());
        }
        Ok(stream)
    }
}

impl HostResolveAddressStream for GuardedLookup<'_> {
    fn resolve_next_address(
        &mut self,
        stream: Resource<ResolveAddressStream>,
    ) -> Result<Option<IpAddress>, SocketError> {
        loop {
            let next = HostResolveAddressStream::resolve_next_address(
                &mut self.sockets,
                Resource::new_borrow(stream.rep()),
            )?;
            match (next, self.gate) {
                (Some(address), Some(gate)) if !gate.may_know(&address) => continue,
                (Some(address), Some(gate)) => {
                    if let Some(name) = gate.lookup_name(stream.rep()) {
                        gate.learn(&name, ip_of(&address));
                    }
                    return Ok(Some(address));
                }
                (other, _) => return Ok(other),
            }
        }
    }

    fn subscribe(
        &mut self,
        stream: Resource<ResolveAddressStream>,
    ) -> wasmtime::Result<Resource<wasmtime_wasi::p2::DynPollable>> {
        HostResolveAddressStream::subscribe(&mut self.sockets, stream)
    }

    fn drop(&mut self, stream: Resource<ResolveAddressStream>) -> wasmtime::Result<()> {
        if let Some(gate) = self.gate {
            gate.end_lookup(stream.rep());
        }
        HostResolveAddressStream::drop(&mut self.sockets, stream)
    }
}

/// WASI 0.3's `resolve-addresses`, an async function answering the whole
/// list at once: the same cadence in front, the same floor over every
/// address answered.
impl<U: wasmtime_wasi::WasiView + 'static> p3_lookup::HostWithStore<U> for GuardedLookupData {
    async fn resolve_addresses(
        store: &wasmtime::component::Accessor<U, Self>,
        name: String,
    ) -> wasmtime::Result<Result<Vec<p3_lookup::IpAddress>, p3_lookup::ErrorCode>> {
        let gate = store.with(|mut view| view.get().gate.cloned());
        let Some(gate) = gate.filter(|g| g.admit_lookup(&name)) else {
            return Ok(Err(p3_lookup::ErrorCode::AccessDenied));
        };
        let resolver = store.with_getter::<WasiSockets>(<U as WasiSocketsView>::sockets);
        let found = <WasiSockets as p3_lookup::HostWithStore<U>>::resolve_addresses(
            &resolver,
            name.clone(),
        )
        .await?;
        Ok(found.map(|addresses| {
            addresses
                .into_iter()
                .filter(|a| gate.may_know_ip((*a).into()))
                .inspect(|a| gate.learn(&name, (*a).into()))
                .collect()
        }))
    }
}

impl p3_lookup::Host for GuardedLookup<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cadence::{Descriptors, RateLimiter};
    use crate::egress::SystemResolver;
    use crate::limits::MAX_SOCKETS_PER_STORE;
    use wasmtime_wasi::sockets::SocketAddrUse as U;

    fn gate(calls: u64) -> (Arc<Cadence>, SocketGate) {
        gate_allowing(calls, "")
    }

    fn gate_allowing(calls: u64, allow: &str) -> (Arc<Cadence>, SocketGate) {
        let cadence = Cadence::new(
            None,
            RateLimiter::new(calls, std::time::Duration::from_secs(3600)),
        );
        let allow = crate::egress::Cidr::parse_list(allow).unwrap();
        let guard = NetGuard::new(allow, Arc::new(SystemResolver));
        let descriptors = Arc::new(Descriptors::new(10_000).holding("t"));
        (
            cadence.clone(),
            SocketGate::new(guard, cadence, "t".into(), descriptors),
        )
    }

    /// A gate scoped to `patterns`, with calls to spare.
    fn scoped_gate(patterns: &[&str]) -> SocketGate {
        let scope = crate::egress::Destinations::parse(patterns).unwrap();
        let scope = Scope::fixed(crate::grants::Scoped::destinations(scope));
        gate(1 << 20).1.scoped(Some(scope))
    }

    #[test]
    fn a_scoped_gate_remembers_no_more_looked_up_addresses_or_names_than_its_bound() {
        let g = scoped_gate(&["tcp://db.test:5432"]);
        let public = |i: usize| SocketAddr::from(([93, 184, (i >> 8) as u8, i as u8], 5432));
        for i in 0..=SCOPE_MAX_LOOKED_UP {
            g.learn("db.test", public(i).ip());
        }
        assert!(g.check(public(0), U::TcpConnect));
        assert!(g.check(public(SCOPE_MAX_LOOKED_UP - 1), U::TcpConnect));
        assert!(
            !g.check(public(SCOPE_MAX_LOOKED_UP), U::TcpConnect),
            "an address past the bound was remembered"
        );
        // Names for one address: the allowed one, learned past the bound,
        // is not remembered.
        let g = scoped_gate(&["tcp://db.test:5432"]);
        for i in 0..SCOPE_MAX_LOOKED_UP {
            g.learn(&format!("other{i}.test"), public(0).ip());
        }
        g.learn("db.test", public(0).ip());
        assert!(!g.check(public(0), U::TcpConnect));
        // Unscoped, nothing is remembered at all.
        let (_, g) = gate(10);
        g.learn("db.test", public(0).ip());
        assert!(g.looked_up.lock().unwrap().is_empty());
    }

    #[test]
    fn a_scoped_gate_refuses_a_lookup_past_its_bound_of_lookups_in_progress() {
        let g = scoped_gate(&["tcp://db.test:5432"]);
        for rep in 0..SCOPE_MAX_LOOKED_UP as u32 {
            assert!(g.begin_lookup(rep, "db.test".into()));
        }
        assert!(!g.begin_lookup(u32::MAX, "db.test".into()));
        g.end_lookup(0);
        assert!(g.begin_lookup(u32::MAX, "db.test".into()));
        assert_eq!(g.lookup_name(u32::MAX).as_deref(), Some("db.test"));
    }

    fn at(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn on_the_default_floor_a_guest_binds_port_0_and_nobody_listens_or_accepts() {
        let (_, g) = gate(100);
        assert!(g.check(at("0.0.0.0:0"), U::UdpBind));
        assert!(g.check(at("[::]:0"), U::TcpBind));
        assert!(g.check(at("127.0.0.1:0"), U::TcpBind), "the system picks");
        assert!(!g.check(at("0.0.0.0:53"), U::UdpBind));
        assert!(!g.check(at("127.0.0.1:8080"), U::TcpBind));
        assert!(!g.check(at("0.0.0.0:41000"), U::TcpListen));
        assert!(!g.check(at("127.0.0.1:41000"), U::TcpListen));
        assert!(!g.check(at("8.8.8.8:80"), U::TcpAccept));
        assert!(!g.check(at("127.0.0.1:5000"), U::TcpAccept));
    }

    #[test]
    fn with_loopback_opened_a_guest_listens_there_and_accepts_only_from_there() {
        let (cadence, g) = gate_allowing(100, "127.0.0.0/8,::1/128");
        assert!(g.check(at("127.0.0.1:8080"), U::TcpBind));
        assert!(g.check(at("[::1]:8080"), U::UdpBind));
        assert!(!g.check(at("0.0.0.0:8080"), U::TcpBind), "a wildcard port");
        assert!(
            !g.check(at("10.1.2.3:8080"), U::TcpBind),
            "another interface"
        );
        assert!(g.check(at("127.0.0.1:41000"), U::TcpListen));
        assert!(
            !g.check(at("0.0.0.0:41000"), U::TcpListen),
            "every interface"
        );
        assert!(!g.check(at("[::]:41000"), U::TcpListen), "every interface");
        assert!(!g.check(at("10.1.2.3:41000"), U::TcpListen));
        assert!(!g.check(at("192.168.1.2:41000"), U::TcpListen));
        assert!(g.check(at("127.0.0.1:5000"), U::TcpAccept));
        assert!(g.check(at("[::ffff:127.0.0.1]:5000"), U::TcpAccept));
        assert!(!g.check(at("8.8.8.8:5000"), U::TcpAccept), "from outside");
        assert!(!g.check(at("10.0.0.7:5000"), U::TcpAccept), "from the LAN");
        assert!(g.check(at("127.0.0.1:5000"), U::UdpReceive), "loopback");
        assert!(!g.check(at("8.8.8.8:53"), U::UdpReceive), "unsolicited");
        cadence.revocations().revoke("t").unwrap();
        assert!(!g.check(at("127.0.0.1:5000"), U::TcpAccept), "revoked");
        assert!(!g.check(at("127.0.0.1:5000"), U::UdpReceive), "revoked");
    }

    #[test]
    fn only_the_loopback_the_operator_opened_is_listened_on() {
        let (_, g) = gate_allowing(100, "127.0.0.0/8");
        assert!(g.check(at("127.0.0.1:41000"), U::TcpListen));
        assert!(!g.check(at("[::1]:41000"), U::TcpListen), "::1 is not open");
        assert!(!g.check(at("[::1]:8080"), U::TcpBind));
    }

    #[test]
    fn a_wildcard_bind_goes_to_the_opened_loopback_of_its_family_and_nowhere_else() {
        let (_, g) = gate_allowing(100, "127.0.0.0/8");
        assert_eq!(g.tcp_bind_at(at("0.0.0.0:8080")), at("127.0.0.1:8080"));
        assert_eq!(g.tcp_bind_at(at("0.0.0.0:0")), at("127.0.0.1:0"));
        assert_eq!(g.tcp_bind_at(at("[::]:8080")), at("[::]:8080"), "::1 shut");
        assert_eq!(g.tcp_bind_at(at("10.1.2.3:0")), at("10.1.2.3:0"));
        let (_, shut) = gate(100);
        assert_eq!(shut.tcp_bind_at(at("0.0.0.0:0")), at("0.0.0.0:0"));
        let (_, both) = gate_allowing(100, "127.0.0.1/32,::1/128");
        assert_eq!(both.tcp_bind_at(at("[::]:9")), at("[::1]:9"));
    }

    #[test]
    fn every_accepted_connection_counts_against_the_rate_limit() {
        let (_, g) = gate_allowing(2, "127.0.0.0/8");
        assert!(g.check(at("127.0.0.1:5000"), U::TcpAccept));
        assert!(g.check(at("127.0.0.1:5001"), U::TcpAccept));
        assert!(!g.check(at("127.0.0.1:5002"), U::TcpAccept));
    }

    #[test]
    fn a_connection_is_accepted_only_while_the_store_has_room_for_its_socket() {
        let (_, g) = gate_allowing(10_000, "127.0.0.0/8");
        g.descriptors().set(Kind::Socket, MAX_SOCKETS_PER_STORE - 2);
        assert!(g.check(at("127.0.0.1:5000"), U::TcpAccept));
        assert!(g.check(at("127.0.0.1:5001"), U::TcpAccept), "the last");
        assert!(!g.check(at("127.0.0.1:5002"), U::TcpAccept), "one past");
        g.descriptors().set(Kind::Socket, MAX_SOCKETS_PER_STORE - 1);
        assert!(g.check(at("127.0.0.1:5003"), U::TcpAccept), "one dropped");
        assert!(!g.check(at("127.0.0.1:5004"), U::TcpAccept));
    }

    #[test]
    fn the_floor_judges_every_destination() {
        let (_, g) = gate(100);
        assert!(g.check(at("8.8.8.8:53"), U::UdpSend));
        assert!(!g.check(at("127.0.0.1:53"), U::UdpSend));
        assert!(!g.check(at("169.254.169.254:80"), U::TcpConnect));
    }

    #[test]
    fn datagrams_come_only_from_peers_and_peers_are_bounded() {
        let (cadence, g) = gate(10_000);
        assert!(!g.check(at("8.8.4.4:53"), U::UdpReceive), "unsolicited");
        assert!(g.check(at("8.8.4.4:53"), U::UdpSend));
        assert!(g.check(at("8.8.4.4:53"), U::UdpReceive));
        for port in 1..SOCKET_MAX_UDP_PEERS as u16 {
            assert!(g.check(SocketAddr::new([1, 1, 1, 1].into(), port), U::UdpSend));
        }
        assert!(!g.check(at("9.9.9.9:53"), U::UdpSend), "one peer too many");
        assert!(
            g.check(at("8.8.4.4:53"), U::UdpSend),
            "a known peer still works"
        );
        cadence.revocations().revoke("t").unwrap();
        assert!(!g.check(at("8.8.4.4:53"), U::UdpReceive), "revoked");
        assert!(!g.check(at("8.8.4.4:53"), U::UdpSend), "revoked");
    }
}
