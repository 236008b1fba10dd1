//! A run under a stored grant (`wbx agent run --grant ID`, the agent
//! API's `grant`): every tool call and every model request is judged by
//! the grant as it is at that moment, and what each call saw of it is on
//! that call's step line, so in the signed ledger.
//!
//! Per call, [`RunGrant::judge`] reads the grant: in force, its scopes go
//! with the tool (a shell line's commands, a fetch's destinations, each
//! read again at every network call); expired or revoked, the tool does
//! not run and the model reads the refusal, naming the grant. A call that
//! sees the grant differ from the call before (the first call, a change
//! the operator made, an expiry, a revocation) carries a [`GrantSeen`]:
//! the scopes it was judged by, the changes since (who, when, before,
//! after) and the refusal.
//!
//! Threat: the model steering a run must not reach past its grant, nor
//! change it. No tool reaches the grants: the `wb` verbs are read-only,
//! the shell runs only registered commands over the workdir, the files
//! tools stay inside the workdir (the home's `grants.json` is outside it)
//! and `fetch` keeps to the grant's destinations and the floor (the agent
//! API that changes grants is on loopback, which the floor refuses).
//!
//! Replay: a replay judges each call by the view its step line recorded,
//! never by the book (which has moved on, or forgotten a revoked grant),
//! so a faithful replay writes the same lines.

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::Arc;
use workbooks::grants::{Change, GrantBook, GrantUseError, Scope, ScopeSnapshot, Scoped};
use workbooks::policy::{Cap, CapSet};

/// What a grant for an agent run names as its subject: `agent:` and the
/// agent's name (a grant with no subject serves any run).
pub const AGENT_SUBJECT: &str = "agent:";

/// What one tool call saw of the run's grant, when it differed from what
/// the call before saw.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantSeen {
    /// The grant's id.
    pub id: String,
    /// The scopes the call was judged by (`None`: refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes: Option<ScopeSnapshot>,
    /// The changes made to the grant since the call before, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<Change>,
    /// Why every call under the grant is refused now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
}

/// Why a run cannot start under the grant it names.
#[derive(Debug, thiserror::Error)]
pub enum RunGrantError {
    /// The grant is unknown, another tenant's or subject's, or expired.
    #[error(transparent)]
    Use(#[from] GrantUseError),
    /// Its caps or profile do not read.
    #[error("grant {id}: {error}")]
    Caps {
        /// The grant.
        id: String,
        /// Why.
        error: workbooks::PolicyError,
    },
}

/// The grant a run acts under.
pub(crate) struct RunGrant {
    id: String,
    /// The caps the grant gives (its caps, else its profile's); `None`:
    /// it names neither, and each tool keeps its own.
    caps: Option<CapSet>,
    source: Source,
    /// What the last call saw.
    last: Option<GrantSeen>,
}

enum Source {
    /// The grant in the book, read at every call.
    Live {
        scope: Scope,
        book: Arc<GrantBook>,
        /// The time of the last change already reported.
        changed_ms: u64,
    },
    /// What each recorded call saw (`None`: the same as the call before).
    Replay(VecDeque<Option<GrantSeen>>),
}

/// The caps grant `record` gives, from its caps or else its profile.
pub(crate) fn caps_of(
    record: &workbooks::grants::GrantRecord,
) -> Result<Option<CapSet>, workbooks::PolicyError> {
    if let Some(words) = &record.caps {
        return CapSet::parse(words).map(Some);
    }
    match &record.profile {
        Some(p) => workbooks::Profile::parse(p).map(|p| Some(p.caps())),
        None => Ok(None),
    }
}

/// The caps each tool needs of a grant that names caps.
fn needs(tool: &str) -> CapSet {
    match tool {
        "shell" | "search" => CapSet::of(&[Cap::Vfs, Cap::Commands]),
        // The operator's search endpoint reads what the model wrote.
        "fetch" | "web_search" => CapSet::of(&[Cap::Browse]),
        "vfs_read" | "vfs_write" => CapSet::of(&[Cap::Vfs]),
        // The operator's image model.
        "image" => CapSet::of(&[Cap::Llm]),
        // Fixed operations on the operator's places, outside the sandbox.
        "git" | "publish" => CapSet::of(&[Cap::Exec]),
        _ => CapSet::EMPTY,
    }
}

impl RunGrant {
    /// Stored grant `id` for a run of `agent` as `tenant`: refused when
    /// it is unknown, another tenant's, for another subject than
    /// `agent:<agent>`, expired or does not read.
    pub(crate) fn live(
        engine: &workbooks::Engine,
        id: &str,
        tenant: &str,
        agent: &str,
    ) -> Result<Self, RunGrantError> {
        let subject = format!("{AGENT_SUBJECT}{agent}");
        let scope = engine.granted_scope(id, tenant, &subject)?;
        let record = engine
            .grants()
            .get(id)
            .ok_or_else(|| GrantUseError::Unknown(id.to_string()))?;
        let caps = caps_of(&record).map_err(|error| RunGrantError::Caps {
            id: id.to_string(),
            error,
        })?;
        let changed_ms = record.history.last().map_or(0, |c| c.at_ms);
        Ok(RunGrant {
            id: id.to_string(),
            caps,
            source: Source::Live {
                scope,
                book: engine.grants().clone(),
                changed_ms,
            },
            last: None,
        })
    }

    /// The grant recorded for a run being replayed: `seen` holds each
    /// recorded call's view.
    pub(crate) fn replayed(id: &str, caps: Option<CapSet>, seen: Vec<Option<GrantSeen>>) -> Self {
        RunGrant {
            id: id.to_string(),
            caps,
            source: Source::Replay(seen.into()),
            last: None,
        }
    }

    /// The grant's id.
    pub(crate) fn id(&self) -> &str {
        &self.id
    }

    /// The caps it gives (`None`: it names none).
    pub(crate) fn caps(&self) -> Option<CapSet> {
        self.caps
    }

    /// The scope the run's model requests are judged by (none in a
    /// replay: the recorded answers are played back).
    pub(crate) fn loop_scope(&self) -> Option<Scope> {
        match &self.source {
            Source::Live { scope, .. } => Some(scope.clone()),
            Source::Replay(_) => None,
        }
    }

    /// The grant for one call of `tool`: what the step line carries (when
    /// the view changed), and the scope the tool runs under, or the
    /// refusal the model reads.
    pub(crate) fn judge(&mut self, tool: &str) -> (Option<GrantSeen>, Result<Scope, String>) {
        let seen = match &mut self.source {
            Source::Live {
                scope,
                book,
                changed_ms,
            } => {
                // The record first: reading it brings the book up to date,
                // so the scopes read next are of the same state.
                let changes: Vec<Change> = book
                    .get(&self.id)
                    .map(|r| {
                        r.history
                            .into_iter()
                            .filter(|c| c.at_ms > *changed_ms)
                            .collect()
                    })
                    .unwrap_or_default();
                if let Some(c) = changes.last() {
                    *changed_ms = c.at_ms;
                }
                let now = scope.now();
                // The allowance is in the view; what has been spent of it
                // moves with every model request, and is not a change.
                let scopes = now.as_ref().ok().map(|s| ScopeSnapshot {
                    llm_spent: 0,
                    ..s.snapshot()
                });
                let view = GrantSeen {
                    id: self.id.clone(),
                    scopes,
                    changes,
                    refused: now.err().map(|e| e.to_string()),
                };
                let same = self.last.as_ref().is_some_and(|l| {
                    view.changes.is_empty() && l.scopes == view.scopes && l.refused == view.refused
                });
                (!same).then_some(view)
            }
            Source::Replay(recorded) => recorded.pop_front().flatten(),
        };
        if let Some(view) = &seen {
            self.last = Some(view.clone());
        }
        (seen, self.verdict(tool))
    }

    /// The scope `tool` runs under now, or why it may not run.
    fn verdict(&self, tool: &str) -> Result<Scope, String> {
        let last = self
            .last
            .as_ref()
            .ok_or_else(|| format!("grant {}: no view of it was recorded", self.id))?;
        if let Some(why) = &last.refused {
            return Err(why.clone());
        }
        if let Some(caps) = self.caps {
            let missing = needs(tool).minus(caps);
            if missing != CapSet::EMPTY {
                return Err(format!(
                    "grant {}: {tool} needs cap {}, which the grant does not give",
                    self.id,
                    missing.words().join(", ")
                ));
            }
        }
        match &self.source {
            Source::Live { scope, .. } => Ok(scope.clone()),
            Source::Replay(_) => {
                // The recorded view judged the call; its expiry was judged
                // then, and is not judged again against today's clock.
                let mut snapshot = last
                    .scopes
                    .clone()
                    .ok_or_else(|| format!("grant {}: no scopes were recorded", self.id))?;
                snapshot.expires_ms = None;
                Scoped::read(snapshot)
                    .map(Scope::fixed)
                    .map_err(|e| format!("grant {}: {e}", self.id))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A recorded view of grant `g-1` in force, with no scopes of its own.
    fn in_force() -> GrantSeen {
        GrantSeen {
            id: "g-1".into(),
            scopes: Some(ScopeSnapshot::of_destinations(Some("g-1"), None)),
            changes: Vec::new(),
            refused: None,
        }
    }

    #[test]
    fn a_grant_that_names_caps_refuses_each_tool_needing_one_it_does_not_give() {
        let caps = CapSet::of(&[Cap::Vfs, Cap::Commands]);
        let mut grant = RunGrant::replayed("g-1", Some(caps), vec![Some(in_force())]);
        let (seen, verdict) = grant.judge("shell");
        assert_eq!(seen, Some(in_force()));
        assert!(verdict.is_ok());
        for (tool, cap) in [
            ("fetch", "browse"),
            ("web_search", "browse"),
            ("image", "llm"),
            ("git", "exec"),
            ("publish", "exec"),
        ] {
            let (seen, verdict) = grant.judge(tool);
            assert_eq!(seen, None, "{tool}: the view did not change");
            let why = verdict.err().unwrap_or_default();
            assert_eq!(
                why,
                format!("grant g-1: {tool} needs cap {cap}, which the grant does not give")
            );
        }
    }

    #[test]
    fn a_recorded_refusal_refuses_every_tool_in_a_replay() {
        let refused = GrantSeen {
            scopes: None,
            refused: Some("grant g-1 was revoked".into()),
            ..in_force()
        };
        let mut grant = RunGrant::replayed("g-1", None, vec![Some(in_force()), Some(refused)]);
        assert!(grant.judge("vfs_read").1.is_ok());
        assert_eq!(
            grant.judge("vfs_read").1.err().as_deref(),
            Some("grant g-1 was revoked")
        );
    }
}
