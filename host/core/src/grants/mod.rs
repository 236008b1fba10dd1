//! Grants as values: what a component may reach inside the caps it was
//! docked with, stored in the home under an id, read again while it runs.
//!
//! A [`GrantRecord`] names a tenant, optionally a subject (a component by
//! sha256, a command, an instance), a profile and caps, and the scopes
//! within them: the network destinations (Spin's `allowed_outbound_hosts`
//! syntax, [`crate::egress::Destinations`]) and an expiry. A record with no
//! scope is today's profile, unchanged. The [`GrantBook`] keeps every
//! record in `<home>/grants.json`, written atomically and re-read when the
//! file changes, so `wbx grant narrow|widen|revoke` in another process
//! reaches a running instance at its next call (within
//! [`crate::limits::GRANT_REFRESH_INTERVAL`]). A session under a grant
//! holds a [`Scope`]: every network call asks it for the grant as it is
//! now ([`Scope::now`]), so a narrowed destination, an expiry or a
//! revocation refuses that call, naming the grant.
//!
//! Invariant: a scope only narrows what the caps link; an import the
//! profile never linked stays absent whatever a grant says. Threat: the
//! guest cannot reach the book (no cap serves it), and a record that does
//! not read refuses every call under it rather than running unscoped.

mod book;
mod desk;
mod feed;
pub mod import;
mod lists;
mod record;
mod scope;

pub use book::{BookError, GRANTS_FILE, GrantBook};
pub use desk::{DeskError, GrantDesk, Narrowing, NewGrant, Widening};
pub use feed::{Changes, FeedLine, ScopeFeed, ScopeView, follow_lines};
pub use lists::Lists;
pub use record::Expiry;
pub use record::{Change, GrantRecord, now_ms, rfc3339};
pub use scope::{CapNoun, GrantUseError, Scope, ScopeRefusal, ScopeSnapshot, Scoped};
