//! The cadence: every host primitive that does I/O for a guest runs the
//! same checks, in the same order, and audits every denial.
//!
//! Order: revoked tenant → rate limit → default-deny (the cap must be
//! granted) → the operation's own guards → size-capped output. A tenant
//! is the tenant the host docked the caller with; a guest cannot choose it.
//! Revocation is read on every call, so revoking a tenant stops calls of
//! instances that were docked before the revocation. Denials are counted by
//! reason and the most recent are kept, in memory and in
//! `<home>/audit.jsonl` (repeats coalesced, the file rotated, see
//! [`Audit`]); an audit entry names the tenant, the cap, the reason
//! and a short detail (a command name, a host), never a payload or a
//! secret. Neither the audit log nor the rate limiter's buckets grow with
//! the number of refusals or of distinct callers ([`RateLimiter`]). What a
//! tenant's stores hold together (descriptors) is bounded per tenant as
//! well ([`Descriptors`]).

mod audit;
mod descriptors;
mod rate;
mod revocation;

pub use audit::{Audit, AuditEntry, AuditSummary};
pub use descriptors::{Descriptors, raise_descriptor_limit, tenant_descriptor_cap};
pub(crate) use descriptors::{Holding, Kind};
pub use rate::RateLimiter;
pub use revocation::Revocations;

use std::path::Path;
use std::sync::Arc;

/// Why the cadence, or an operation's guard, refused a call.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Denial {
    /// The tenant is revoked.
    Revoked,
    /// The tenant is over its rate limit.
    RateLimited,
    /// The cap is not granted (default-deny).
    Denied,
    /// An operation-specific guard refused; the reason is its name
    /// (`max_depth`, `command_not_granted`, `unknown_command`, ...).
    Guard(&'static str),
}

impl Denial {
    /// The reason as written in the audit log.
    pub fn reason(&self) -> &'static str {
        match self {
            Denial::Revoked => "revoked",
            Denial::RateLimited => "rate_limited",
            Denial::Denied => "denied",
            Denial::Guard(r) => r,
        }
    }
}

/// The revocation list's file in an engine home (read by every process
/// sharing the home, so `wbx revoke` reaches running engines).
pub const REVOCATIONS_FILE: &str = "revoked.json";
/// The audit log's file in an engine home.
pub const AUDIT_FILE: &str = "audit.jsonl";

/// The shared state of the cadence for one engine.
#[derive(Debug)]
pub struct Cadence {
    revocations: Revocations,
    rate: RateLimiter,
    audit: Audit,
}

impl Cadence {
    /// A cadence persisting revocations and the audit log under `home`
    /// (nothing persisted when `None`).
    pub fn new(home: Option<&Path>, rate: RateLimiter) -> Arc<Self> {
        Arc::new(Self {
            revocations: Revocations::new(home.map(|h| h.join(REVOCATIONS_FILE))),
            rate,
            audit: Audit::new(home.map(|h| h.join(AUDIT_FILE))),
        })
    }

    /// The first two steps for `tenant` calling under `cap` (the cap
    /// word the audit records): revocation, then the rate limit. A denial
    /// is audited before it is returned.
    pub fn admit(&self, tenant: &str, cap: &'static str) -> Result<(), Denial> {
        self.revocations.refresh();
        self.admit_as_read(tenant, cap)
    }

    /// [`Cadence::admit`] against the revocation list as last read, for
    /// the calls of a batch admitted together (the stages of one line),
    /// whose caller has just refreshed it; the rate limit counts each call.
    pub(crate) fn admit_as_read(&self, tenant: &str, cap: &'static str) -> Result<(), Denial> {
        if self.revocations.is_revoked_as_read(tenant) {
            return Err(self.deny(tenant, cap, Denial::Revoked, ""));
        }
        if !self.rate.admit(tenant) {
            return Err(self.deny(tenant, cap, Denial::RateLimited, ""));
        }
        Ok(())
    }

    /// Records a denial and returns it, for the steps after `admit`.
    pub fn deny(&self, tenant: &str, cap: &'static str, denial: Denial, detail: &str) -> Denial {
        self.audit.record(tenant, cap, denial.reason(), detail);
        denial
    }

    /// The revocation list.
    pub fn revocations(&self) -> &Revocations {
        &self.revocations
    }

    /// The audit log.
    pub fn audit(&self) -> &Audit {
        &self.audit
    }
}
