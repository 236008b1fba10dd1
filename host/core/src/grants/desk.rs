//! The operator's verbs on one tenant's grants, as the agent API's grant
//! routes and `wbx mcp --operator`'s tools serve them: list, show, add,
//! narrow, widen and revoke. Each change is kept in the grant's history
//! (who, before, after) and written to the audit log (what, the grant,
//! who, its scopes before -> after).
//!
//! Threat: a desk changes what sessions may reach, so whoever serves one
//! authenticates its caller first (the API's bearer token, the MCP
//! server's); a desk serves one tenant, and another tenant's grant is
//! unknown to it, as if it did not exist.

use super::{BookError, Expiry, GrantBook, GrantRecord, Lists};
use crate::cadence::Cadence;
use serde::Deserialize;
use std::sync::Arc;

/// A new grant, as the operator asks for it.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewGrant {
    /// What it is for (`sha256:<hex>`, `line`, `mcp`, `agent:NAME`).
    pub subject: Option<String>,
    /// Where it came from, for the operator.
    pub label: Option<String>,
    /// The profile sessions under it dock with.
    pub profile: Option<String>,
    /// The caps within the profile, as cap words.
    pub caps: Option<String>,
    /// What it reaches.
    #[serde(default)]
    pub reach: Lists,
    /// Expire this long from now (`10m`).
    #[serde(rename = "for")]
    pub lasts: Option<String>,
    /// Expire at this time (RFC 3339).
    pub until: Option<String>,
}

/// A narrowing: what to keep, what to drop, an earlier expiry.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Narrowing {
    /// Keep only these.
    #[serde(default)]
    pub only: Lists,
    /// Drop these.
    #[serde(default)]
    pub drop: Lists,
    /// Expire this long from now.
    #[serde(rename = "for")]
    pub lasts: Option<String>,
    /// Expire at this time.
    pub until: Option<String>,
}

/// A widening: what to add, a later expiry or none.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Widening {
    /// Add these.
    #[serde(default)]
    pub add: Lists,
    /// Expire this long from now.
    #[serde(rename = "for")]
    pub lasts: Option<String>,
    /// Expire at this time.
    pub until: Option<String>,
    /// Never expire.
    #[serde(default)]
    pub forever: bool,
}

impl NewGrant {
    /// The record it asks for, of `tenant` by `by` (the book gives it its
    /// id): refused when its profile, caps or expiry do not read.
    pub fn record(self, tenant: &str, by: &str) -> Result<GrantRecord, DeskError> {
        let bad = |e: crate::policy::PolicyError| DeskError::Bad(e.to_string());
        if let Some(p) = &self.profile {
            crate::policy::Profile::parse(p).map_err(bad)?;
        }
        if let Some(c) = &self.caps {
            crate::policy::CapSet::parse(c).map_err(bad)?;
        }
        let expiry = expiry(self.lasts.as_deref(), self.until.as_deref())?;
        let mut record = GrantRecord::new(tenant, by);
        record.subject = self.subject;
        record.label = self.label;
        record.profile = self.profile;
        record.caps = self.caps;
        let reach = self.reach;
        record.net = (!reach.net.is_empty()).then_some(reach.net);
        record.prefixes = reach.prefixes;
        record.names = reach.names;
        record.dirs = (!reach.dirs.is_empty()).then_some(reach.dirs);
        record.env = (!reach.env.is_empty()).then_some(reach.env);
        record.llm_tokens = reach.llm_tokens;
        if let Expiry::At(ms) = expiry {
            record.expires_ms = Some(ms);
        }
        Ok(record)
    }
}

/// Why a desk refused.
#[derive(Debug, thiserror::Error)]
pub enum DeskError {
    /// The book refused (unknown grant, not narrower, not wider, ...).
    #[error(transparent)]
    Book(#[from] BookError),
    /// The request does not read.
    #[error("{0}")]
    Bad(String),
}

/// The operator's verbs on `tenant`'s grants, as `by`.
#[derive(Clone)]
pub struct GrantDesk {
    book: Arc<GrantBook>,
    cadence: Arc<Cadence>,
    tenant: String,
    by: String,
}

/// The expiry `for` or `until` asks for (not both).
fn expiry(lasts: Option<&str>, until: Option<&str>) -> Result<Expiry, DeskError> {
    Expiry::asked(lasts, until).map_err(DeskError::Bad)
}

impl GrantDesk {
    /// A desk on `book` for `tenant`, auditing to `cadence` as `by`.
    pub fn new(book: Arc<GrantBook>, cadence: Arc<Cadence>, tenant: &str, by: &str) -> Self {
        GrantDesk {
            book,
            cadence,
            tenant: tenant.to_string(),
            by: by.to_string(),
        }
    }

    /// The tenant's grants.
    pub fn list(&self) -> Result<Vec<GrantRecord>, DeskError> {
        let all = self.book.list()?;
        Ok(all
            .into_iter()
            .filter(|r| r.tenant == self.tenant)
            .collect())
    }

    /// Grant `id`, when it is the tenant's.
    pub fn show(&self, id: &str) -> Result<GrantRecord, DeskError> {
        self.book
            .get(id)
            .filter(|r| r.tenant == self.tenant)
            .ok_or_else(|| BookError::Unknown(id.to_string()).into())
    }

    /// Adds `new` for the tenant.
    pub fn add(&self, new: NewGrant) -> Result<GrantRecord, DeskError> {
        let added = self.book.add(new.record(&self.tenant, &self.by)?)?;
        Ok(self.changed("grant_added", None, added))
    }

    /// Narrows grant `id`.
    pub fn narrow(&self, id: &str, change: Narrowing) -> Result<GrantRecord, DeskError> {
        let was = self.show(id)?;
        let expiry = expiry(change.lasts.as_deref(), change.until.as_deref())?;
        let now = self
            .book
            .narrow(id, &change.only, &change.drop, expiry, &self.by)?;
        Ok(self.changed("grant_narrowed", Some(&was), now))
    }

    /// Widens grant `id`.
    pub fn widen(&self, id: &str, change: Widening) -> Result<GrantRecord, DeskError> {
        let was = self.show(id)?;
        let expiry = match change.forever {
            true if change.lasts.is_some() || change.until.is_some() => {
                return Err(DeskError::Bad(
                    "give `forever` or an expiry, not both".into(),
                ));
            }
            true => Expiry::Never,
            false => expiry(change.lasts.as_deref(), change.until.as_deref())?,
        };
        let now = self.book.widen(id, &change.add, expiry, &self.by)?;
        Ok(self.changed("grant_widened", Some(&was), now))
    }

    /// Revokes grant `id`: every call under it is refused from the next.
    pub fn revoke(&self, id: &str) -> Result<GrantRecord, DeskError> {
        let was = self.show(id)?;
        let gone = self.book.revoke(id)?;
        Ok(self.changed("grant_revoked", Some(&was), gone))
    }

    /// Audits `what` of `record` (before: `was`) and hands it back.
    fn changed(&self, what: &str, was: Option<&GrantRecord>, record: GrantRecord) -> GrantRecord {
        let before = was.map_or_else(|| "(none)".to_string(), GrantRecord::scopes_text);
        let after = match what {
            "grant_revoked" => "(revoked)".to_string(),
            _ => record.scopes_text(),
        };
        let detail = format!("{} by {}: {before} -> {after}", record.id, self.by);
        self.cadence
            .audit()
            .record(&self.tenant, "grant", what, &detail);
        record
    }
}
