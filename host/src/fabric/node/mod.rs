//! The node tier: fabric tasks carried by NATS JetStream to `wbx worker`
//! processes, on this machine or others.
//!
//! Tasks go to a work-queue stream ([`NODE_TASK_STREAM`]) with one durable
//! pull consumer shared by every worker; the artifact goes to an object
//! store ([`NODE_ARTIFACTS_BUCKET`]) under its sha256; each result goes to a
//! key-value bucket ([`NODE_RESULTS_BUCKET`]) under the task's id
//! (`<tenant>.<run>.<index>`). A worker heartbeats a task while it runs,
//! records its result with a create (which fails if the key exists), and
//! only then acks the task; a worker that dies stops heartbeating and its
//! task is redelivered to another after [`NODE_ACK_WAIT`]. After
//! [`NODE_MAX_DELIVER`] deliveries the server gives up on it and says so
//! in an advisory; the submitter, subscribed before it publishes, fails
//! that task by name and deletes it from the stream.
//!
//! Threat: the object store is shared and anyone on the bus could replace
//! an object, so a worker hashes what it fetched and refuses bytes that do
//! not match the sha256 the task names (`artifact_integrity`), before
//! anything is compiled. A redelivered task may run twice, but its result
//! is recorded exactly once: the first create wins and a later one is
//! dropped. A task carries its tenant, grant and budgets; the worker runs
//! it under them in a fresh store with its own engine's cadence
//! (revocation, rate limit), never with more than the task's grant.

use super::{FabricError, FabricOptions};
use crate::artifact::Artifact;
use crate::commands::{CommandEnv, CommandError, CommandOutput};
use crate::engine::Engine;
use crate::policy::Cap;
use async_nats::jetstream::{self, kv, object_store, stream};
use bytes::Bytes;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::time::Duration;

/// The work-queue stream of tasks.
pub const NODE_TASK_STREAM: &str = "WB_TASKS";
/// The subject tasks are published on.
pub const NODE_TASK_SUBJECT: &str = "wb.tasks";
/// The durable consumer every worker pulls from.
pub const NODE_CONSUMER: &str = "wb-workers";
/// The key-value bucket of results, by task id.
pub const NODE_RESULTS_BUCKET: &str = "wb-results";
/// The object store of artifacts, by sha256.
pub const NODE_ARTIFACTS_BUCKET: &str = "wb-artifacts";
/// A task whose worker stops acknowledging it goes to another worker after
/// this long.
pub const NODE_ACK_WAIT: Duration = Duration::from_secs(10);
/// How often a worker tells the server a task is still running.
pub const NODE_HEARTBEAT: Duration = Duration::from_secs(2);
/// Deliveries of one task at most: a task that takes down every worker
/// that tries it stops here instead of circling for ever.
pub const NODE_MAX_DELIVER: i64 = 5;
/// Tasks published before their acknowledgements are awaited together.
pub const NODE_PUBLISH_BATCH: usize = 256;
/// Largest artifact a worker fetches: stops a replaced object from making
/// a worker read without bound.
pub const NODE_MAX_ARTIFACT_BYTES: usize = 256 << 20;

mod worker;

pub use worker::{WorkerStats, run_worker, worker_consumer};

/// Bytes in JSON as base64 text.
mod b64 {
    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&STANDARD.encode(bytes))
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(d)?;
        STANDARD.decode(text).map_err(serde::de::Error::custom)
    }
}

/// One task on the bus.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct NodeTask {
    id: String,
    tenant: String,
    session_id: String,
    sha256: String,
    argv: Vec<String>,
    #[serde(with = "b64")]
    stdin: Vec<u8>,
    profile: String,
    caps: Vec<String>,
    timeout_ms: u64,
    fuel: Option<u64>,
    memory: Option<usize>,
}

/// One result in the bucket.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct NodeResult {
    exit: Option<i32>,
    #[serde(with = "b64")]
    stdout: Vec<u8>,
    #[serde(with = "b64")]
    stderr: Vec<u8>,
    error: Option<CommandError>,
    dur_ms: u64,
    worker: String,
}

/// Why the bus could not be used.
fn bus_error(e: impl std::fmt::Display) -> FabricError {
    FabricError::Node(e.to_string())
}

/// The stream, buckets and store, created on first use.
struct Bus {
    js: jetstream::Context,
    tasks: stream::Stream,
    results: kv::Store,
    artifacts: object_store::ObjectStore,
}

async fn connect(url: &str) -> Result<Bus, FabricError> {
    let client = async_nats::connect(url)
        .await
        .map_err(|e| FabricError::Node(format!("cannot reach NATS at {url}: {e}")))?;
    let js = jetstream::new(client);
    let tasks = js
        .get_or_create_stream(stream::Config {
            name: NODE_TASK_STREAM.into(),
            subjects: vec![NODE_TASK_SUBJECT.into()],
            retention: stream::RetentionPolicy::WorkQueue,
            duplicate_window: Duration::from_secs(120),
            ..Default::default()
        })
        .await
        .map_err(|e| FabricError::Node(format!("stream {NODE_TASK_STREAM}: {e}")))?;
    // The bucket's stream is made here rather than by `create_key_value`,
    // which first asks for account details nats-server 2.9 does not send.
    js.get_or_create_stream(stream::Config {
        name: format!("KV_{NODE_RESULTS_BUCKET}"),
        subjects: vec![format!("$KV.{NODE_RESULTS_BUCKET}.>")],
        max_messages_per_subject: 1,
        discard: stream::DiscardPolicy::New,
        allow_rollup: true,
        deny_delete: true,
        allow_direct: true,
        ..Default::default()
    })
    .await
    .map_err(|e| FabricError::Node(format!("bucket {NODE_RESULTS_BUCKET}: {e}")))?;
    let results = js
        .get_key_value(NODE_RESULTS_BUCKET)
        .await
        .map_err(|e| FabricError::Node(format!("bucket {NODE_RESULTS_BUCKET}: {e}")))?;
    let artifacts = match js.get_object_store(NODE_ARTIFACTS_BUCKET).await {
        Ok(store) => store,
        Err(_) => js
            .create_object_store(object_store::Config {
                bucket: NODE_ARTIFACTS_BUCKET.into(),
                ..Default::default()
            })
            .await
            .map_err(|e| FabricError::Node(format!("store {NODE_ARTIFACTS_BUCKET}: {e}")))?,
    };
    Ok(Bus {
        js,
        tasks,
        results,
        artifacts,
    })
}

/// A fresh run id: 16 random bytes in hex.
fn run_id() -> Result<String, FabricError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(bus_error)?;
    Ok(hex::encode(bytes))
}

impl Engine {
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
    ) -> Result<Vec<(Result<CommandOutput, CommandError>, Duration)>, FabricError> {
        // A worker is elsewhere: a host directory cannot go with the task,
        // and dropping it quietly would run the task without it.
        if let Some(dir) = env.dirs.first() {
            return Err(FabricError::Node(format!(
                "a task on the node tier cannot take preopened directories ({} here)",
                dir.host.display()
            )));
        }
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
        let run = run_id()?;
        let mut done: Vec<Option<(Result<CommandOutput, CommandError>, Duration)>> =
            (0..tasks.len()).map(|_| None).collect();
        let mut sent = HashMap::new();
        let mut published = HashMap::new();
        let mut uploaded = None;
        let mut acks = Vec::with_capacity(NODE_PUBLISH_BATCH);
        for (index, (argv, stdin)) in tasks.into_iter().enumerate() {
            // Each task passes this engine's ladder as a local run would.
            let (resolved, _slot) = match self.ladder().admit(env, cap, name) {
                Ok(admitted) => admitted,
                Err(e) => {
                    done[index] = Some((Err(e), Duration::ZERO));
                    continue;
                }
            };
            let (argv, stdin) = match crate::engine::shape(&resolved, argv, stdin) {
                Ok(shaped) => shaped,
                Err(e) => {
                    done[index] = Some((Err(e), Duration::ZERO));
                    continue;
                }
            };
            let sha256 = resolved.artifact.sha256_hex();
            if uploaded.as_ref() != Some(&sha256) {
                upload(&bus, &resolved.artifact).await?;
                uploaded = Some(sha256.clone());
            }
            let task = NodeTask {
                id: format!("{}.{run}.{index}", env.principal),
                tenant: env.principal.clone(),
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
            };
            let payload = serde_json::to_vec(&task).map_err(bus_error)?;
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
            sent.insert(task.id, index);
        }
        published.extend(confirm(&mut acks).await?);
        let sent = Sent {
            index: sent,
            by_sequence: published,
        };
        self.gather(&bus, env, &run, sent, exceeded, &mut done, opts)
            .await?;
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

    /// Waits for the results of `sent` as workers record them. A task the
    /// server gives up on (delivered [`NODE_MAX_DELIVER`] times, never
    /// recorded) is failed by name and taken out of the stream; the rest
    /// are given up on when nothing arrives for a whole task budget plus
    /// every redelivery.
    #[expect(
        clippy::too_many_arguments,
        reason = "one private step of fan_node, called once"
    )]
    async fn gather(
        &self,
        bus: &Bus,
        env: &CommandEnv,
        run: &str,
        mut sent: Sent,
        mut exceeded: async_nats::Subscriber,
        done: &mut [Option<(Result<CommandOutput, CommandError>, Duration)>],
        opts: &FabricOptions,
    ) -> Result<(), FabricError> {
        let idle = (opts.timeout + NODE_ACK_WAIT) * NODE_MAX_DELIVER as u32;
        let mut watch = bus
            .results
            .watch_with_history(format!("{}.{run}.>", env.principal))
            .await
            .map_err(bus_error)?;
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
                    for (_, index) in sent.index.drain() {
                        done[index] = Some((
                            Err(CommandError::Refused(format!(
                                "node: no worker recorded a result within {} s (is `wbx worker --nats URL` running?)",
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
            let Some(index) = sent.index.remove(&entry.key) else {
                continue;
            };
            let result: NodeResult = serde_json::from_slice(&entry.value).map_err(bus_error)?;
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
}

/// The tasks of one run still waiting for a result.
struct Sent {
    /// Task id → its index in the inputs.
    index: HashMap<String, usize>,
    /// Stream sequence → task id, to read the server's advisories.
    by_sequence: HashMap<u64, String>,
}

impl Sent {
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
        let index = self.index.remove(id)?;
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
