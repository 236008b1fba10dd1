//! Stubs: the WASI interface families an operator may have served by a
//! deny broker (`crate::dock::deny`) where the cap they need is not
//! granted. A stub is part of a grant; it never widens one.

use super::Cap;
use std::fmt;

/// A WASI interface family a deny broker can serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub enum Stub {
    /// Every `wasi:sockets` interface: sockets and name lookup refuse with
    /// `access-denied`.
    Sockets,
    /// `wasi:http/outgoing-handler`: every request refused with
    /// `HTTP-request-denied`; the `wasi:http/types` values are linked as
    /// data (they reach nothing by themselves).
    Http,
}

/// Why a stub name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown stub `{0}` (deny brokers exist for: {list})", list = Stub::names())]
pub struct UnknownStub(pub String);

impl Stub {
    /// Every stub, in order.
    pub const ALL: [Stub; 2] = [Stub::Sockets, Stub::Http];

    /// Its name: the interface family it serves.
    pub fn name(self) -> &'static str {
        match self {
            Stub::Sockets => "wasi:sockets",
            Stub::Http => "wasi:http",
        }
    }

    /// The cap whose interfaces it stands in for.
    pub fn cap(self) -> Cap {
        match self {
            Stub::Sockets | Stub::Http => Cap::Net,
        }
    }

    /// The stub named `name` (`wasi:sockets`).
    pub fn parse(name: &str) -> Result<Stub, UnknownStub> {
        Stub::ALL
            .into_iter()
            .find(|s| s.name() == name.trim())
            .ok_or_else(|| UnknownStub(name.to_string()))
    }

    fn names() -> String {
        Stub::ALL.map(Stub::name).join(", ")
    }

    /// Whether `import` is one the host links as data under this stub
    /// rather than one its deny broker serves: the `wasi:http/types`
    /// values, which reach nothing without `outgoing-handler`.
    pub(crate) fn host_values(self, import: &str) -> bool {
        let path = import.split_once('@').map_or(import, |(p, _)| p);
        self == Stub::Http && path == "wasi:http/types"
    }

    /// Whether `import` (`pkg:ns/iface@v`) belongs to its family.
    pub fn covers(self, import: &str) -> bool {
        import
            .split_once('/')
            .is_some_and(|(package, _)| package == self.name())
    }
}

impl fmt::Display for Stub {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of stubs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Stubs(u8);

impl serde::Serialize for Stubs {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.iter().map(Stub::name))
    }
}

impl Stubs {
    /// No stubs.
    pub const NONE: Stubs = Stubs(0);

    /// This set with `stub` added.
    pub const fn with(self, stub: Stub) -> Stubs {
        Stubs(self.0 | 1 << stub as u8)
    }

    /// Both sets.
    pub const fn union(self, other: Stubs) -> Stubs {
        Stubs(self.0 | other.0)
    }

    /// Whether `stub` is in the set.
    pub fn contains(self, stub: Stub) -> bool {
        self.0 & (1 << stub as u8) != 0
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The stubs in the set.
    pub fn iter(self) -> impl Iterator<Item = Stub> {
        Stub::ALL.into_iter().filter(move |s| self.contains(*s))
    }

    /// The stub in the set whose family `import` belongs to.
    pub fn serving(self, import: &str) -> Option<Stub> {
        self.iter().find(|s| s.covers(import))
    }

    /// Stub names separated by commas (`wasi:sockets`).
    pub fn parse(names: &str) -> Result<Stubs, UnknownStub> {
        names
            .split(',')
            .filter(|n| !n.trim().is_empty())
            .try_fold(Stubs::NONE, |set, n| Ok(set.with(Stub::parse(n)?)))
    }
}

impl fmt::Display for Stubs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.iter().map(Stub::name).collect();
        f.write_str(&names.join(","))
    }
}

/// The stub that would serve `import`, whatever is opted in: for naming it
/// in a refusal.
pub fn stub_for(import: &str) -> Option<Stub> {
    Stub::ALL.into_iter().find(|s| s.covers(import))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stub_covers_its_family_and_nothing_else() {
        let s = Stub::Sockets;
        assert!(s.covers("wasi:sockets/tcp@0.2.12"));
        assert!(s.covers("wasi:sockets/ip-name-lookup@0.2.0"));
        assert!(Stub::Http.covers("wasi:http/outgoing-handler@0.2.10"));
        assert!(!Stub::Http.covers("wasi:sockets/tcp@0.2.12"));
        for other in [
            "wasi:http/outgoing-handler@0.2.12",
            "wasi:socketsx/tcp@0.2.12",
            "wasi:filesystem/types@0.2.12",
            "workbooks:engine/tcp@0.1.0",
            "wasi:sockets",
        ] {
            assert!(!s.covers(other), "{other}");
        }
    }

    #[test]
    fn stub_names_parse_or_are_refused_by_name() {
        let set = Stubs::parse("wasi:sockets").unwrap();
        assert!(set.contains(Stub::Sockets));
        assert!(!set.contains(Stub::Http));
        assert_eq!(set.to_string(), "wasi:sockets");
        let both = Stubs::parse("wasi:http, wasi:sockets").unwrap();
        assert_eq!(both.to_string(), "wasi:sockets,wasi:http");
        let err = Stubs::parse("wasi:sockets,wasi:keyboard").unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown stub `wasi:keyboard` (deny brokers exist for: wasi:sockets, wasi:http)"
        );
        assert!(Stubs::parse("").unwrap().is_empty());
    }
}
