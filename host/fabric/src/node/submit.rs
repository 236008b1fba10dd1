//! The submitting side of the node tier: sign and publish a run's tasks,
//! then wait for results from the pinned workers.

use super::trust::{self, Envelope};
use super::{
    Bus, NODE_ACK_WAIT, NODE_CONSUMER, NODE_MAX_DELIVER, NODE_MAX_TASK_LIFETIME,
    NODE_PUBLISH_BATCH, NODE_TASK_STREAM, NODE_TASK_SUBJECT, NodeResult, NodeTask, bus_error,
    connect, random_hex, unix_now,
};
use crate::{FabricError, FabricOptions};
use bytes::Bytes;
use futures::StreamExt;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::time::Duration;
use workbooks::artifact::Artifact;
use workbooks::commands::{CommandEnv, CommandError, CommandOutput};
use workbooks::engine::Admitted;
use workbooks::identity::Identity;
use workbooks::policy::Cap;

/// One task's outcome and wall time.
type Done = (Result<CommandOutput, CommandError>, Duration);

impl crate::Fabric {
    /// Runs command `name` on every task through the workers on `url`;
    /// each task's outcome and wall time, in input order.
    pub(crate) async fn fan_node(
        &self,
        env: &CommandEnv,
        cap: Cap,
        name: &str,
        tasks: Vec<(Vec<String>, Bytes)>,
        opts: &FabricOptions,
        url: &str,
    ) -> Result<Vec<Done>, FabricError> {
        // A worker is elsewhere: a host directory cannot go with the task,
        // and dropping it quietly would run the task without it.
        if let Some(dir) = env.dirs.first() {
            return Err(FabricError::Node(format!(
                "a task on the node tier cannot take preopened directories ({} here)",
                dir.host.display()
            )));
        }
        // The grant as it is now goes in every task; a grant already
        // expired or revoked sends nothing.
        let first = env.scope.as_ref().map(|s| s.snapshot());
        let scope = match &first {
            Some(Err(refusal)) => return Err(FabricError::Node(refusal.to_string())),
            Some(Ok(snapshot)) => Some(snapshot.clone()),
            None => None,
        };
        // What a worker spends on the model is not counted back into the
        // grant's allowance yet: each task would get the whole allowance.
        if let Some(tokens) = scope.as_ref().and_then(|s| s.llm_tokens) {
            return Err(FabricError::Node(format!(
                "a task on the node tier cannot carry the grant's llm allowance ({tokens} tokens) yet: a worker's spending is not counted back"
            )));
        }
        if opts.workers.is_empty() {
            return Err(FabricError::Node(
                "name the workers whose results this run takes (--worker DID; `wbx worker` prints its own)".into(),
            ));
        }
        let workers = trust::pinned(&opts.workers).map_err(bus_error)?;
        let signer = match &opts.signer {
            Some(identity) => identity.clone(),
            None => Identity::of_tenant(self.engine().keyring(), &env.tenant, None)
                .map_err(bus_error)?,
        };
        let bus = connect(url).await?;
        // Subscribed before anything is published, so no advisory is missed.
        let exceeded = bus
            .js
            .client()
            .subscribe(format!(
                "$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.{NODE_TASK_STREAM}.{NODE_CONSUMER}"
            ))
            .await
            .map_err(bus_error)?;
        let run = random_hex()?;
        // The grant's changes, and its renewals, go to the workers from
        // before the first task is published until this run ends.
        let _relay = match (&env.scope, &scope) {
            (Some(live), Some(snapshot)) => super::grant::relay(
                bus.grants.clone(),
                signer.clone(),
                format!("{}.{run}", env.tenant),
                live,
                Ok(snapshot.clone()),
            ),
            _ => None,
        };
        let leased = env.scope.as_ref().is_some_and(|s| s.changes());
        // Every result of this run, watched before any task is published:
        // each revision is seen as it is recorded, none only after another
        // replaced it.
        let watch = bus
            .results
            .watch_with_history(format!("{}.{run}.>", env.tenant))
            .await
            .map_err(bus_error)?;
        // As long as a worker accepts: a task may wait behind many others
        // (the nonce, not the expiry, stops a replay).
        let expires = unix_now() + NODE_MAX_TASK_LIFETIME.as_secs();
        let mut done: Vec<Option<Done>> = (0..tasks.len()).map(|_| None).collect();
        let mut sent = HashMap::new();
        let mut published = HashMap::new();
        let mut uploaded = None;
        let mut acks = Vec::with_capacity(NODE_PUBLISH_BATCH);
        for (index, (argv, stdin)) in tasks.into_iter().enumerate() {
            // Each task passes this engine's ladder as a local run would.
            let admitted = match self.engine().commands().admit(env, cap, name, argv, stdin) {
                Ok(admitted) => admitted,
                Err(e) => {
                    done[index] = Some((Err(e), Duration::ZERO));
                    continue;
                }
            };
            let Admitted {
                artifact,
                tier,
                argv,
                stdin,
            } = admitted;
            let sha256 = artifact.sha256_hex();
            if uploaded.as_ref() != Some(&sha256) {
                upload(&bus, &artifact).await?;
                uploaded = Some(sha256.clone());
            }
            let task = NodeTask {
                id: format!("{}.{run}.{index}", env.tenant),
                tenant: env.tenant.clone(),
                session_id: env.session_id.clone(),
                sha256,
                argv,
                stdin: stdin.to_vec(),
                profile: env.grant.profile.effective.name().to_string(),
                caps: env
                    .grant
                    .caps
                    .words()
                    .iter()
                    .map(|w| w.to_string())
                    .collect(),
                timeout_ms: opts.timeout.as_millis() as u64,
                fuel: env.policy.fuel,
                memory: env.policy.memory,
                tier,
                nonce: random_hex()?,
                expires,
                scope: scope.clone(),
                scope_until_ms: leased.then(super::grant::lease_from_now),
            };
            let envelope = Envelope::sign(&signer, &task).map_err(bus_error)?;
            let payload = serde_json::to_vec(&envelope).map_err(bus_error)?;
            let mut headers = async_nats::HeaderMap::new();
            headers.insert("Nats-Msg-Id", task.id.as_str());
            // The server's acks are awaited in batches, not one round trip
            // per task.
            let ack = bus
                .js
                .publish_with_headers(NODE_TASK_SUBJECT, headers, payload.into())
                .await
                .map_err(bus_error)?;
            acks.push((ack, task.id.clone()));
            if acks.len() == NODE_PUBLISH_BATCH {
                published.extend(confirm(&mut acks).await?);
            }
            sent.insert(task.id, (index, envelope.body_sha256()));
        }
        published.extend(confirm(&mut acks).await?);
        let sent = Sent {
            index: sent,
            by_sequence: published,
            workers,
        };
        gather(&bus, watch, sent, exceeded, &mut done, opts).await?;
        Ok(done
            .into_iter()
            .map(|d| {
                d.unwrap_or_else(|| {
                    (
                        Err(CommandError::Refused("node: no result".into())),
                        Duration::ZERO,
                    )
                })
            })
            .collect())
    }
}

/// Waits for the results of `sent` as workers record them. A task the
/// server gives up on (delivered [`NODE_MAX_DELIVER`] times, never
/// recorded) is failed by name and taken out of the stream; the rest are
/// given up on when nothing arrives for a whole task budget plus every
/// redelivery. A result not signed by a pinned worker, or not for the
/// exact task this run signed, is ignored.
async fn gather(
    bus: &Bus,
    mut watch: async_nats::jetstream::kv::Watch,
    mut sent: Sent,
    mut exceeded: async_nats::Subscriber,
    done: &mut [Option<Done>],
    opts: &FabricOptions,
) -> Result<(), FabricError> {
    let idle = (opts.timeout + NODE_ACK_WAIT) * NODE_MAX_DELIVER as u32;
    while !sent.index.is_empty() {
        let next = tokio::select! {
            entry = watch.next() => entry,
            Some(advisory) = exceeded.next() => {
                if let Some((index, deliveries, seq)) = sent.given_up(&advisory.payload) {
                    // It would sit in the work queue for ever otherwise.
                    let _ = bus.tasks.delete_message(seq).await;
                    done[index] = Some((
                        Err(CommandError::Refused(format!(
                            "node: the task was delivered {deliveries} times (at most {NODE_MAX_DELIVER}) and no worker recorded a result: every worker that took it stopped or could not record it"
                        ))),
                        Duration::ZERO,
                    ));
                }
                continue;
            }
            () = tokio::time::sleep(idle) => {
                for (_, (index, _)) in sent.index.drain() {
                    done[index] = Some((
                        Err(CommandError::Refused(format!(
                            "node: no pinned worker recorded a result within {} s (is `wbx worker --nats URL` running, and is it one of --worker?)",
                            idle.as_secs()
                        ))),
                        Duration::ZERO,
                    ));
                }
                break;
            }
        };
        let entry = match next {
            Some(Ok(entry)) => entry,
            Some(Err(e)) => return Err(bus_error(e)),
            None => break,
        };
        let Some((index, result)) = sent.accepted(&entry.value) else {
            continue;
        };
        let dur = Duration::from_millis(result.dur_ms);
        let outcome = match result.error {
            Some(error) => Err(error),
            None => Ok(CommandOutput {
                stdout: result.stdout.into(),
                stderr: result.stderr.into(),
                exit_code: result.exit.unwrap_or(-1),
                elapsed: dur,
            }),
        };
        done[index] = Some((outcome, dur));
    }
    Ok(())
}

/// The tasks of one run still waiting for a result.
struct Sent {
    /// Task id → its index in the inputs and the sha256 of its signed
    /// bytes.
    index: HashMap<String, (usize, String)>,
    /// Stream sequence → task id, to read the server's advisories.
    by_sequence: HashMap<u64, String>,
    /// The workers whose results count.
    workers: BTreeMap<String, ()>,
}

impl Sent {
    /// A recorded value as this run's result: signed by a pinned worker,
    /// for a task still waiting, naming exactly the bytes this run signed
    /// for it. Anything else is ignored (and logged).
    fn accepted(&mut self, value: &[u8]) -> Option<(usize, NodeResult)> {
        let envelope: Envelope = serde_json::from_slice(value).ok()?;
        if !self.workers.contains_key(&envelope.signer) {
            tracing::warn!(signer = %envelope.signer, "node: a result from a worker this run does not pin; ignored");
            return None;
        }
        let result: NodeResult = match envelope.verified() {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(error = %e, "node: a result that does not verify; ignored");
                return None;
            }
        };
        let (index, sha) = self.index.get(&result.task)?;
        if *sha != result.task_sha256 {
            tracing::warn!(task = %result.task, "node: a result for other task bytes; ignored");
            return None;
        }
        let index = *index;
        self.index.remove(&result.task);
        Some((index, result))
    }

    /// Reads a max-deliveries advisory: the index, delivery count and
    /// stream sequence of a task of this run that is still waiting.
    fn given_up(&mut self, advisory: &[u8]) -> Option<(usize, u64, u64)> {
        #[derive(Deserialize)]
        struct MaxDeliveries {
            stream_seq: u64,
            deliveries: u64,
        }
        let said: MaxDeliveries = serde_json::from_slice(advisory).ok()?;
        let id = self.by_sequence.get(&said.stream_seq)?;
        let (index, _) = self.index.remove(id)?;
        Some((index, said.deliveries, said.stream_seq))
    }
}

/// Waits for the server to acknowledge every task in `acks`; each task's
/// stream sequence → its id.
async fn confirm(
    acks: &mut Vec<(async_nats::jetstream::context::PublishAckFuture, String)>,
) -> Result<Vec<(u64, String)>, FabricError> {
    let (futures, ids): (Vec<_>, Vec<_>) = acks.drain(..).unzip();
    let acked = futures::future::try_join_all(futures.into_iter().map(|ack| ack.into_future()))
        .await
        .map_err(bus_error)?;
    Ok(acked.into_iter().map(|a| a.sequence).zip(ids).collect())
}

/// Puts `artifact` in the object store under its sha256 unless it is
/// there already.
async fn upload(bus: &Bus, artifact: &Artifact) -> Result<(), FabricError> {
    let name = artifact.sha256_hex();
    if bus.artifacts.info(&name).await.is_ok() {
        return Ok(());
    }
    let mut bytes = artifact.bytes();
    bus.artifacts
        .put(name.as_str(), &mut bytes)
        .await
        .map_err(bus_error)?;
    Ok(())
}
