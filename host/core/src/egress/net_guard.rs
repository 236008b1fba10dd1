//! The SSRF floor: which addresses a guest's traffic may reach, and
//! resolve-then-pin.
//!
//! Threat: a guest (or a page it fetched, or a redirect it followed) steers
//! the host's network stack at something only the host can reach: loopback
//! services, the cloud metadata endpoint (169.254.169.254, 169.254.170.2),
//! private networks, link-local neighbours. The classic bypasses are all
//! about disguising the address: decimal, octal and hex IPv4
//! (`2130706433`, `0177.1`, `0x7f.1`), short forms, IPv6 forms that embed
//! an IPv4 address (mapped `::ffff:127.0.0.1`, compatible `::127.0.0.1`,
//! NAT64 `64:ff9b::7f00:1`, 6to4 `2002:7f00:1::`, Teredo), userinfo
//! (`http://good@127.0.0.1`), trailing dots, and DNS names that resolve to
//! internal addresses, possibly only on the second lookup (rebinding).
//!
//! Defence: URLs are parsed by a WHATWG parser, which normalises every
//! IPv4 spelling to one address; only `http` and `https` pass; every
//! address is judged after unwrapping any embedded IPv4; a hostname is
//! resolved exactly once, every resolved address must pass, and the caller
//! connects only to the address returned here (the pin) — never by name
//! again, so a second answer cannot be used. Anything unparseable, any
//! resolution failure, any empty answer is denied. The only way through
//! the floor is the operator's allow-list of CIDRs, set in engine
//! configuration and never by a guest.

use super::NetScope;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

/// An IP network: address and prefix length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cidr {
    addr: IpAddr,
    prefix: u8,
}

impl Cidr {
    /// Parses `a.b.c.d/n`, `x::y/n`, or a bare address (a /32 or /128).
    pub fn parse(s: &str) -> Result<Cidr, String> {
        let (addr, prefix) = match s.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (s, None),
        };
        let addr: IpAddr = addr
            .trim()
            .parse()
            .map_err(|_| format!("`{s}` is not a CIDR"))?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix {
            Some(p) => p
                .trim()
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= max)
                .ok_or_else(|| format!("`{s}`: bad prefix length"))?,
            None => max,
        };
        Ok(Cidr { addr, prefix })
    }

    /// Parses a comma-separated list (as in `WB_NET_ALLOW`).
    pub fn parse_list(s: &str) -> Result<Vec<Cidr>, String> {
        s.split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(Cidr::parse)
            .collect()
    }

    /// Whether `ip` is inside this network.
    pub fn contains(&self, ip: IpAddr) -> bool {
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                prefix_match(&net.octets(), &ip.octets(), self.prefix)
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                prefix_match(&net.octets(), &ip.octets(), self.prefix)
            }
            _ => false,
        }
    }
}

impl std::fmt::Display for Cidr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

fn prefix_match(net: &[u8], ip: &[u8], prefix: u8) -> bool {
    let full = usize::from(prefix / 8);
    if net[..full] != ip[..full] {
        return false;
    }
    let rest = prefix % 8;
    rest == 0 || {
        let mask = 0xFFu8 << (8 - rest);
        net[full] & mask == ip[full] & mask
    }
}

fn v4_in(ip: Ipv4Addr, net: [u8; 4], prefix: u8) -> bool {
    prefix_match(&net, &ip.octets(), prefix)
}

/// Why an IPv4 address is off limits, if it is.
fn blocked_v4(ip: Ipv4Addr) -> Option<&'static str> {
    const RANGES: &[([u8; 4], u8, &str)] = &[
        ([0, 0, 0, 0], 8, "this-network (0.0.0.0/8)"),
        ([10, 0, 0, 0], 8, "private (10.0.0.0/8)"),
        ([100, 64, 0, 0], 10, "carrier-grade NAT (100.64.0.0/10)"),
        ([127, 0, 0, 0], 8, "loopback (127.0.0.0/8)"),
        ([169, 254, 169, 254], 32, "cloud metadata (169.254.169.254)"),
        ([169, 254, 170, 2], 32, "container metadata (169.254.170.2)"),
        ([169, 254, 0, 0], 16, "link-local (169.254.0.0/16)"),
        ([172, 16, 0, 0], 12, "private (172.16.0.0/12)"),
        (
            [192, 0, 0, 0],
            24,
            "IETF protocol assignments (192.0.0.0/24)",
        ),
        ([192, 0, 2, 0], 24, "documentation (192.0.2.0/24)"),
        ([192, 88, 99, 0], 24, "6to4 relay anycast (192.88.99.0/24)"),
        ([192, 168, 0, 0], 16, "private (192.168.0.0/16)"),
        ([198, 18, 0, 0], 15, "benchmarking (198.18.0.0/15)"),
        ([198, 51, 100, 0], 24, "documentation (198.51.100.0/24)"),
        ([203, 0, 113, 0], 24, "documentation (203.0.113.0/24)"),
        ([224, 0, 0, 0], 4, "multicast (224.0.0.0/4)"),
        ([255, 255, 255, 255], 32, "broadcast (255.255.255.255)"),
        ([240, 0, 0, 0], 4, "reserved (240.0.0.0/4)"),
    ];
    RANGES
        .iter()
        .find(|(net, prefix, _)| v4_in(ip, *net, *prefix))
        .map(|(_, _, why)| *why)
}

/// The IPv4 address an IPv6 address carries, by the transition mechanism
/// that embeds it, if any.
fn embedded_v4(ip: Ipv6Addr) -> Option<(Ipv4Addr, &'static str)> {
    let o = ip.octets();
    let seg = ip.segments();
    let tail = Ipv4Addr::new(o[12], o[13], o[14], o[15]);
    if seg[..5] == [0; 5] && seg[5] == 0xFFFF {
        return Some((tail, "IPv4-mapped"));
    }
    if seg[..4] == [0; 4] && seg[4] == 0xFFFF && seg[5] == 0 {
        return Some((tail, "IPv4-translated"));
    }
    if seg[..6] == [0; 6] && !(seg[6] == 0 && seg[7] <= 1) {
        return Some((tail, "IPv4-compatible"));
    }
    if seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some((tail, "NAT64"));
    }
    if seg[0] == 0x2002 {
        return Some((Ipv4Addr::new(o[2], o[3], o[4], o[5]), "6to4"));
    }
    if seg[0] == 0x2001 && seg[1] == 0 {
        let client = Ipv4Addr::new(!o[12], !o[13], !o[14], !o[15]);
        return Some((client, "Teredo"));
    }
    None
}

/// Why an IPv6 address is off limits, if it is.
fn blocked_v6(ip: Ipv6Addr) -> Option<String> {
    if ip.is_unspecified() {
        return Some("unspecified (::)".into());
    }
    if ip.is_loopback() {
        return Some("loopback (::1)".into());
    }
    if let Some((v4, how)) = embedded_v4(ip) {
        if let Some(why) = blocked_v4(v4) {
            return Some(format!("{how} {v4}: {why}"));
        }
        if how == "Teredo" {
            // The server half of a Teredo address is an IPv4 too.
            let o = ip.octets();
            let server = Ipv4Addr::new(o[4], o[5], o[6], o[7]);
            if let Some(why) = blocked_v4(server) {
                return Some(format!("Teredo server {server}: {why}"));
            }
        }
        return None;
    }
    let seg = ip.segments();
    // (mask on the first 16 bits, network, name)
    let ranges: &[(u16, u16, &str)] = &[
        (0xffc0, 0xfe80, "link-local (fe80::/10)"),
        (0xffc0, 0xfec0, "site-local (fec0::/10)"),
        (0xfe00, 0xfc00, "unique local (fc00::/7)"),
        (0xff00, 0xff00, "multicast (ff00::/8)"),
    ];
    if let Some((_, _, why)) = ranges.iter().find(|(mask, net, _)| seg[0] & mask == *net) {
        return Some((*why).into());
    }
    if seg[0] == 0x2001 && seg[1] == 0x0db8 {
        return Some("documentation (2001:db8::/32)".into());
    }
    if seg[..4] == [0x0100, 0, 0, 0] {
        return Some("discard-only (100::/64)".into());
    }
    if seg[..3] == [0x64, 0xff9b, 1] {
        return Some("local-use NAT64 (64:ff9b:1::/48)".into());
    }
    None
}

/// Why a guest may not reach this address.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NetDenial {
    /// Only http and https are allowed.
    #[error("scheme `{0}` is not allowed (only http and https)")]
    Scheme(String),
    /// The URL does not parse.
    #[error("unparseable URL: {0}")]
    Unparseable(String),
    /// The address is in a blocked range.
    #[error("{addr} is {why}")]
    Blocked {
        /// The address.
        addr: IpAddr,
        /// The range it falls in.
        why: String,
    },
    /// The destination is outside the grant's network scope.
    #[error("{}", out_of_scope(grant.as_deref(), allowed, refused))]
    OutOfScope {
        /// The stored grant whose scope refused (`None`: a command line's
        /// `--allow-host`).
        grant: Option<String>,
        /// The scope's patterns, as written.
        allowed: String,
        /// The destination refused.
        refused: String,
    },
    /// The grant the session runs under expired, was revoked or does not
    /// read: every call under it is refused.
    #[error("{why}")]
    Withdrawn {
        /// The audit's reason (`grant_expired`, `grant_revoked`, ...).
        reason: &'static str,
        /// What refused, naming the grant.
        why: String,
    },
    /// The name does not resolve (or resolves to nothing).
    #[error("cannot resolve {host}: {why}")]
    Unresolved {
        /// The name.
        host: String,
        /// Why.
        why: String,
    },
}

/// The text of [`NetDenial::OutOfScope`]: a stored grant's refusal names
/// it (`grant g-7f3: net scope allows …; refused …`).
fn out_of_scope(grant: Option<&str>, allowed: &str, refused: &str) -> String {
    match grant {
        Some(id) => format!("grant {id}: net scope allows {allowed}; refused {refused}"),
        None => format!("out of scope: the net scope allows {allowed}; refused {refused}"),
    }
}

impl NetDenial {
    /// A short name for the audit log.
    pub fn reason(&self) -> &'static str {
        match self {
            NetDenial::Scheme(_) => "scheme",
            NetDenial::Unparseable(_) => "unparseable",
            NetDenial::Blocked { .. } => "blocked_address",
            NetDenial::Unresolved { .. } => "unresolved",
            NetDenial::OutOfScope { .. } => "out_of_scope",
            NetDenial::Withdrawn { reason, .. } => reason,
        }
    }
}

/// Resolves host names. The engine resolves each name once per request and
/// connects to the address it checked; tests swap in their own resolver.
pub trait Resolver: Send + Sync {
    /// The addresses of `host`.
    fn resolve<'a>(
        &'a self,
        host: &'a str,
    ) -> std::pin::Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send + 'a>>;
}

/// The system resolver (getaddrinfo through tokio).
#[derive(Debug, Default)]
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn resolve<'a>(
        &'a self,
        host: &'a str,
    ) -> std::pin::Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send + 'a>> {
        Box::pin(async move {
            Ok(tokio::net::lookup_host((host, 0))
                .await?
                .map(|a| a.ip())
                .collect())
        })
    }
}

/// A URL that passed the floor, with the one address to connect to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pinned {
    /// The normalised URL.
    pub url: url::Url,
    /// The host as written in the URL (for Host and SNI).
    pub host: String,
    /// The checked address and port to connect to.
    pub addr: SocketAddr,
    /// Whether the scheme is https.
    pub tls: bool,
}

impl Pinned {
    /// Judges this destination by `scope` again, as it is now: how a long
    /// answer (a download, an event stream) is held to its grant while it
    /// streams. Threat: a guest that began reading before its grant was
    /// narrowed, revoked or expired would otherwise go on reading from a
    /// destination it may no longer reach for as long as the body lasts;
    /// judged at each chunk, it is cut off at the next one.
    pub fn judge_again(&self, scope: &dyn NetScope) -> Result<(), NetDenial> {
        scope.judge(self.url.scheme(), &self.host, self.addr.port(), &self.url)
    }
}

/// The floor plus the operator's allow-list and the resolver.
#[derive(Clone)]
pub struct NetGuard {
    allow: Arc<Vec<Cidr>>,
    resolver: Arc<dyn Resolver>,
}

impl std::fmt::Debug for NetGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NetGuard")
            .field("allow", &self.allow)
            .finish()
    }
}

impl Default for NetGuard {
    fn default() -> Self {
        Self::new(Vec::new(), Arc::new(SystemResolver))
    }
}

impl NetGuard {
    /// A guard allowing the floor's exceptions in `allow` and resolving
    /// with `resolver`.
    pub fn new(allow: Vec<Cidr>, resolver: Arc<dyn Resolver>) -> Self {
        Self {
            allow: Arc::new(allow),
            resolver,
        }
    }

    /// Judges one address.
    pub(crate) fn check_ip(&self, ip: IpAddr) -> Result<(), NetDenial> {
        let canonical = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map(IpAddr::V4).unwrap_or(ip),
            v4 => v4,
        };
        if self
            .allow
            .iter()
            .any(|c| c.contains(ip) || c.contains(canonical))
        {
            return Ok(());
        }
        let why = match canonical {
            IpAddr::V4(v4) => blocked_v4(v4).map(str::to_string),
            IpAddr::V6(v6) => blocked_v6(v6),
        };
        match why {
            Some(why) => Err(NetDenial::Blocked { addr: ip, why }),
            None => Ok(()),
        }
    }

    /// Resolves `host` once and pins the first address, if every resolved
    /// address passes the floor.
    pub async fn pin(&self, host: &str, port: u16) -> Result<SocketAddr, NetDenial> {
        let bare = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = bare.parse::<IpAddr>() {
            self.check_ip(ip)?;
            return Ok(SocketAddr::new(ip, port));
        }
        let addrs = self
            .resolver
            .resolve(host)
            .await
            .map_err(|e| NetDenial::Unresolved {
                host: host.to_string(),
                why: e.to_string(),
            })?;
        let first = *addrs.first().ok_or_else(|| NetDenial::Unresolved {
            host: host.to_string(),
            why: "no addresses".into(),
        })?;
        for ip in &addrs {
            self.check_ip(*ip)?;
        }
        Ok(SocketAddr::new(first, port))
    }

    /// Parses and judges a URL, resolving its host once.
    pub async fn check_url(&self, raw: &str) -> Result<Pinned, NetDenial> {
        self.check_url_within(raw, None).await
    }

    /// Parses and judges a URL, judging it by `scope` (when there is one)
    /// before its host is resolved, so a name out of scope is never looked
    /// up.
    pub async fn check_url_within(
        &self,
        raw: &str,
        scope: Option<&dyn NetScope>,
    ) -> Result<Pinned, NetDenial> {
        let url = url::Url::parse(raw.trim()).map_err(|e| NetDenial::Unparseable(e.to_string()))?;
        let tls = match url.scheme() {
            "http" => false,
            "https" => true,
            other => return Err(NetDenial::Scheme(other.to_string())),
        };
        let host = match url.host() {
            Some(url::Host::Domain(d)) => d.trim_end_matches('.').to_string(),
            Some(url::Host::Ipv4(v4)) => v4.to_string(),
            Some(url::Host::Ipv6(v6)) => format!("[{v6}]"),
            None => return Err(NetDenial::Unparseable("no host".into())),
        };
        if host.is_empty() {
            return Err(NetDenial::Unparseable("empty host".into()));
        }
        let port = url
            .port_or_known_default()
            .unwrap_or(if tls { 443 } else { 80 });
        if let Some(scope) = scope {
            scope.judge(url.scheme(), &host, port, &raw.trim())?;
        }
        let addr = self.pin(&host, port).await?;
        Ok(Pinned {
            url,
            host,
            addr,
            tls,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn denied(ip: &str) -> bool {
        NetGuard::default().check_ip(ip.parse().unwrap()).is_err()
    }

    #[test]
    fn every_internal_range_of_the_floor_is_denied() {
        for ip in [
            "127.0.0.1",
            "127.255.255.254",
            "0.0.0.0",
            "0.1.2.3",
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "169.254.170.2",
            "169.254.0.1",
            "100.64.0.1",
            "100.127.255.255",
            "192.0.0.8",
            "198.18.0.1",
            "198.19.255.255",
            "224.0.0.1",
            "239.255.255.250",
            "255.255.255.255",
            "240.0.0.1",
            "192.0.2.1",
            "::1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "febf::1",
            "fec0::1",
            "ff02::1",
            "::ffff:127.0.0.1",
            "::ffff:10.0.0.1",
            "::127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::7f00:1",
            "64:ff9b::a9fe:a9fe",
            "2002:7f00:1::",
            "2002:a9fe:a9fe::1",
            "2001:0:4136:e378:8000:63bf:80ff:fffe",
            "2001:db8::1",
            "64:ff9b:1::1",
        ] {
            assert!(denied(ip), "{ip} should be denied");
        }
    }

    #[test]
    fn public_addresses_pass() {
        for ip in [
            "93.184.216.34",
            "8.8.8.8",
            "1.1.1.1",
            "2606:4700:4700::1111",
            "2a00:1450:4001:80b::200e",
            "172.32.0.1",
            "100.128.0.1",
        ] {
            assert!(!denied(ip), "{ip} should pass");
        }
    }

    #[test]
    fn the_operator_allow_list_opens_exactly_its_ranges() {
        let g = NetGuard::new(
            Cidr::parse_list("127.0.0.0/8, ::1/128").unwrap(),
            Arc::new(SystemResolver),
        );
        assert!(g.check_ip("127.0.0.1".parse().unwrap()).is_ok());
        assert!(g.check_ip("::ffff:127.0.0.1".parse().unwrap()).is_ok());
        assert!(g.check_ip("::1".parse().unwrap()).is_ok());
        assert!(g.check_ip("10.0.0.1".parse().unwrap()).is_err());
        assert!(Cidr::parse("10.0.0.0/33").is_err());
        assert!(Cidr::parse("nonsense").is_err());
        assert!(
            Cidr::parse("10.1.2.3/12")
                .unwrap()
                .contains("10.15.0.1".parse().unwrap())
        );
        assert!(
            !Cidr::parse("10.1.2.3/12")
                .unwrap()
                .contains("10.16.0.1".parse().unwrap())
        );
    }
}
