//! A task's grant on the node tier: the submitter's view of it travels in
//! the signed task ([`NodeTask::scope`]), and while the run lasts every
//! change the submitter sees (a narrowing, a widening, a revocation, the
//! expiry) is signed and put in [`NODE_GRANTS_BUCKET`] under the run
//! ([`grant_key`]); a worker running a task of that run follows the key
//! and judges each call by the latest view ([`ScopeFeed`]).
//!
//! Threat: anyone who may write the bucket (another submitter, a stranger
//! the bus lets in) putting a wider view there, or a genuine older one
//! back. A worker takes only a [`GrantUpdate`] signed by the submitter that
//! signed the task, for that run, with a sequence number past the one it
//! holds; anything else is ignored and logged. A view that does not read
//! refuses every call after it.

use super::trust::Envelope;
use super::{Bus, NodeTask, bus_error};
use crate::FabricError;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use workbooks::grants::{Changes, FeedLine, Scope, ScopeFeed, ScopeView, Scoped};
use workbooks::identity::Identity;

/// A change of a run's grant, as its submitter signs it (the body of an
/// [`Envelope`] in [`NODE_GRANTS_BUCKET`](super::NODE_GRANTS_BUCKET)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrantUpdate {
    /// The run's key ([`grant_key`]).
    pub run: String,
    /// Counts up from 1 (0 is the view in the tasks themselves).
    pub seq: u64,
    /// The grant as the submitter sees it now.
    pub view: ScopeView,
}

/// The key a run's grant changes are put under: `<tenant>.<run>`, its
/// tasks' ids without their index.
pub fn grant_key(task_id: &str) -> &str {
    task_id.rsplit_once('.').map_or(task_id, |(run, _)| run)
}

/// Puts every change of `scope` the submitter sees in the bucket under
/// `key`, signed by `signer`, from the view `first` the tasks carry, until
/// dropped. Only a grant read from the book changes; a fixed one never
/// does, and nothing is put for it.
pub(super) async fn relay(
    bus: &Bus,
    signer: &Identity,
    key: &str,
    scope: &Scope,
    first: ScopeView,
) -> Result<(), FabricError> {
    let mut changes = Changes::since(scope.clone(), first);
    loop {
        let FeedLine { seq, view } = changes.next().await;
        let update = GrantUpdate {
            run: key.to_string(),
            seq,
            view,
        };
        let signed = Envelope::sign(signer, &update).map_err(bus_error)?;
        let value = serde_json::to_vec(&signed).map_err(bus_error)?;
        bus.grants.put(key, value.into()).await.map_err(bus_error)?;
    }
}

/// The scope `task` runs under on a worker, if it carries one, and the
/// feed that keeps it current. A view that does not read refuses the task.
pub(super) fn scope_of(task: &NodeTask) -> Result<Option<(Scope, Arc<ScopeFeed>)>, String> {
    let Some(snapshot) = task.scope.clone() else {
        return Ok(None);
    };
    let first = Scoped::read(snapshot).map_err(|e| format!("the task's grant: {e}"))?;
    let feed = ScopeFeed::start(first);
    Ok(Some((Scope::fed(feed.clone()), feed)))
}

/// Follows the changes of `task`'s run in the bucket into `feed`, taking
/// only those `submitter` signed; the latest one already there is taken
/// before this returns its follower, so no call runs by an older view than
/// the bucket held when the task started.
pub(super) async fn follow(
    bus: &Bus,
    task: &NodeTask,
    submitter: &str,
    feed: Arc<ScopeFeed>,
) -> impl std::future::Future<Output = ()> {
    let key = grant_key(&task.id).to_string();
    if let Ok(Some(value)) = bus.grants.get(&key).await {
        take(&value, &key, submitter, &feed);
    }
    let watch = bus.grants.watch_with_history(&key).await;
    let submitter = submitter.to_string();
    async move {
        let Ok(mut watch) = watch else {
            tracing::warn!(run = %key, "node: the run's grant changes cannot be followed");
            return std::future::pending().await;
        };
        while let Some(entry) = watch.next().await {
            if let Ok(entry) = entry {
                take(&entry.value, &key, &submitter, &feed);
            }
        }
        std::future::pending().await
    }
}

/// Offers the update in `value` to `feed` when it is `submitter`'s, for
/// run `key`.
fn take(value: &[u8], key: &str, submitter: &str, feed: &ScopeFeed) {
    let update = serde_json::from_slice::<Envelope>(value)
        .map_err(|e| e.to_string())
        .and_then(|e| match e.signer == submitter {
            true => e.verified::<GrantUpdate>().map_err(|e| e.to_string()),
            false => Err(format!("signed by {}, not the task's submitter", e.signer)),
        })
        .and_then(|u| match u.run == key {
            true => Ok(u),
            false => Err(format!("for run {}", u.run)),
        });
    match update {
        Ok(u) => {
            feed.offer(u.seq, u.view);
        }
        Err(why) => tracing::warn!(run = %key, "node: a grant change ignored: {why}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_s_key_is_its_tasks_ids_without_the_index() {
        assert_eq!(grant_key("acme.0f3a.17"), "acme.0f3a");
    }
}
