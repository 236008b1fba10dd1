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
use super::{Bus, NODE_CLOCK_SKEW, NODE_GRANT_LEASE, NODE_GRANT_RENEW, NodeTask};
use async_nats::jetstream::kv;
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
    /// Until when the view stands unless a later update renews it, in
    /// milliseconds since the Unix epoch (a worker allows its clock
    /// [`NODE_CLOCK_SKEW`](super::NODE_CLOCK_SKEW) past it).
    pub valid_until_ms: u64,
}

/// The key a run's grant changes are put under: `<tenant>.<run>`, its
/// tasks' ids without their index.
pub fn grant_key(task_id: &str) -> &str {
    task_id.rsplit_once('.').map_or(task_id, |(run, _)| run)
}

/// The relay of a run's grant, stopped when dropped: every change of it
/// the submitter sees, and a renewal every [`NODE_GRANT_RENEW`], go to
/// the bucket under the run, signed. A worker takes a view for
/// [`NODE_GRANT_LEASE`] only, so once the relay stops (the run ended,
/// the submitter is gone, or someone keeps replacing its updates) the
/// run's tasks still waiting are refused every call rather than run on a
/// view no one can change any more.
pub(super) struct Relay(tokio::task::JoinHandle<()>);

impl Drop for Relay {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Until when a view sent now stands, in milliseconds since the epoch.
pub(super) fn lease_from_now() -> u64 {
    workbooks::grants::now_ms() + NODE_GRANT_LEASE.as_millis() as u64
}

/// Starts relaying `scope` under `key`, signed by `signer`, from the view
/// `first` the tasks carry; `None` for a grant held fixed, which never
/// changes.
pub(super) fn relay(
    grants: kv::Store,
    signer: Identity,
    key: String,
    scope: &Scope,
    first: ScopeView,
) -> Option<Relay> {
    if !scope.changes() {
        return None;
    }
    let mut changes = Changes::since(scope.clone(), first.clone());
    let task = async move {
        let (mut view, mut seq) = (first, 0);
        loop {
            seq += 1;
            let update = GrantUpdate {
                run: key.clone(),
                seq,
                view: view.clone(),
                valid_until_ms: lease_from_now(),
            };
            let put = match Envelope::sign(&signer, &update) {
                Ok(signed) => match serde_json::to_vec(&signed) {
                    Ok(value) => grants
                        .put(&key, value.into())
                        .await
                        .map_err(|e| e.to_string()),
                    Err(e) => Err(e.to_string()),
                },
                Err(e) => Err(e.to_string()),
            };
            // Tried again at the next change or renewal; meanwhile the
            // workers' lease runs down.
            if let Err(e) = put {
                tracing::warn!(run = %key, "node: the run's grant could not be sent: {e}");
            }
            tokio::select! {
                FeedLine { view: now, .. } = changes.next() => view = now,
                () = tokio::time::sleep(NODE_GRANT_RENEW) => {}
            }
        }
    };
    Some(Relay(tokio::spawn(task)))
}

/// The scope `task` runs under on a worker, if it carries one, and the
/// feed that keeps it current. A view that does not read refuses the task.
pub(super) fn scope_of(task: &NodeTask) -> Result<Option<(Scope, Arc<ScopeFeed>)>, String> {
    let Some(snapshot) = task.scope.clone() else {
        return Ok(None);
    };
    let first = Scoped::read(snapshot).map_err(|e| format!("the task's grant: {e}"))?;
    let feed = ScopeFeed::start_leased(first, task.scope_until_ms.map(with_skew));
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
    // Changes cannot be followed: refused from now on, never run by the
    // view the task started with.
    match bus.grants.get(&key).await {
        Ok(Some(value)) => take(&value, &key, submitter, &feed),
        Ok(None) => {}
        Err(e) => lost(&feed, &key, e.to_string()),
    }
    let watch = bus.grants.watch_with_history(&key).await;
    let submitter = submitter.to_string();
    async move {
        match watch {
            Err(e) => lost(&feed, &key, e.to_string()),
            Ok(mut watch) => {
                while let Some(entry) = watch.next().await {
                    match entry {
                        Ok(entry) => take(&entry.value, &key, &submitter, &feed),
                        Err(e) => lost(&feed, &key, e.to_string()),
                    }
                }
                lost(&feed, &key, "the bus ended the watch".into());
            }
        }
        std::future::pending().await
    }
}

/// Refuses every call under `feed` from now on: run `key`'s changes cannot
/// be followed, and the task must not run by the view it started with.
fn lost(feed: &ScopeFeed, key: &str, why: String) {
    tracing::warn!(run = %key, "node: {why}");
    feed.withdraw(&format!("its changes cannot be followed: {why}"));
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
            feed.offer_leased(u.seq, u.view, Some(with_skew(u.valid_until_ms)));
        }
        Err(why) => tracing::warn!(run = %key, "node: a grant change ignored: {why}"),
    }
}

/// A lease's end as this worker judges it: its clock may be
/// [`NODE_CLOCK_SKEW`] behind the submitter's.
fn with_skew(until_ms: u64) -> u64 {
    until_ms + NODE_CLOCK_SKEW.as_millis() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_s_key_is_its_tasks_ids_without_the_index() {
        assert_eq!(grant_key("acme.0f3a.17"), "acme.0f3a");
    }
}
