//! What a session under a grant holds: a [`Scope`], asked for the grant as
//! it is now at every call ([`Scope::now`]), and the [`Scoped`] value it
//! answers, which judges a destination and names the grant in a refusal.

use super::{GrantBook, GrantRecord, now_ms, rfc3339};
use crate::egress::{Destinations, NetDenial, NetScope, ScopeError};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
pub use workbooks_wire::child::ScopeSnapshot;

/// A grant's scopes, read: what one call is judged by.
#[derive(Debug)]
pub struct Scoped {
    grant: Option<String>,
    net: Option<Destinations>,
    prefixes: BTreeMap<String, Vec<String>>,
    names: BTreeMap<String, Vec<String>>,
    expires_ms: Option<u64>,
    llm_tokens: Option<u64>,
    /// Spent when these scopes were read, plus what this process spent
    /// under scopes held fixed (a child's snapshot), which no book counts.
    llm_spent: std::sync::atomic::AtomicU64,
}

/// A cap scoped by name (by prefixes, or by whole names), as its folder
/// names itself: its cap word and what one of its names is called in a
/// refusal (`key`, `secret`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CapNoun {
    /// The cap word.
    pub cap: &'static str,
    /// What a name of it is called.
    pub noun: &'static str,
}

impl Scoped {
    /// The scope of a command line's `--allow-host`: destinations, no
    /// grant id, no expiry.
    pub fn destinations(net: Destinations) -> Self {
        Scoped {
            grant: None,
            net: Some(net),
            prefixes: BTreeMap::new(),
            names: BTreeMap::new(),
            expires_ms: None,
            llm_tokens: None,
            llm_spent: 0.into(),
        }
    }

    /// The scopes of `record`.
    pub(crate) fn of(record: &GrantRecord) -> Result<Self, ScopeError> {
        Self::read(ScopeSnapshot {
            grant: Some(record.id.clone()),
            net: record.net.clone(),
            prefixes: record.prefixes.clone(),
            names: record.names.clone(),
            expires_ms: record.expires_ms,
            llm_tokens: record.llm_tokens,
            llm_spent: record.llm_spent,
        })
    }

    /// The scopes a child received.
    pub fn read(snapshot: ScopeSnapshot) -> Result<Self, ScopeError> {
        Ok(Scoped {
            grant: snapshot.grant,
            net: snapshot
                .net
                .as_deref()
                .map(Destinations::parse)
                .transpose()?,
            prefixes: snapshot.prefixes,
            names: snapshot.names,
            expires_ms: snapshot.expires_ms,
            llm_tokens: snapshot.llm_tokens,
            llm_spent: snapshot.llm_spent.into(),
        })
    }

    /// These scopes, for a child.
    pub fn snapshot(&self) -> ScopeSnapshot {
        ScopeSnapshot {
            grant: self.grant.clone(),
            net: self.net.as_ref().map(Destinations::written),
            prefixes: self.prefixes.clone(),
            names: self.names.clone(),
            expires_ms: self.expires_ms,
            llm_tokens: self.llm_tokens,
            llm_spent: self.llm_spent.load(std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// Counts `tokens` spent under these scopes in this process, when they
    /// carry an allowance (no book counts them).
    fn spend_here(&self, tokens: u64) {
        if self.llm_tokens.is_some() {
            self.llm_spent
                .fetch_add(tokens, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// The tokens left of the `llm` allowance (`None`: it has none).
    pub fn llm_left(&self) -> Option<u64> {
        let spent = self.llm_spent.load(std::sync::atomic::Ordering::Relaxed);
        self.llm_tokens.map(|n| n.saturating_sub(spent))
    }

    /// Why a model request is refused once the allowance is spent; `None`
    /// while some is left.
    pub fn llm_spent_refusal(&self) -> Option<String> {
        let allowance = self.llm_tokens?;
        (self.llm_left() == Some(0)).then(|| {
            format!(
                "grant {}: llm allowance of {allowance} tokens is spent",
                self.grant.as_deref().unwrap_or("(unnamed)")
            )
        })
    }

    /// The grant's id, when the scopes come from a stored grant.
    pub fn grant(&self) -> Option<&str> {
        self.grant.as_deref()
    }

    /// The destinations (`None`: unscoped, the floor alone judges).
    pub fn net(&self) -> Option<&Destinations> {
        self.net.as_ref()
    }

    /// Whether `scheme://host:port` is in the network scope; the refusal
    /// names the grant, what it allows and `refused`.
    pub fn judge(
        &self,
        scheme: &str,
        host: &str,
        port: u16,
        refused: impl fmt::Display,
    ) -> Result<(), NetDenial> {
        match &self.net {
            None => Ok(()),
            Some(net) if net.allows(scheme, host, port) => Ok(()),
            Some(net) => Err(self.refusal(net, refused)),
        }
    }

    fn prefixes(&self, cap: CapNoun) -> Option<&[String]> {
        self.prefixes.get(cap.cap).map(Vec::as_slice)
    }

    /// Whether `cap` may reach `name` (a key, a queue name): it starts
    /// with one of the grant's prefixes, or the grant has none. The refusal
    /// names the grant, its prefixes and `name`.
    pub fn judge_name(&self, cap: CapNoun, name: &[u8]) -> Result<(), String> {
        match self.prefixes(cap) {
            None => Ok(()),
            Some(p) if p.iter().any(|p| name.starts_with(p.as_bytes())) => Ok(()),
            Some(p) => Err(self.prefix_refusal(cap, p, &String::from_utf8_lossy(name))),
        }
    }

    /// Whether `cap` may use `name` (a secret, a command): the grant names
    /// it, or names none for `cap`. The refusal names the grant, the names
    /// it allows and `name`.
    pub fn judge_named(&self, cap: CapNoun, name: &str) -> Result<(), String> {
        match self.names.get(cap.cap) {
            None => Ok(()),
            Some(names) if names.iter().any(|n| n == name) => Ok(()),
            Some(names) => Err(self.name_refusal(cap, names, name)),
        }
    }

    /// The prefixes a listing of `asked` under `cap` reaches: `asked`
    /// itself when it lies within a granted prefix, else the granted
    /// prefixes that lie within it; refused when there are none.
    pub fn listing(&self, cap: CapNoun, asked: &[u8]) -> Result<Vec<Vec<u8>>, String> {
        let Some(granted) = self.prefixes(cap) else {
            return Ok(vec![asked.to_vec()]);
        };
        if granted.iter().any(|p| asked.starts_with(p.as_bytes())) {
            return Ok(vec![asked.to_vec()]);
        }
        let within: Vec<Vec<u8>> = granted
            .iter()
            .filter(|p| p.as_bytes().starts_with(asked))
            .map(|p| p.as_bytes().to_vec())
            .collect();
        match within.is_empty() {
            true => Err(self.prefix_refusal(
                cap,
                granted,
                &format!("the listing of {}*", String::from_utf8_lossy(asked)),
            )),
            false => Ok(within),
        }
    }

    fn prefix_refusal(&self, cap: CapNoun, granted: &[String], refused: &str) -> String {
        let shown: Vec<String> = granted.iter().map(|p| format!("{p}*")).collect();
        let refused = match refused.starts_with("the listing") {
            true => refused.to_string(),
            false => format!("{} {refused}", cap.noun),
        };
        self.cap_refusal(cap, &shown, &refused)
    }

    fn name_refusal(&self, cap: CapNoun, granted: &[String], name: &str) -> String {
        self.cap_refusal(cap, granted, &format!("{} {name}", cap.noun))
    }

    /// `grant <id>: <cap> scope allows <allowed>; refused <refused>`.
    fn cap_refusal(&self, cap: CapNoun, allowed: &[String], refused: &str) -> String {
        let word = cap.cap;
        let allowed = match allowed.is_empty() {
            true => "nothing".to_string(),
            false => allowed.join(", "),
        };
        match &self.grant {
            Some(id) => format!("grant {id}: {word} scope allows {allowed}; refused {refused}"),
            None => format!("out of scope: the {word} scope allows {allowed}; refused {refused}"),
        }
    }

    /// The refusal of `refused` by `net`, naming the grant.
    pub fn refusal(&self, net: &Destinations, refused: impl fmt::Display) -> NetDenial {
        NetDenial::OutOfScope {
            grant: self.grant.clone(),
            allowed: net.to_string(),
            refused: refused.to_string(),
        }
    }
}

/// Why every call under a grant is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum ScopeRefusal {
    /// The grant's expiry has passed.
    #[error("grant {id} expired at {at}")]
    Expired {
        /// The grant.
        id: String,
        /// Its expiry, RFC 3339.
        at: String,
    },
    /// The grant is no longer in the book.
    #[error("grant {id} was revoked")]
    Revoked {
        /// The grant.
        id: String,
    },
    /// The grant, or the book holding it, does not read.
    #[error("grant {id} cannot be read: {why}")]
    Unreadable {
        /// The grant.
        id: String,
        /// Why.
        why: String,
    },
}

impl From<ScopeRefusal> for NetDenial {
    fn from(r: ScopeRefusal) -> Self {
        NetDenial::Withdrawn {
            reason: r.reason(),
            why: r.to_string(),
        }
    }
}

impl ScopeRefusal {
    /// A short name for the audit log.
    pub fn reason(&self) -> &'static str {
        match self {
            ScopeRefusal::Expired { .. } => "grant_expired",
            ScopeRefusal::Revoked { .. } => "grant_revoked",
            ScopeRefusal::Unreadable { .. } => "grant_unreadable",
        }
    }
}

/// Why a session cannot start under a stored grant.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GrantUseError {
    /// No grant has this id.
    #[error("no grant {0} (`wbx grant list` shows them)")]
    Unknown(String),
    /// The grant is another tenant's.
    #[error("grant {id} is tenant {tenant}'s, not {asked}'s")]
    OtherTenant {
        /// The grant.
        id: String,
        /// Its tenant.
        tenant: String,
        /// The tenant the session asked for.
        asked: String,
    },
    /// The grant names another subject.
    #[error("grant {id} is for {subject}, not {asked}")]
    OtherSubject {
        /// The grant.
        id: String,
        /// Its subject.
        subject: String,
        /// What the session runs.
        asked: String,
    },
    /// The grant has expired or does not read.
    #[error(transparent)]
    Refused(#[from] ScopeRefusal),
}

/// What a session under a grant holds: the grant as it is now, at every
/// call. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Scope(Source);

#[derive(Clone, Debug)]
enum Source {
    /// Scopes fixed for the session (`--allow-host`, a child's snapshot).
    Fixed(Arc<Scoped>),
    /// A grant in the book, read again as it changes.
    Stored { book: Arc<GrantBook>, id: Arc<str> },
    /// A grant held elsewhere, as its holder last sent it.
    Fed(Arc<super::ScopeFeed>),
}

impl Scope {
    /// Scopes fixed for the session's life.
    pub fn fixed(scoped: Scoped) -> Self {
        Scope(Source::Fixed(Arc::new(scoped)))
    }

    /// Grant `id` of `book` for a session of `tenant` running `subject`
    /// (`sha256:<hex>` of a component, or a line's `line`): refused when no
    /// grant has that id, when it is another tenant's or names another
    /// subject, or when it has already expired.
    pub fn for_session(
        book: &Arc<GrantBook>,
        id: &str,
        tenant: &str,
        subject: &str,
    ) -> Result<Scope, GrantUseError> {
        let record = book
            .get(id)
            .ok_or_else(|| GrantUseError::Unknown(id.to_string()))?;
        if record.tenant != tenant {
            return Err(GrantUseError::OtherTenant {
                id: id.to_string(),
                tenant: record.tenant,
                asked: tenant.to_string(),
            });
        }
        if let Some(wanted) = record.subject
            && wanted != subject
        {
            return Err(GrantUseError::OtherSubject {
                id: id.to_string(),
                subject: wanted,
                asked: subject.to_string(),
            });
        }
        let scope = Scope::stored(book.clone(), id);
        scope.now()?;
        Ok(scope)
    }

    /// The grant `feed` keeps current, as it is at each call.
    pub fn fed(feed: Arc<super::ScopeFeed>) -> Self {
        Scope(Source::Fed(feed))
    }

    /// Grant `id` of `book`, as it is at each call.
    pub fn stored(book: Arc<GrantBook>, id: &str) -> Self {
        Scope(Source::Stored {
            book,
            id: id.into(),
        })
    }

    /// Whether the grant is read from the book at each call (a stored
    /// grant), rather than held fixed (`--allow-host`, a child's or a
    /// replay's recorded view).
    pub fn is_live(&self) -> bool {
        matches!(self.0, Source::Stored { .. })
    }

    /// Whether the grant can change while the session runs: read from the
    /// book or fed by its holder, not held fixed.
    pub fn changes(&self) -> bool {
        !matches!(self.0, Source::Fixed(_))
    }

    /// The grant's id, when it is a stored grant's.
    pub fn grant(&self) -> Option<&str> {
        match &self.0 {
            Source::Fixed(s) => s.grant(),
            Source::Stored { id, .. } => Some(id),
            Source::Fed(feed) => feed.grant(),
        }
    }

    /// Counts `tokens` spent on the model against the grant's allowance:
    /// in the book for a stored grant (so every process sharing the home
    /// sees it), here for scopes held fixed. Nothing when it has none.
    pub fn spend_llm(&self, tokens: u64) {
        // Counted whether or not the grant is still in force: one that
        // expired during the request and is widened again owes it.
        match &self.0 {
            Source::Fixed(s) => s.spend_here(tokens),
            Source::Fed(feed) => {
                if let Ok(s) = feed.current() {
                    s.spend_here(tokens);
                }
            }
            Source::Stored { book, id } => {
                if let Err(e) = book.spend_llm(id, tokens) {
                    tracing::warn!("grant {id}: tokens spent could not be counted: {e}");
                }
            }
        }
    }

    /// The scopes as they are now, for a child process.
    pub fn snapshot(&self) -> Result<ScopeSnapshot, ScopeRefusal> {
        self.now().map(|s| s.snapshot())
    }

    /// The scopes as they are now; refused once the grant has expired, was
    /// revoked or does not read.
    pub fn now(&self) -> Result<Arc<Scoped>, ScopeRefusal> {
        self.at(now_ms())
    }

    /// [`Scope::now`] at `ms` milliseconds since the Unix epoch: refused
    /// from the expiry's millisecond on.
    pub fn at(&self, ms: u64) -> Result<Arc<Scoped>, ScopeRefusal> {
        let scoped = match &self.0 {
            Source::Fixed(s) => s.clone(),
            Source::Stored { book, id } => book.current(id)?,
            Source::Fed(feed) => feed.current()?,
        };
        match scoped.expires_ms {
            Some(at) if ms >= at => Err(ScopeRefusal::Expired {
                id: scoped.grant.clone().unwrap_or_else(|| "(unnamed)".into()),
                at: rfc3339(at),
            }),
            _ => Ok(scoped),
        }
    }
}

impl NetScope for Scope {
    fn judge(
        &self,
        scheme: &str,
        host: &str,
        port: u16,
        refused: &dyn fmt::Display,
    ) -> Result<(), NetDenial> {
        self.now()?.judge(scheme, host, port, refused)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_one_millisecond_after_expiry_is_refused_and_one_before_is_not() {
        let book = Arc::new(GrantBook::new(None));
        let mut r = GrantRecord::new("t", "op");
        r.net = Some(vec!["https://api.example".into()]);
        r.expires_ms = Some(1_800_000_000_000);
        let id = book.add(r).unwrap().id;
        let scope = Scope::stored(book.clone(), &id);
        assert!(scope.at(1_799_999_999_999).is_ok());
        let late = scope.at(1_800_000_000_001).unwrap_err();
        assert_eq!(late.reason(), "grant_expired");
        assert!(
            late.to_string()
                .contains(&format!("grant {id} expired at 2027-01-15T08:00:00"))
        );
    }

    #[test]
    fn a_refusal_names_the_grant_its_destinations_and_what_it_refused() {
        let book = Arc::new(GrantBook::new(None));
        let mut r = GrantRecord::new("t", "op");
        r.net = Some(vec!["https://api.example".into()]);
        let id = book.add(r).unwrap().id;
        let scoped = Scope::stored(book, &id).now().unwrap();
        scoped.judge("https", "api.example", 443, "x").unwrap();
        let refused = scoped
            .judge("https", "evil.example", 443, "https://evil.example")
            .unwrap_err();
        assert_eq!(
            refused.to_string(),
            format!(
                "grant {id}: net scope allows https://api.example; refused https://evil.example"
            )
        );
    }

    const KV: CapNoun = CapNoun {
        cap: "kv",
        noun: "key",
    };
    const QUEUE: CapNoun = CapNoun {
        cap: "queue",
        noun: "queue",
    };

    #[test]
    fn a_key_or_queue_outside_the_prefixes_is_refused_and_a_listing_is_cut_to_them() {
        let book = Arc::new(GrantBook::new(None));
        let mut r = GrantRecord::new("t", "op");
        r.prefixes
            .insert("kv".into(), vec!["users/".into(), "cache/a".into()]);
        r.prefixes.insert("queue".into(), vec![]);
        let id = book.add(r).unwrap().id;
        let s = Scope::stored(book, &id).now().unwrap();
        assert!(s.judge_name(KV, b"users/ada").is_ok());
        assert_eq!(
            s.judge_name(KV, b"admin/root").unwrap_err(),
            format!("grant {id}: kv scope allows users/*, cache/a*; refused key admin/root")
        );
        // `use` is not `users/`: a prefix is matched as bytes, whole.
        assert!(s.judge_name(KV, b"use").is_err());
        assert_eq!(
            s.listing(KV, b"users/a").unwrap(),
            vec![b"users/a".to_vec()]
        );
        assert_eq!(
            s.listing(KV, b"").unwrap(),
            vec![b"users/".to_vec(), b"cache/a".to_vec()]
        );
        assert!(s.listing(KV, b"admin").is_err());
        // An empty list reaches no queue at all.
        assert!(
            s.judge_name(QUEUE, b"jobs")
                .unwrap_err()
                .contains("allows nothing")
        );
    }

    #[test]
    fn a_spend_is_counted_though_the_grant_expired_during_the_request() {
        let book = Arc::new(GrantBook::new(None));
        let mut r = GrantRecord::new("t", "op");
        r.llm_tokens = Some(100);
        r.expires_ms = Some(1);
        let id = book.add(r).unwrap().id;
        let scope = Scope::stored(book.clone(), &id);
        assert!(scope.now().is_err(), "the grant is in force");
        scope.spend_llm(40);
        assert_eq!(book.get(&id).unwrap().llm_spent, 40);
        // A grant with no allowance is never written for a spend.
        let plain = book.add(GrantRecord::new("t", "op")).unwrap();
        Scope::stored(book.clone(), &plain.id).spend_llm(40);
        assert_eq!(book.get(&plain.id).unwrap(), plain);
    }
}
