//! A network scope: the destinations a grant's network caps may reach, in
//! Spin's `allowed_outbound_hosts` syntax (`https://api.example.com`,
//! `https://*.example.com:443`, `tcp://db.example.com:5432`,
//! `tcp://203.0.113.0/24:*`, `*://*:*`).
//!
//! Threat: a guest granted a network cap reaches every public host (the
//! floor keeps only private ranges out), so a tool meant to call one API
//! can send what it holds anywhere. A scope is judged on every request
//! before the floor, which still applies under it:
//! - a host name matches only a name pattern, an address only an address
//!   pattern, so the literal address of an in-scope host is refused;
//! - `*.example.com` is its subdomains, never `example.com` itself nor
//!   `badexample.com`;
//! - every redirect hop is judged again (`capped_http`);
//! - a socket connects by address: the address passes only when a pattern
//!   names it, or when this store looked up a name the scope allows and was
//!   answered that address (`cap/net/sockets.rs`).
//!
//! The schemes are the URL's (`http`, `https`) and, for sockets and the
//! one-shot exchanges, the transport: `tcp`, `udp`, `tls`.
//!
//! Written here rather than taken from Spin's `spin-outbound-networking-config`
//! crate: that crate brings Spin's template resolver and its app model; the
//! syntax itself is small.

use super::net_guard::Cidr;
use std::fmt;
use std::net::IpAddr;

/// The destinations a network cap may reach; judged on every request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Destinations {
    patterns: Vec<Destination>,
    /// The patterns as a refusal names them, made once.
    shown: String,
}

/// One pattern: scheme, host and port, each possibly a wildcard.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Destination {
    written: String,
    /// `None` is `*`.
    scheme: Option<String>,
    host: HostPattern,
    ports: Ports,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    /// `*`: any host, name or address.
    Any,
    /// `*.example.com`, kept as `.example.com`.
    Subdomains(String),
    /// One name, lower case, no trailing dot.
    Name(String),
    /// An address or a network (`203.0.113.7`, `203.0.113.0/24`).
    Net(Cidr),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Ports {
    Any,
    One(u16),
    /// `start..end`, end excluded (as Spin reads it).
    Range(u16, u16),
}

/// A pattern that cannot be read; the text says which and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScopeError {
    /// No `scheme://`.
    #[error("{0:?} has no scheme: write <scheme>://<host>[:<port>], e.g. https://api.example.com")]
    NoScheme(String),
    /// The scheme is not `*` nor letters.
    #[error("{0:?}: the scheme must be letters or *")]
    Scheme(String),
    /// A path after the host.
    #[error("{0:?}: a destination names no path")]
    Path(String),
    /// A wildcard anywhere but a whole host or a leading `*.`.
    #[error("{0:?}: a host wildcard is * or a leading *. only")]
    Wildcard(String),
    /// `self`, which Spin means as the app itself; there is no such host here.
    #[error("{0:?}: `self` names no host here")]
    SelfHost(String),
    /// No host.
    #[error("{0:?}: no host")]
    NoHost(String),
    /// No port and the scheme has no known default.
    #[error("{0:?}: give a port (or :*); the scheme has no default port")]
    NoPort(String),
    /// The port is not a number, a `start..end` range or `*`.
    #[error("{0:?}: the port must be a number, start..end or *")]
    Port(String),
}

/// The port a scheme means when none is written.
fn default_port(scheme: &str) -> Option<u16> {
    match scheme {
        "http" => Some(80),
        "https" | "tls" => Some(443),
        "postgres" => Some(5432),
        "mysql" => Some(3306),
        "redis" => Some(6379),
        "mqtt" => Some(1883),
        _ => None,
    }
}

/// `host[:port]`: an IPv6 address with a port is bracketed; one without
/// brackets is all host. `None` when something follows a `]` but a port.
fn split_port(rest: &str) -> Option<(&str, &str)> {
    if rest.starts_with('[') {
        let close = rest.find(']')?;
        let after = &rest[close + 1..];
        let port = if after.is_empty() {
            ""
        } else {
            after.strip_prefix(':')?
        };
        return Some((&rest[..=close], port));
    }
    match rest.split_once(':') {
        Some((host, port)) if !port.contains(':') => Some((host, port)),
        _ => Some((rest, "")),
    }
}

/// A host as the matcher compares it: lower case, no trailing dot, no
/// brackets around an IPv6 address (copied only when it has upper case).
fn normal_host(host: &str) -> std::borrow::Cow<'_, str> {
    let bare = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .trim_end_matches('.');
    if bare.bytes().any(|b| b.is_ascii_uppercase()) {
        bare.to_ascii_lowercase().into()
    } else {
        bare.into()
    }
}

/// A destination's host, read once for every pattern it is judged by.
struct Subject<'a> {
    host: std::borrow::Cow<'a, str>,
    ip: Option<IpAddr>,
}

impl<'a> Subject<'a> {
    fn of(host: &'a str) -> Self {
        let host = normal_host(host);
        let ip = host.parse().ok();
        Subject { host, ip }
    }

    /// An address: only address patterns (and `*`) read it.
    fn addr(ip: IpAddr) -> Self {
        Subject {
            host: "".into(),
            ip: Some(ip.to_canonical()),
        }
    }
}

impl Destination {
    fn parse(written: &str) -> Result<Self, ScopeError> {
        let text = written.trim();
        let err = |f: fn(String) -> ScopeError| f(text.to_string());
        let (scheme, rest) = text
            .split_once("://")
            .ok_or_else(|| err(ScopeError::NoScheme))?;
        let scheme = match scheme {
            "*" => None,
            s if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphabetic()) => {
                Some(s.to_ascii_lowercase())
            }
            _ => return Err(err(ScopeError::Scheme)),
        };
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        let (host, port) = split_port(rest).ok_or_else(|| err(ScopeError::Port))?;
        let host = Self::host(text, host)?;
        let ports = match port {
            "" => {
                let default = scheme.as_deref().and_then(default_port);
                Ports::One(default.ok_or_else(|| err(ScopeError::NoPort))?)
            }
            "*" => Ports::Any,
            p => match p.split_once("..") {
                Some((a, b)) => match (a.parse(), b.parse()) {
                    (Ok(a), Ok(b)) if a < b => Ports::Range(a, b),
                    _ => return Err(err(ScopeError::Port)),
                },
                None => Ports::One(p.parse().map_err(|_| err(ScopeError::Port))?),
            },
        };
        Ok(Destination {
            written: text.to_string(),
            scheme,
            host,
            ports,
        })
    }

    fn host(text: &str, host: &str) -> Result<HostPattern, ScopeError> {
        let err = |f: fn(String) -> ScopeError| f(text.to_string());
        let host = host.trim();
        if host.is_empty() {
            return Err(err(ScopeError::NoHost));
        }
        if host == "*" {
            return Ok(HostPattern::Any);
        }
        if host == "self" || host == "self.alt" {
            return Err(err(ScopeError::SelfHost));
        }
        let bare = normal_host(host).into_owned();
        if let Ok(net) = Cidr::parse(&bare) {
            return Ok(HostPattern::Net(net));
        }
        if bare.contains('/') {
            return Err(err(ScopeError::Path));
        }
        if let Some(domain) = bare.strip_prefix("*.") {
            if domain.is_empty() || domain.contains('*') {
                return Err(err(ScopeError::Wildcard));
            }
            return Ok(HostPattern::Subdomains(format!(".{domain}")));
        }
        if bare.contains('*') {
            return Err(err(ScopeError::Wildcard));
        }
        Ok(HostPattern::Name(bare))
    }

    fn allows_scheme(&self, scheme: &str) -> bool {
        self.scheme.as_deref().is_none_or(|s| s == scheme)
    }

    fn allows_port(&self, port: u16) -> bool {
        match self.ports {
            Ports::Any => true,
            Ports::One(p) => p == port,
            Ports::Range(a, b) => (a..b).contains(&port),
        }
    }

    /// Whether a host (a name, or an address literal) matches.
    fn allows_host(&self, subject: &Subject<'_>) -> bool {
        match (&self.host, subject.ip) {
            (HostPattern::Any, _) => true,
            (HostPattern::Net(net), Some(ip)) => net.contains(ip),
            (HostPattern::Subdomains(suffix), None) => subject.host.ends_with(suffix.as_str()),
            (HostPattern::Name(name), None) => *name == subject.host,
            _ => false,
        }
    }
}

impl Destinations {
    /// Reads patterns; the first that cannot be read is the error.
    pub fn parse<S: AsRef<str>>(patterns: &[S]) -> Result<Self, ScopeError> {
        let patterns = patterns
            .iter()
            .map(|p| Destination::parse(p.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        let shown = match patterns.is_empty() {
            true => "nothing".to_string(),
            false => patterns
                .iter()
                .map(|p| p.written.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        };
        Ok(Destinations { patterns, shown })
    }

    /// The patterns as written.
    pub fn written(&self) -> Vec<String> {
        self.patterns.iter().map(|p| p.written.clone()).collect()
    }

    /// Whether `scheme://host:port` is in scope; `host` is a name or an
    /// address literal as a URL writes it.
    pub fn allows(&self, scheme: &str, host: &str, port: u16) -> bool {
        self.allows_subject(scheme, &Subject::of(host), port)
    }

    fn allows_subject(&self, scheme: &str, subject: &Subject<'_>, port: u16) -> bool {
        self.patterns
            .iter()
            .any(|p| p.allows_scheme(scheme) && p.allows_port(port) && p.allows_host(subject))
    }

    /// [`Destinations::allows`] as a result: the refusal names `refused`.
    pub fn judge(
        &self,
        scheme: &str,
        host: &str,
        port: u16,
        refused: impl fmt::Display,
    ) -> Result<(), super::NetDenial> {
        match self.allows(scheme, host, port) {
            true => Ok(()),
            false => Err(self.refusal(refused)),
        }
    }

    /// Whether a lookup of `name` may be answered: some pattern of a
    /// socket scheme (`tcp`, `udp`) names it, on any port.
    pub fn allows_name(&self, name: &str) -> bool {
        let subject = Subject::of(name);
        self.patterns.iter().any(|p| {
            (p.allows_scheme("tcp") || p.allows_scheme("udp"))
                && !matches!(p.host, HostPattern::Net(_))
                && p.allows_host(&subject)
        })
    }

    /// Whether a socket may reach `ip`:`port` over `scheme`: a pattern
    /// names the address, or one of `names` (the names this store looked
    /// up and was answered `ip`).
    pub fn allows_addr<'a>(
        &self,
        scheme: &str,
        ip: IpAddr,
        port: u16,
        names: impl IntoIterator<Item = &'a str>,
    ) -> bool {
        self.allows_subject(scheme, &Subject::addr(ip), port)
            || names
                .into_iter()
                .any(|name| self.allows(scheme, name, port))
    }

    /// The refusal for `refused`, naming what the scope allows.
    pub fn refusal(&self, refused: impl fmt::Display) -> super::NetDenial {
        super::NetDenial::OutOfScope {
            grant: None,
            allowed: self.shown.clone(),
            refused: refused.to_string(),
        }
    }
}

impl fmt::Display for Destinations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.shown)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(p: &[&str]) -> Destinations {
        Destinations::parse(p).unwrap()
    }

    #[test]
    fn a_named_host_is_reached_on_its_scheme_and_default_port_only() {
        let s = scope(&["https://api.example.com"]);
        assert!(s.allows("https", "api.example.com", 443));
        assert!(s.allows("https", "API.Example.com.", 443));
        assert!(!s.allows("http", "api.example.com", 80));
        assert!(!s.allows("https", "api.example.com", 8443));
        assert!(!s.allows("https", "evil.example", 443));
        assert!(!s.allows("https", "api.example.com.evil.example", 443));
    }

    #[test]
    fn a_subdomain_wildcard_never_matches_the_parent_nor_a_lookalike() {
        let s = scope(&["https://*.example.com:443"]);
        assert!(s.allows("https", "a.example.com", 443));
        assert!(s.allows("https", "a.b.example.com", 443));
        assert!(!s.allows("https", "example.com", 443));
        assert!(!s.allows("https", "badexample.com", 443));
    }

    #[test]
    fn the_literal_address_of_an_in_scope_name_is_refused() {
        let s = scope(&["http://localhost:8080", "tcp://db.example.com:5432"]);
        assert!(!s.allows("http", "127.0.0.1", 8080));
        assert!(!s.allows("http", "[::1]", 8080));
        assert!(!s.allows_addr("tcp", "127.0.0.1".parse().unwrap(), 5432, []));
        // Unless the store looked the name up and was answered it.
        assert!(s.allows_addr("tcp", "10.0.0.9".parse().unwrap(), 5432, ["db.example.com"]));
        assert!(!s.allows_addr("tcp", "10.0.0.9".parse().unwrap(), 5433, ["db.example.com"]));
        assert!(!s.allows_addr("udp", "10.0.0.9".parse().unwrap(), 5432, ["db.example.com"]));
    }

    #[test]
    fn addresses_networks_port_ranges_and_wildcards_are_read() {
        let s = scope(&[
            "tcp://203.0.113.0/24:*",
            "udp://[2001:db8::1]:53",
            "http://localhost:3000..3002",
            "*://any.example:*",
        ]);
        assert!(s.allows_addr("tcp", "203.0.113.200".parse().unwrap(), 1, []));
        assert!(!s.allows_addr("tcp", "203.0.114.1".parse().unwrap(), 1, []));
        assert!(s.allows_addr("udp", "2001:db8::1".parse().unwrap(), 53, []));
        assert!(s.allows("http", "localhost", 3001));
        assert!(!s.allows("http", "localhost", 3002));
        assert!(s.allows("udp", "any.example", 9));
        assert!(s.allows_name("any.example"));
        assert!(!s.allows_name("localhost"), "http patterns name no socket");
        let all = scope(&["*://*:*"]);
        assert!(all.allows("https", "198.51.100.1", 1));
    }

    #[test]
    fn a_pattern_that_cannot_be_read_is_refused_by_name() {
        for (bad, why) in [
            ("api.example.com", "no scheme"),
            ("h1tp://x", "scheme"),
            ("https://x/path", "no path"),
            ("https://a.*.example.com", "wildcard"),
            ("https://api*.example.com", "wildcard"),
            ("http://self", "`self`"),
            ("tcp://db.example.com", "give a port"),
            ("https://x:http", "port must be"),
            ("https://x:9..3", "port must be"),
            ("https://", "no host"),
        ] {
            let e = Destinations::parse(&[bad]).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn a_refusal_names_the_scope_and_what_it_refused() {
        let s = scope(&["https://api.example.com"]);
        let d = s.refusal("https://evil.example/");
        assert_eq!(
            d.to_string(),
            "out of scope: the net scope allows https://api.example.com; refused https://evil.example/"
        );
        assert_eq!(d.reason(), "out_of_scope");
    }
}
