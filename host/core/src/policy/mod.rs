//! Capability profiles and cap words: the engine's whole policy.
//!
//! Four profiles, each a memory cap, a per-call timeout and a set of cap
//! words. A cap word is the unit of reach: the dock links an interface if
//! and only if its cap word is granted, so an ungranted capability is
//! absent, not refused. Resolution fails closed: an unknown profile name
//! resolves to `compute` (the narrowest rung) and says so; an instance may
//! be granted fewer caps than its profile, never more.

mod stub;

pub use stub::{Stub, Stubs, UnknownStub, stub_for};

use serde::Serialize;
use std::fmt;
use std::time::Duration;

/// Declares the cap words, each once: its variant, its word and what it
/// reaches. The enum, [`Cap::ALL`] and [`Cap::word`] come from this list.
macro_rules! cap_words {
    ($($(#[$doc:meta])* $variant:ident => $word:literal,)*) => {
        /// A capability word.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
        #[serde(rename_all = "lowercase")]
        pub enum Cap {
            $($(#[$doc])* $variant,)*
        }

        impl Cap {
            /// Every cap word, in table order.
            pub const ALL: [Cap; [$($word),*].len()] = [$(Cap::$variant),*];

            /// The word as written in profiles, manifests and errors.
            pub fn word(self) -> &'static str {
                match self {
                    $(Cap::$variant => $word,)*
                }
            }
        }
    };
}

cap_words! {
    /// The instance's own volumes, and wasi:filesystem over explicit preopens.
    Vfs => "vfs",
    /// Run registered commands by name.
    Commands => "commands",
    /// Spawn, await and kill registered commands.
    Exec => "exec",
    /// Durable per-tenant key-value storage.
    Kv => "kv",
    /// Sign with a secret the host holds.
    Secrets => "secrets",
    /// Per-tenant FIFO queues.
    Queue => "queue",
    /// Brokered one-shot TCP.
    Tcp => "tcp",
    /// Brokered one-shot UDP.
    Udp => "udp",
    /// Brokered one-shot TLS.
    Tls => "tls",
    /// Outgoing HTTP behind the SSRF floor.
    Net => "net",
    /// LLM completion with the key held by the host.
    Llm => "llm",
    /// Fetch a page as readable text.
    Browse => "browse",
    /// The posix word: binds nothing in the component lane.
    Posix => "posix",
    /// Fan one command out over many inputs.
    Parallel => "parallel",
}

impl Cap {
    /// Parses a cap word.
    pub fn from_word(word: &str) -> Result<Cap, PolicyError> {
        Cap::ALL
            .into_iter()
            .find(|c| c.word() == word)
            .ok_or_else(|| PolicyError::UnknownCap(word.to_string()))
    }

    fn bit(self) -> u64 {
        1 << (self as u32)
    }

    /// Every word, space-separated, in table order.
    fn all_words() -> String {
        Cap::ALL.map(Cap::word).join(" ")
    }
}

impl fmt::Display for Cap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.word())
    }
}

/// A set of cap words: one bit each, so at most 64 words.
#[derive(Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct CapSet(u64);

const _: () = assert!(Cap::ALL.len() <= 64, "a CapSet holds at most 64 cap words");

impl CapSet {
    /// The empty set.
    pub const EMPTY: CapSet = CapSet(0);

    /// A set of the given caps.
    pub fn of(caps: &[Cap]) -> CapSet {
        caps.iter().fold(CapSet::EMPTY, |s, c| s.with(*c))
    }

    /// Parses a comma- or space-separated list of cap words.
    pub fn parse(words: &str) -> Result<CapSet, PolicyError> {
        words
            .split([',', ' '])
            .filter(|w| !w.is_empty())
            .try_fold(CapSet::EMPTY, |s, w| Ok(s.with(Cap::from_word(w)?)))
    }

    /// This set plus `cap`.
    pub const fn with(self, cap: Cap) -> CapSet {
        CapSet(self.0 | (1 << (cap as u32)))
    }

    /// This set plus every cap of `other`.
    pub(crate) const fn with_all(self, other: CapSet) -> CapSet {
        CapSet(self.0 | other.0)
    }

    /// Whether `cap` is in the set.
    pub fn contains(self, cap: Cap) -> bool {
        self.0 & cap.bit() != 0
    }

    /// Whether every cap of this set is in `other`.
    pub fn is_subset(self, other: CapSet) -> bool {
        self.0 & !other.0 == 0
    }

    /// The caps in both sets.
    pub const fn intersect(self, other: CapSet) -> CapSet {
        CapSet(self.0 & other.0)
    }

    /// The caps of this set that are not in `other`.
    pub fn minus(self, other: CapSet) -> CapSet {
        CapSet(self.0 & !other.0)
    }

    /// The caps in table order.
    pub fn iter(self) -> impl Iterator<Item = Cap> {
        Cap::ALL.into_iter().filter(move |c| self.contains(*c))
    }

    /// The words in table order.
    pub fn words(self) -> Vec<&'static str> {
        self.iter().map(Cap::word).collect()
    }

    /// Whether the set is empty.
    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Debug for CapSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.words()).finish()
    }
}

impl fmt::Display for CapSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.words().join(" "))
    }
}

impl Serialize for CapSet {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.words())
    }
}

const MINIMAL_CAPS: CapSet = CapSet::EMPTY
    .with(Cap::Vfs)
    .with(Cap::Commands)
    .with(Cap::Exec)
    .with(Cap::Kv)
    .with(Cap::Secrets)
    .with(Cap::Queue)
    .with(Cap::Tcp)
    .with(Cap::Udp)
    .with(Cap::Tls);
const NETWORK_CAPS: CapSet = MINIMAL_CAPS.with(Cap::Net).with(Cap::Llm).with(Cap::Browse);
const POSIX_CAPS: CapSet = NETWORK_CAPS.with(Cap::Posix).with(Cap::Parallel);

/// A capability profile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    /// Pure compute plus the instance's own volumes: the fail-closed rung.
    Compute,
    /// Durable storage, commands and brokered one-shot sockets; no ambient
    /// network.
    Minimal,
    /// Minimal plus outgoing HTTP, LLM and browse.
    Network,
    /// Network plus parallel fan-out and the posix word.
    Posix,
}

impl Profile {
    /// Every profile, narrowest first.
    pub const ALL: [Profile; 4] = [
        Profile::Compute,
        Profile::Minimal,
        Profile::Network,
        Profile::Posix,
    ];

    /// The profile's name.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Compute => "compute",
            Profile::Minimal => "minimal",
            Profile::Network => "network",
            Profile::Posix => "posix",
        }
    }

    /// Parses a profile name strictly, as the CLI and API do: an unknown
    /// name is an error that lists the valid ones.
    pub fn parse(name: &str) -> Result<Profile, PolicyError> {
        Profile::ALL
            .into_iter()
            .find(|p| p.name() == name)
            .ok_or_else(|| PolicyError::UnknownProfile(name.to_string()))
    }

    /// Resolves a profile name, failing closed: an unknown name becomes
    /// `compute`, logs a warning, and the resolution says so.
    pub fn resolve(name: &str) -> Resolution {
        match Profile::parse(name) {
            Ok(profile) => Resolution {
                requested: name.to_string(),
                effective: profile,
            },
            Err(_) => {
                tracing::warn!(
                    requested = name,
                    "unknown profile resolved to compute (least privilege)"
                );
                Resolution {
                    requested: name.to_string(),
                    effective: Profile::Compute,
                }
            }
        }
    }

    /// The cap on the total of the instance's memories and tables, in bytes.
    pub fn memory_bytes(self) -> usize {
        match self {
            Profile::Compute | Profile::Minimal => 64 << 20,
            Profile::Network => 128 << 20,
            Profile::Posix => 256 << 20,
        }
    }

    /// The wall-clock budget of one call.
    pub fn timeout(self) -> Duration {
        match self {
            Profile::Compute | Profile::Minimal => Duration::from_secs(5),
            Profile::Network => Duration::from_secs(30),
            Profile::Posix => Duration::from_secs(60),
        }
    }

    /// The cap words the profile grants.
    pub fn caps(self) -> CapSet {
        match self {
            Profile::Compute => CapSet::of(&[Cap::Vfs]),
            Profile::Minimal => MINIMAL_CAPS,
            Profile::Network => NETWORK_CAPS,
            Profile::Posix => POSIX_CAPS,
        }
    }

    /// The profiles that grant every cap of `caps`, narrowest first.
    pub fn granting(caps: CapSet) -> Vec<Profile> {
        Profile::ALL
            .into_iter()
            .filter(|p| caps.is_subset(p.caps()))
            .collect()
    }
}

impl fmt::Display for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A profile name as asked for and as it resolved.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Resolution {
    /// The name the caller gave.
    pub requested: String,
    /// The profile in effect.
    pub effective: Profile,
}

impl Resolution {
    /// Whether the requested name was unknown and fell back to `compute`.
    pub fn fell_back(&self) -> bool {
        self.requested != self.effective.name()
    }
}

/// Whether a cap set reaches an ambient network stack at all: only `net`
/// or `browse` do. False means no wasi:http, no sockets and no DNS.
pub fn allow_http(caps: CapSet) -> bool {
    caps.contains(Cap::Net) || caps.contains(Cap::Browse)
}

/// The profile table as `wbx profiles` prints it (JSON with `json`).
pub fn profiles_text(json: bool) -> String {
    if json {
        let rows: Vec<serde_json::Value> = Profile::ALL
            .iter()
            .map(|p| {
                serde_json::json!({
                    "profile": p.name(),
                    "memory_bytes": p.memory_bytes(),
                    "timeout_ms": p.timeout().as_millis() as u64,
                    "caps": p.caps().words(),
                    "allow_http": allow_http(p.caps()),
                })
            })
            .collect();
        return serde_json::Value::Array(rows).to_string();
    }
    let mut out = format!(
        "{:<8}  {:>8}  {:>7}  {:<4}  caps",
        "profile", "memory", "timeout", "http"
    );
    for p in Profile::ALL {
        let http = if allow_http(p.caps()) { "yes" } else { "no" };
        out.push_str(&format!(
            "\n{:<8}  {:>4} MiB  {:>5} s  {:<4}  {}",
            p.name(),
            p.memory_bytes() >> 20,
            p.timeout().as_secs(),
            http,
            p.caps()
        ));
    }
    out
}

/// What an instance is granted: a resolved profile and caps within it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Grant {
    /// The profile as requested and as resolved.
    pub profile: Resolution,
    /// The caps in effect: the profile's, or a narrower set.
    pub caps: CapSet,
    /// The WASI families served by a deny broker when their cap is not
    /// granted (`--stub`); never a widening: see [`crate::dock::deny`].
    pub stubs: Stubs,
}

impl Grant {
    /// The full caps of a profile name (resolved fail-closed).
    pub fn profile(name: &str) -> Grant {
        let profile = Profile::resolve(name);
        let caps = profile.effective.caps();
        Grant {
            profile,
            caps,
            stubs: Stubs::NONE,
        }
    }

    /// A profile name narrowed to `caps`. Caps beyond the resolved profile
    /// are refused, naming them.
    pub fn narrowed(name: &str, caps: CapSet) -> Result<Grant, PolicyError> {
        let profile = Profile::resolve(name);
        let extra = caps.minus(profile.effective.caps());
        if !extra.is_empty() {
            return Err(PolicyError::CapsExceedProfile {
                caps: extra.to_string(),
                profile: profile.effective,
            });
        }
        Ok(Grant {
            profile,
            caps,
            stubs: Stubs::NONE,
        })
    }

    /// This grant with `stub`'s family served by its deny broker wherever
    /// the cap it needs is not granted.
    pub fn with_stub(mut self, stub: Stub) -> Grant {
        self.stubs = self.stubs.with(stub);
        self
    }

    /// This grant with every stub of `stubs` added.
    pub fn with_stubs(mut self, stubs: Stubs) -> Grant {
        self.stubs = self.stubs.union(stubs);
        self
    }

    /// Whether the grant reaches an ambient network stack.
    pub fn allow_http(&self) -> bool {
        allow_http(self.caps)
    }
}

/// A policy request that cannot be honoured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// The profile name is not one of the four.
    #[error("unknown profile `{0}` (valid profiles: compute, minimal, network, posix)")]
    UnknownProfile(String),
    /// The cap word is not one of the table's.
    #[error("unknown capability `{0}` (valid: {valid})", valid = Cap::all_words())]
    UnknownCap(String),
    /// Caps were asked for beyond what the profile grants.
    #[error("capabilities not in profile {profile}: {caps}")]
    CapsExceedProfile {
        /// The caps beyond the profile.
        caps: String,
        /// The profile they exceed.
        profile: Profile,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_match_the_design_table() {
        assert_eq!(Profile::Compute.caps().to_string(), "vfs");
        assert_eq!(
            Profile::Minimal.caps().to_string(),
            "vfs commands exec kv secrets queue tcp udp tls"
        );
        assert_eq!(
            Profile::Network.caps().to_string(),
            "vfs commands exec kv secrets queue tcp udp tls net llm browse"
        );
        assert_eq!(
            Profile::Posix.caps().to_string(),
            "vfs commands exec kv secrets queue tcp udp tls net llm browse posix parallel"
        );
        let mib = |p: Profile| p.memory_bytes() >> 20;
        assert_eq!(Profile::ALL.map(mib), [64, 64, 128, 256]);
        let secs = |p: Profile| p.timeout().as_secs();
        assert_eq!(Profile::ALL.map(secs), [5, 5, 30, 60]);
    }

    #[test]
    fn unknown_profile_fails_closed_to_compute_and_says_so() {
        let r = Profile::resolve("root");
        assert_eq!(r.effective, Profile::Compute);
        assert!(r.fell_back());
        assert!(!Profile::resolve("posix").fell_back());
        assert!(Profile::parse("root").is_err());
    }

    #[test]
    fn allow_http_agrees_with_the_cap_list_for_every_subset() {
        for bits in 0u64..(1 << Cap::ALL.len()) {
            let set = CapSet(bits);
            let expected = set.words().iter().any(|w| *w == "net" || *w == "browse");
            assert_eq!(allow_http(set), expected, "{set:?}");
        }
        assert!(!Grant::profile("minimal").allow_http());
        assert!(Grant::profile("network").allow_http());
    }

    #[test]
    fn narrowing_never_widens() {
        let g = Grant::narrowed("minimal", CapSet::of(&[Cap::Kv])).unwrap();
        assert_eq!(g.caps, CapSet::of(&[Cap::Kv]));
        let err = Grant::narrowed("minimal", CapSet::of(&[Cap::Kv, Cap::Net])).unwrap_err();
        assert_eq!(err.to_string(), "capabilities not in profile minimal: net");
        // An unknown profile narrows against compute, not against the name.
        assert!(Grant::narrowed("typo", CapSet::of(&[Cap::Kv])).is_err());
    }

    #[test]
    fn cap_words_round_trip_and_unknown_words_are_named() {
        for c in Cap::ALL {
            assert_eq!(Cap::from_word(c.word()), Ok(c));
        }
        assert_eq!(CapSet::parse("kv,vfs").unwrap().words(), vec!["vfs", "kv"]);
        let err = CapSet::parse("kv,root").unwrap_err().to_string();
        assert_eq!(
            err,
            "unknown capability `root` (valid: vfs commands exec kv secrets queue tcp udp tls net llm browse posix parallel)"
        );
        // The last word's bit is in the set, and only in its own set.
        let last = *Cap::ALL.last().unwrap();
        assert!(CapSet::of(&[last]).contains(last));
        assert!(!CapSet::of(&Cap::ALL[..Cap::ALL.len() - 1]).contains(last));
    }
}
