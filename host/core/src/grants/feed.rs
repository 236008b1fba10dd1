//! Scopes kept current by someone else: a [`ScopeFeed`] holds the grant as
//! its holder last heard it, for a process that cannot read the book the
//! grant lives in (a node worker on another machine; the views arrive
//! signed over the bus). Every call under a [`Scope`] made from it reads
//! the latest view, so a narrowing, a revocation or an expiry reaches the
//! call after the view arrives.
//!
//! Invariant: a view that does not read refuses every call after it (it
//! never leaves the older, wider view in force), and a view older than
//! the one held is never taken (see [`ScopeFeed::offer`]).

use super::{ScopeRefusal, ScopeSnapshot, Scoped};
use std::sync::{Arc, RwLock};

/// A grant's view as it travels: its scopes, or why every call under it is
/// refused now.
pub type ScopeView = Result<ScopeSnapshot, ScopeRefusal>;

/// The latest view of a grant held elsewhere, and its sequence number.
#[derive(Debug)]
pub struct ScopeFeed {
    /// The grant's id, from the first view (no later one changes it).
    grant: Option<String>,
    held: RwLock<Held>,
}

#[derive(Debug)]
struct Held {
    seq: u64,
    view: Result<Arc<Scoped>, ScopeRefusal>,
}

impl ScopeFeed {
    /// A feed starting from `first` (sequence 0): the view the session was
    /// started with.
    pub fn start(first: Scoped) -> Arc<ScopeFeed> {
        Arc::new(ScopeFeed {
            grant: first.grant().map(str::to_string),
            held: RwLock::new(Held {
                seq: 0,
                view: Ok(Arc::new(first)),
            }),
        })
    }

    /// Takes `view` as the grant's view when `seq` is past the one held;
    /// whether it was taken. A snapshot whose destinations do not read, or
    /// that names another grant, refuses every call from now on.
    pub fn offer(&self, seq: u64, view: ScopeView) -> bool {
        let mut held = self.held.write().unwrap_or_else(|p| p.into_inner());
        if seq <= held.seq {
            return false;
        }
        let id = self.grant.clone().unwrap_or_else(|| "(unnamed)".into());
        let unreadable = |why: String| ScopeRefusal::Unreadable {
            id: id.clone(),
            why,
        };
        held.seq = seq;
        held.view = view.and_then(|s| match s.grant == self.grant {
            true => Scoped::read(s)
                .map(Arc::new)
                .map_err(|e| unreadable(e.to_string())),
            false => Err(unreadable(format!(
                "a view of grant {} was sent for it",
                s.grant.as_deref().unwrap_or("(unnamed)")
            ))),
        });
        true
    }

    /// The grant's id, when the views are a stored grant's.
    pub fn grant(&self) -> Option<&str> {
        self.grant.as_deref()
    }

    /// The sequence number of the view held.
    pub fn seq(&self) -> u64 {
        self.held.read().unwrap_or_else(|p| p.into_inner()).seq
    }

    /// The view held.
    pub(crate) fn current(&self) -> Result<Arc<Scoped>, ScopeRefusal> {
        self.held
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .view
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grants::Scope;

    fn view(net: &[&str]) -> ScopeSnapshot {
        ScopeSnapshot {
            grant: Some("g-1".into()),
            net: Some(net.iter().map(|s| s.to_string()).collect()),
            prefixes: Default::default(),
            names: Default::default(),
            expires_ms: None,
            llm_tokens: None,
            llm_spent: 0,
        }
    }

    /// Whether `scope` reaches `https://b.example` now.
    fn reaches_b(scope: &Scope) -> bool {
        let now = scope.now().unwrap();
        now.judge("https", "b.example", 443, "b").is_ok()
    }

    #[test]
    fn a_fed_scope_judges_by_the_latest_view_and_never_by_an_older_one() {
        let first = Scoped::read(view(&["https://a.example", "https://b.example"])).unwrap();
        let feed = ScopeFeed::start(first);
        let scope = Scope::fed(feed.clone());
        assert!(reaches_b(&scope));
        assert!(feed.offer(2, Ok(view(&["https://a.example"]))));
        assert!(!reaches_b(&scope));
        // An older view (a wider one replayed) is not taken.
        assert!(!feed.offer(1, Ok(view(&["https://a.example", "https://b.example"]))));
        assert!(!reaches_b(&scope));
        assert!(feed.offer(3, Err(ScopeRefusal::Revoked { id: "g-1".into() })));
        assert_eq!(scope.now().unwrap_err().reason(), "grant_revoked");
        // A view of another grant refuses every call.
        assert!(feed.offer(
            4,
            Ok(ScopeSnapshot {
                grant: Some("g-2".into()),
                ..view(&[])
            })
        ));
        assert!(
            scope
                .now()
                .unwrap_err()
                .to_string()
                .contains("a view of grant g-2")
        );
    }

    #[test]
    fn a_view_whose_destinations_do_not_read_refuses_every_call() {
        let feed = ScopeFeed::start(Scoped::read(view(&["https://a.example"])).unwrap());
        assert!(feed.offer(1, Ok(view(&["not a destination ::"]))));
        let refused = Scope::fed(feed).now().unwrap_err();
        assert_eq!(refused.reason(), "grant_unreadable");
        assert!(refused.to_string().starts_with("grant g-1 cannot be read"));
    }
}
