//! The worker side of the node tier: pull a task, check who signed it and
//! that it may run ([`super::trust`]), fetch and verify its artifact, run
//! it under the task's grant within this worker's ceilings, record a
//! signed result, then ack.

use super::trust::{Envelope, Refusal, check_expiry};
use super::{
    Bus, NODE_ACK_WAIT, NODE_CONSUMER, NODE_HEARTBEAT, NODE_MAX_ARTIFACT_BYTES, NODE_MAX_DELIVER,
    NODE_PULL_HEARTBEAT, NODE_REPULL_PAUSE, NodeResult, NodeTask, Trust, bus_error, connect,
    result_key, unix_now,
};
use crate::FabricError;
use async_nats::jetstream::{self, AckKind, consumer, kv};
use bytes::Bytes;
use consumer::pull::MessagesErrorKind;
use futures::StreamExt;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;
use workbooks::artifact::Artifact;
use workbooks::cadence::Denial;
use workbooks::commands::{CommandEnv, CommandError, CommandOutput, CommandPolicy};
use workbooks::engine::Engine;
use workbooks::identity::Identity;
use workbooks::policy::{Cap, CapSet, Grant};

/// What a worker has done.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WorkerStats {
    /// Tasks it ran to a recorded result.
    pub recorded: u64,
    /// Tasks it ran whose result it had recorded already (a redelivery).
    pub duplicates: u64,
    /// Tasks it refused (unsigned, unknown signer, expired, replayed, a
    /// tenant or profile the signer may not use).
    pub refused: u64,
}

/// What a worker accepts and within what it runs it.
#[derive(Debug, Clone)]
pub struct WorkerPolicy {
    /// The submitters whose tasks it runs.
    pub trust: Trust,
    /// The key it signs its results with (its DID is what submitters pin).
    pub identity: Identity,
    /// The longest a task may run here, whatever it asks.
    pub max_timeout: Duration,
    /// The most fuel a task may burn here.
    pub max_fuel: u64,
    /// The most memory a task may take here, in bytes.
    pub max_memory: usize,
}

/// A worker: pulls tasks from the bus at `url`, `concurrency` at a time,
/// and runs each on `engine` under `policy` until `stop` completes, then
/// says what it did (tasks still running are dropped). It is an error only
/// when the bus cannot be reached or pulled from.
pub async fn run_worker(
    engine: &Engine,
    url: &str,
    concurrency: usize,
    policy: &WorkerPolicy,
    stop: impl std::future::Future<Output = ()>,
) -> Result<WorkerStats, FabricError> {
    tokio::pin!(stop);
    let bus = Arc::new(connect(url).await?);
    let consumer: consumer::PullConsumer = bus
        .tasks
        .get_or_create_consumer(NODE_CONSUMER, worker_consumer())
        .await
        .map_err(bus_error)?;
    let concurrency = concurrency.max(1);
    let host = format!("{}:{}", hostname(), std::process::id());
    let cache: Arc<Mutex<HashMap<String, Artifact>>> = Arc::default();
    let stats = Arc::new(Mutex::new(WorkerStats::default()));
    // When its pull stream ends (the connection or the server dropped
    // it) or goes silent (no task and no idle heartbeat for twice
    // NODE_PULL_HEARTBEAT: the server no longer holds its pull), a worker
    // pulls again: only `stop` ends it.
    loop {
        // Pull no more than can run: a task waiting in this worker's
        // buffer would count down its ack wait without running.
        let messages = consumer
            .stream()
            .max_messages_per_batch(concurrency)
            .heartbeat(NODE_PULL_HEARTBEAT)
            .messages()
            .await
            .map_err(bus_error)?;
        let live = messages.take_while(|message| {
            let silent =
                matches!(message, Err(e) if e.kind() == MessagesErrorKind::MissingHeartbeat);
            if silent {
                tracing::warn!("node: the task stream missed its heartbeats");
            }
            std::future::ready(!silent)
        });
        let pulled = live.for_each_concurrent(concurrency, |message| {
            let (bus, cache, stats, host) = (bus.clone(), cache.clone(), stats.clone(), &host);
            async move {
                let message = match message {
                    Ok(message) => message,
                    Err(e) => {
                        tracing::warn!("node: pulling tasks: {e}");
                        return;
                    }
                };
                let done = work(engine, &bus, &cache, policy, host, &message).await;
                let mut s = stats.lock().unwrap_or_else(|p| p.into_inner());
                match done {
                    Some(Worked::Recorded) => s.recorded += 1,
                    Some(Worked::Duplicate) => s.duplicates += 1,
                    Some(Worked::Refused) => s.refused += 1,
                    None => {}
                }
            }
        });
        tokio::select! {
            () = pulled => {}
            () = &mut stop => break,
        }
        tracing::warn!("node: the task stream ended; pulling again");
        tokio::select! {
            () = tokio::time::sleep(NODE_REPULL_PAUSE) => {}
            () = &mut stop => break,
        }
    }
    let stats = stats.lock().unwrap_or_else(|p| p.into_inner()).clone();
    Ok(stats)
}

/// The durable pull consumer every worker shares: explicit acks, a task
/// redelivered after [`NODE_ACK_WAIT`] without one, at most
/// [`NODE_MAX_DELIVER`] deliveries.
pub fn worker_consumer() -> consumer::pull::Config {
    consumer::pull::Config {
        durable_name: Some(NODE_CONSUMER.into()),
        ack_policy: consumer::AckPolicy::Explicit,
        ack_wait: NODE_ACK_WAIT,
        max_deliver: NODE_MAX_DELIVER,
        ..Default::default()
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "worker".into())
}

/// What became of one message.
enum Worked {
    Recorded,
    Duplicate,
    Refused,
}

/// Checks a message and, when its task may run here, runs it and records
/// its result, then acks it. `None`: left for another delivery.
async fn work(
    engine: &Engine,
    bus: &Bus,
    cache: &Mutex<HashMap<String, Artifact>>,
    policy: &WorkerPolicy,
    host: &str,
    message: &jetstream::Message,
) -> Option<Worked> {
    let envelope = serde_json::from_slice::<Envelope>(&message.payload);
    let (envelope, task) = match envelope {
        Err(e) => {
            refuse(engine, "", &Refusal::Malformed(e.to_string()));
            // Not a task: no one can ever run it.
            let _ = message.ack_with(AckKind::Term).await;
            return Some(Worked::Refused);
        }
        Ok(envelope) => match admitted(bus, policy, &envelope, message).await {
            Ok(task) => (envelope, task),
            // The nonce store could not be asked: delivered again later.
            Err(Rejected::Retry) => return None,
            Err(Rejected::Refused(refusal, task)) => {
                let tenant = task.as_ref().map_or("", |t| t.tenant.as_str());
                refuse(engine, tenant, &refusal);
                // The submitter of a task that parsed reads why, under the
                // key of the bytes it sent (no one else's result); not for a
                // replay, whose bytes are the first copy's, which this or
                // another worker runs and answers.
                let answered = !matches!(refusal, Refusal::Replayed(_));
                if let Some(task) = task.filter(|_| answered) {
                    let error = CommandError::Refused(format!("node: task refused: {refusal}"));
                    let result = finished(&task, &envelope, host, Err(error), Duration::ZERO);
                    let _ = record(bus, policy, &task, &result, Record::IfAbsent).await;
                }
                let _ = message.ack_with(AckKind::Term).await;
                return Some(Worked::Refused);
            }
        },
    };
    let key = result_key(&task.id, &policy.identity.did);
    if let Ok(Some(held)) = bus.results.get(&key).await
        && answered_already(&held, policy, &envelope)
    {
        // A redelivery of a task this worker already answered.
        let _ = message.double_ack().await;
        return Some(Worked::Duplicate);
    }
    let heartbeat = async {
        loop {
            tokio::time::sleep(NODE_HEARTBEAT).await;
            let _ = message.ack_with(AckKind::Progress).await;
        }
    };
    let start = Instant::now();
    let outcome = match super::grant::scope_of(&task) {
        Err(why) => Err(CommandError::Refused(format!("node: {why}"))),
        Ok(None) => tokio::select! {
            outcome = run_task(engine, bus, cache, policy, &task, None) => outcome,
            () = heartbeat => unreachable!("the heartbeat never ends"),
        },
        // The grant's changes are followed while the task runs.
        Ok(Some((scope, feed))) => {
            let follow = super::grant::follow(bus, &task, &envelope.signer, feed).await;
            tokio::select! {
                outcome = run_task(engine, bus, cache, policy, &task, Some(scope)) => outcome,
                () = heartbeat => unreachable!("the heartbeat never ends"),
                () = follow => unreachable!("following never ends"),
            }
        }
    };
    let result = finished(&task, &envelope, host, outcome, start.elapsed());
    // Not recorded: leave the task unacked, so it is delivered again.
    record(bus, policy, &task, &result, Record::Always)
        .await
        .ok()?;
    let _ = message.double_ack().await;
    Some(Worked::Recorded)
}

/// Why a task does not run now.
enum Rejected {
    /// Refused for good, with the task when it parsed.
    Refused(Refusal, Option<Box<NodeTask>>),
    /// The bus could not say whether it may run: try it again later.
    Retry,
}

/// The task in `envelope`, if it may run here: signed, by a pinned
/// submitter for a tenant and profile it may use, unexpired, and never
/// claimed by another message.
async fn admitted(
    bus: &Bus,
    policy: &WorkerPolicy,
    envelope: &Envelope,
    message: &jetstream::Message,
) -> Result<NodeTask, Rejected> {
    // The signature first: nothing of an unverified body is believed.
    let task: NodeTask = envelope
        .verified()
        .map_err(|r| Rejected::Refused(r, None))?;
    let fail = |r: Refusal| Rejected::Refused(r, Some(Box::new(task.clone())));
    policy
        .trust
        .admits(&envelope.signer, &task.tenant, &task.profile)
        .map_err(fail)?;
    check_expiry(task.expires, unix_now()).map_err(fail)?;
    // The nonce is claimed by this message's stream sequence: the same
    // message delivered again is not a replay, another message is.
    let seq = message
        .info()
        .map(|i| i.stream_sequence)
        .map_err(|_| Rejected::Retry)?;
    let claim = Bytes::from(seq.to_string());
    match bus.nonces.create(&task.nonce, claim.clone()).await {
        Ok(_) => Ok(task),
        Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => {
            match bus.nonces.get(&task.nonce).await {
                Ok(Some(held)) if held == claim => Ok(task),
                Ok(_) => Err(fail(Refusal::Replayed(task.nonce.clone()))),
                Err(_) => Err(Rejected::Retry),
            }
        }
        Err(_) => Err(Rejected::Retry),
    }
}

/// Whether `held` is this worker's own signed result for the task in
/// `envelope` (anything else under its key is someone else's, and is
/// written over).
fn answered_already(held: &[u8], policy: &WorkerPolicy, envelope: &Envelope) -> bool {
    serde_json::from_slice::<Envelope>(held)
        .ok()
        .filter(|e| e.signer == policy.identity.did)
        .and_then(|e| e.verified::<NodeResult>().ok())
        .is_some_and(|r| r.task_sha256 == envelope.body_sha256())
}

/// Audits a refusal on this worker, by name.
fn refuse(engine: &Engine, tenant: &str, refusal: &Refusal) {
    let tenant = if tenant.is_empty() { "node" } else { tenant };
    engine.cadence().deny(
        tenant,
        "node",
        Denial::Guard(refusal.reason()),
        &refusal.to_string(),
    );
}

/// The result of `task` as this worker records it.
fn finished(
    task: &NodeTask,
    envelope: &Envelope,
    host: &str,
    outcome: Result<CommandOutput, CommandError>,
    dur: Duration,
) -> NodeResult {
    let (exit, stdout, stderr, error) = match outcome {
        Ok(out) => (
            Some(out.exit_code),
            out.stdout.to_vec(),
            out.stderr.to_vec(),
            None,
        ),
        Err(e) => (None, Vec::new(), Vec::new(), Some(e)),
    };
    NodeResult {
        task: task.id.clone(),
        task_sha256: envelope.body_sha256(),
        exit,
        stdout,
        stderr,
        error,
        dur_ms: dur.as_millis() as u64,
        host: host.to_string(),
    }
}

/// Whether a record may replace what is held under its key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Record {
    /// A result of a task that ran: it replaces anything held.
    Always,
    /// A refusal: never over anything held. The key names a task id the
    /// refused body chose, so a refusal must not replace the result of
    /// the task that really has that id (or this worker's own result of a
    /// task delivered again after its expiry).
    IfAbsent,
}

/// Signs and records `result` under this worker's key for `task`.
async fn record(
    bus: &Bus,
    policy: &WorkerPolicy,
    task: &NodeTask,
    result: &NodeResult,
    how: Record,
) -> Result<(), FabricError> {
    let signed = Envelope::sign(&policy.identity, result).map_err(bus_error)?;
    let value = serde_json::to_vec(&signed).map_err(bus_error)?;
    let key = result_key(&task.id, &policy.identity.did);
    match how {
        Record::Always => {
            bus.results
                .put(key, value.into())
                .await
                .map_err(bus_error)?;
        }
        Record::IfAbsent => match bus.results.create(key, value.into()).await {
            Ok(_) => {}
            Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => {}
            Err(e) => return Err(bus_error(e)),
        },
    }
    Ok(())
}

/// Fetches, verifies and runs one task's artifact under the task's grant
/// (its caps, and its scopes as `scope` holds them now), within this
/// worker's ceilings and at no weaker tier than the command's.
async fn run_task(
    engine: &Engine,
    bus: &Bus,
    cache: &Mutex<HashMap<String, Artifact>>,
    policy: &WorkerPolicy,
    task: &NodeTask,
    scope: Option<workbooks::grants::Scope>,
) -> Result<CommandOutput, CommandError> {
    let refused = |why: String| CommandError::Refused(why);
    let caps = CapSet::parse(&task.caps.join(" ")).map_err(|e| refused(e.to_string()))?;
    let grant = Grant::narrowed(&task.profile, caps).map_err(|e| refused(e.to_string()))?;
    let artifact = fetch(bus, cache, &task.sha256).await?;
    let memory = task
        .memory
        .unwrap_or_else(|| grant.profile.effective.memory_bytes())
        .min(policy.max_memory);
    let env = CommandEnv {
        tenant: task.tenant.clone(),
        session_id: task.session_id.clone(),
        caller_caps: grant.caps.with(Cap::Commands),
        grant,
        dirs: Vec::new(),
        scope,
        policy: CommandPolicy {
            timeout: Some(Duration::from_millis(task.timeout_ms).min(policy.max_timeout)),
            fuel: Some(
                task.fuel
                    .unwrap_or(workbooks::limits::COMMAND_FUEL)
                    .min(policy.max_fuel),
            ),
            memory: Some(memory),
            ..CommandPolicy::default()
        },
    };
    // Revocation and the rate limit are checked as the engine runs it; an
    // os_process command runs in a child here too, from a copy of its
    // bytes in this worker's own store.
    engine
        .commands()
        .run_sent(
            &env,
            artifact,
            task.tier,
            task.argv.clone(),
            Bytes::from(task.stdin.clone()),
        )
        .await
}

/// The artifact named `sha256`, from this worker's cache or the object
/// store, refused unless its bytes hash to that name.
async fn fetch(
    bus: &Bus,
    cache: &Mutex<HashMap<String, Artifact>>,
    sha256: &str,
) -> Result<Artifact, CommandError> {
    if let Some(a) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(sha256) {
        return Ok(a.clone());
    }
    let fetch_failed = |e: String| CommandError::Refused(format!("node: artifact {sha256}: {e}"));
    let object = bus
        .artifacts
        .get(sha256)
        .await
        .map_err(|e| fetch_failed(e.to_string()))?;
    let mut bytes = Vec::new();
    object
        .take(NODE_MAX_ARTIFACT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .await
        .map_err(|e| fetch_failed(e.to_string()))?;
    if bytes.len() > NODE_MAX_ARTIFACT_BYTES {
        return Err(fetch_failed(format!(
            "over {NODE_MAX_ARTIFACT_BYTES} bytes"
        )));
    }
    let got = workbooks::identity::sha256_hex(&bytes);
    if got != sha256 {
        return Err(CommandError::Integrity(format!(
            "the object store's bytes for {sha256} hash to {got}; refused before compiling"
        )));
    }
    let artifact = Artifact::from_bytes(bytes).map_err(|e| fetch_failed(e.to_string()))?;
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(sha256.to_string(), artifact.clone());
    Ok(artifact)
}
