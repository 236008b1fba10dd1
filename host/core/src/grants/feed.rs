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

use super::{Scope, ScopeRefusal, ScopeSnapshot, Scoped};
use crate::limits::{GRANT_FEED_MAX_LINE_BYTES, GRANT_FEED_POLL};
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
    /// Until when the view stands unless renewed, in milliseconds since
    /// the Unix epoch (`None`: until the next one).
    until_ms: Option<u64>,
}

impl ScopeFeed {
    /// A feed starting from `first` (sequence 0): the view the session was
    /// started with.
    pub fn start(first: Scoped) -> Arc<ScopeFeed> {
        ScopeFeed::start_leased(first, None)
    }

    /// [`ScopeFeed::start`], the first view standing until `until_ms` only
    /// unless a later one renews it (see [`ScopeFeed::offer_leased`]).
    pub fn start_leased(first: Scoped, until_ms: Option<u64>) -> Arc<ScopeFeed> {
        Arc::new(ScopeFeed {
            grant: first.grant().map(str::to_string),
            held: RwLock::new(Held {
                seq: 0,
                view: Ok(Arc::new(first)),
                until_ms,
            }),
        })
    }

    /// Takes `view` as the grant's view when `seq` is past the one held;
    /// whether it was taken. A snapshot whose destinations do not read, or
    /// that names another grant, refuses every call from now on.
    pub fn offer(&self, seq: u64, view: ScopeView) -> bool {
        self.offer_leased(seq, view, None)
    }

    /// [`ScopeFeed::offer`] of a view that stands until `until_ms` only:
    /// past it, with no later view, every call is refused. A holder that
    /// renews its view while it lives bounds how long a view it can no
    /// longer send (it stopped, or someone put an older one in its place)
    /// is taken for the grant.
    pub fn offer_leased(&self, seq: u64, view: ScopeView, until_ms: Option<u64>) -> bool {
        let mut held = self.held.write().unwrap_or_else(|p| p.into_inner());
        if seq <= held.seq {
            return false;
        }
        held.until_ms = until_ms;
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

    /// Refuses every call from now on, saying `why` (the views can no
    /// longer be followed).
    pub fn withdraw(&self, why: &str) {
        let id = self.grant.clone().unwrap_or_else(|| "(unnamed)".into());
        let why = why.to_string();
        self.offer(u64::MAX, Err(ScopeRefusal::Unreadable { id, why }));
    }

    /// The grant's id, when the views are a stored grant's.
    pub fn grant(&self) -> Option<&str> {
        self.grant.as_deref()
    }

    /// The sequence number of the view held.
    pub fn seq(&self) -> u64 {
        self.held.read().unwrap_or_else(|p| p.into_inner()).seq
    }

    /// The view held, unless its lease ran out.
    pub(crate) fn current(&self) -> Result<Arc<Scoped>, ScopeRefusal> {
        let held = self.held.read().unwrap_or_else(|p| p.into_inner());
        match held.until_ms {
            Some(until) if super::now_ms() > until => Err(ScopeRefusal::Unreadable {
                id: self.grant.clone().unwrap_or_else(|| "(unnamed)".into()),
                why: format!(
                    "its holder has sent no view of it since one that stood until {}",
                    super::rfc3339(until)
                ),
            }),
            _ => held.view.clone(),
        }
    }
}

/// One change as it travels between processes: its number and the view.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FeedLine {
    /// Counts up from 1 (0 is the view the other side started with).
    pub seq: u64,
    /// The grant as it is now.
    pub view: ScopeView,
}

/// The changes of a scope as its holder sees them, from a first view.
pub struct Changes {
    scope: Scope,
    seen: ScopeView,
    seq: u64,
}

impl Changes {
    /// The changes of `scope` after `first`, the view the other side
    /// started with.
    pub fn since(scope: Scope, first: ScopeView) -> Changes {
        Changes {
            scope,
            seen: first,
            seq: 0,
        }
    }

    /// The next change, when it is seen (the scope is looked at every
    /// [`GRANT_FEED_POLL`]); a scope held fixed never changes.
    pub async fn next(&mut self) -> FeedLine {
        if !self.scope.changes() {
            return std::future::pending().await;
        }
        loop {
            tokio::time::sleep(GRANT_FEED_POLL).await;
            let now = self.scope.snapshot();
            if now != self.seen {
                self.seq += 1;
                self.seen = now.clone();
                return FeedLine {
                    seq: self.seq,
                    view: now,
                };
            }
        }
    }

    /// Writes each change to `out`, a JSON line each, until `out` closes.
    pub async fn send(mut self, mut out: impl tokio::io::AsyncWrite + Unpin) {
        use tokio::io::AsyncWriteExt;
        loop {
            let line = self.next().await;
            let Ok(mut bytes) = serde_json::to_vec(&line) else {
                return;
            };
            bytes.push(b'\n');
            if out.write_all(&bytes).await.is_err() {
                return;
            }
        }
    }
}

/// Offers each line read from `input` to `feed` until it ends; a line
/// that does not read, or is past [`GRANT_FEED_MAX_LINE_BYTES`], refuses
/// every call after it and ends the reading.
pub fn follow_lines(input: impl std::io::Read, feed: &ScopeFeed) {
    use std::io::{BufRead, Read};
    let mut input = std::io::BufReader::new(input);
    loop {
        let mut line = Vec::new();
        match (&mut input)
            .take(GRANT_FEED_MAX_LINE_BYTES)
            .read_until(b'\n', &mut line)
        {
            // The parent closes its end only once the child is done: an
            // end before is a parent gone, whose changes no longer come.
            Ok(0) | Err(_) => {
                feed.withdraw("the parent's pipe of its changes closed");
                return;
            }
            Ok(_) => {}
        }
        match serde_json::from_slice::<FeedLine>(&line) {
            Ok(FeedLine { seq, view }) => {
                feed.offer(seq, view);
            }
            Err(e) => {
                feed.withdraw(&format!("a change from the parent does not read: {e}"));
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(net: &[&str]) -> ScopeSnapshot {
        ScopeSnapshot::of_destinations(Some("g-1"), Some(net))
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
    fn a_leased_view_not_renewed_in_time_refuses_every_call_and_a_renewal_restores_it() {
        let now = crate::grants::now_ms();
        let first = Scoped::read(view(&["https://b.example"])).unwrap();
        let feed = ScopeFeed::start_leased(first, Some(now + 60_000));
        let scope = Scope::fed(feed.clone());
        assert!(reaches_b(&scope));
        // An older view put back by someone else: its lease has passed.
        assert!(feed.offer_leased(1, Ok(view(&["https://b.example"])), Some(now - 1)));
        let refused = scope.now().unwrap_err();
        assert!(
            refused.to_string().contains("has sent no view of it since"),
            "{refused}"
        );
        assert!(feed.offer_leased(2, Ok(view(&["https://b.example"])), Some(now + 60_000)));
        assert!(reaches_b(&scope));
    }

    #[test]
    fn a_pipe_that_closes_or_sends_what_does_not_read_refuses_every_call() {
        for input in [&b""[..], b"{\"seq\": 1}\n"] {
            let feed = ScopeFeed::start(Scoped::read(view(&["https://b.example"])).unwrap());
            follow_lines(input, &feed);
            assert_eq!(
                Scope::fed(feed).now().unwrap_err().reason(),
                "grant_unreadable"
            );
        }
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
