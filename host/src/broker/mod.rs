//! The common broker cadence: every host primitive that does I/O for a
//! guest runs the same checks, in the same order, and audits every denial.
//!
//! Order: revoked principal → rate limit → default-deny (the cap must be
//! granted) → the operation's own guards → size-capped output. A principal
//! is the tenant the host docked the caller with; a guest cannot choose it.
//! Revocation is read on every call, so revoking a principal stops calls of
//! instances that were docked before the revocation. Denials are counted by
//! reason and the most recent are kept, in memory and in
//! `<home>/audit.jsonl` (repeats coalesced, the file rotated, see
//! [`Audit`]); an audit entry names the principal, the broker, the reason
//! and a short detail (a command name, a host), never a payload or a
//! secret. Neither the audit log nor the rate limiter's buckets grow with
//! the number of refusals or of distinct callers ([`RateLimiter`]).

mod audit;
pub mod capped_http;
pub mod net_guard;
pub mod oneshot;
mod rate;
mod revocation;

pub use audit::{Audit, AuditEntry, AuditSummary};
pub use capped_http::{ByteBudget, HttpClient, HttpError, HttpLimits, HttpRequest, HttpResponse};
pub use net_guard::{Cidr, NetDenial, NetGuard, Pinned, Resolver, SystemResolver};
pub use rate::RateLimiter;
pub use revocation::Revocations;

use std::path::Path;
use std::sync::Arc;

/// Why a broker refused a call.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Denial {
    /// The principal is revoked.
    Revoked,
    /// The principal is over its rate limit.
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

    /// The first two steps for `principal` calling `broker`: revocation,
    /// then the rate limit. A denial is audited before it is returned.
    pub fn admit(&self, principal: &str, broker: &'static str) -> Result<(), Denial> {
        if self.revocations.is_revoked(principal) {
            return Err(self.deny(principal, broker, Denial::Revoked, ""));
        }
        if !self.rate.admit(principal) {
            return Err(self.deny(principal, broker, Denial::RateLimited, ""));
        }
        Ok(())
    }

    /// Records a denial and returns it, for the steps after `admit`.
    pub fn deny(
        &self,
        principal: &str,
        broker: &'static str,
        denial: Denial,
        detail: &str,
    ) -> Denial {
        self.audit
            .record(principal, broker, denial.reason(), detail);
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

/// What a network broker call needs: the caller's principal, the cadence
/// and the guarded transport. A cap context holding `None` reaches nothing.
#[derive(Clone, Debug)]
pub struct NetAccess {
    /// The caller's principal (tenant).
    pub principal: String,
    /// Revocation, rate limit, audit.
    pub cadence: Arc<Cadence>,
    /// The floor and the transport.
    pub client: Arc<HttpClient>,
    /// The largest HTTP body read.
    pub max_body: usize,
    /// The wall-clock budget of one fetch.
    pub timeout: std::time::Duration,
}

impl NetAccess {
    /// The engine's limits for one fetch: its body cap and time budget.
    pub fn limits(&self) -> HttpLimits {
        HttpLimits {
            max_body: self.max_body,
            deadline: self.timeout,
            max_redirects: crate::limits::NET_MAX_REDIRECTS,
            shared: None,
        }
    }

    /// Fetches `req` for `broker` under the cadence and `limits`; a floor
    /// denial is audited with the URL's host.
    pub async fn fetch(
        &self,
        broker: &'static str,
        req: HttpRequest,
        limits: &HttpLimits,
    ) -> Result<HttpResponse, BrokerFailure> {
        let host = url::Url::parse(&req.url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_default();
        self.guarded(broker, &host, self.client.fetch(req, limits))
            .await
    }

    /// Runs `op` for `broker` under the cadence: revocation and rate limit
    /// first, then the operation, whose floor denials are audited with
    /// `detail` (a host, never a payload).
    pub async fn guarded<T>(
        &self,
        broker: &'static str,
        detail: &str,
        op: impl Future<Output = Result<T, HttpError>>,
    ) -> Result<T, BrokerFailure> {
        self.cadence
            .admit(&self.principal, broker)
            .map_err(BrokerFailure::Denied)?;
        op.await.map_err(|e| {
            if let HttpError::Denied(d) = &e {
                self.cadence
                    .deny(&self.principal, broker, Denial::Guard(d.reason()), detail);
            }
            BrokerFailure::Failed(e)
        })
    }
}

/// A network broker call that did not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BrokerFailure {
    /// Revoked or rate limited.
    #[error("{}", .0.reason())]
    Denied(Denial),
    /// The operation failed (a floor denial among them).
    #[error(transparent)]
    Failed(#[from] HttpError),
}
