//! The worker side of the node tier: pull a task, fetch and verify its
//! artifact, run it under the task's grant, record the result once, then
//! ack.

use super::{
    Bus, NODE_ACK_WAIT, NODE_CONSUMER, NODE_HEARTBEAT, NODE_MAX_ARTIFACT_BYTES, NODE_MAX_DELIVER,
    NodeResult, NodeTask, bus_error, connect,
};
use crate::artifact::Artifact;
use crate::commands::ladder::Resolved;
use crate::commands::{ArgMode, CommandEnv, CommandError, CommandOutput, CommandPolicy, Tier};
use crate::engine::Engine;
use crate::fabric::FabricError;
use crate::policy::{Cap, CapSet, Grant};
use crate::state::Output;
use async_nats::jetstream::{self, AckKind, consumer, kv};
use bytes::Bytes;
use futures::StreamExt;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;

/// What a worker has done.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WorkerStats {
    /// Tasks it ran to a recorded result.
    pub recorded: u64,
    /// Tasks it ran whose result another worker had recorded first.
    pub duplicates: u64,
}

/// A worker: pulls tasks from the bus at `url`, `concurrency` at a time,
/// and runs each on `engine` until the bus closes.
pub async fn run_worker(
    engine: &Engine,
    url: &str,
    concurrency: usize,
) -> Result<WorkerStats, FabricError> {
    let bus = Arc::new(connect(url).await?);
    let consumer: consumer::PullConsumer = bus
        .tasks
        .get_or_create_consumer(NODE_CONSUMER, worker_consumer())
        .await
        .map_err(bus_error)?;
    let concurrency = concurrency.max(1);
    // Pull no more than can run: a task waiting in this worker's buffer
    // would count down its ack wait without running.
    let messages = consumer
        .stream()
        .max_messages_per_batch(concurrency)
        .messages()
        .await
        .map_err(bus_error)?;
    let worker = format!("{}:{}", hostname(), std::process::id());
    let cache: Arc<Mutex<HashMap<String, Artifact>>> = Arc::default();
    let stats = Arc::new(Mutex::new(WorkerStats::default()));
    messages
        .for_each_concurrent(concurrency, |message| {
            let (bus, cache, stats, worker) = (bus.clone(), cache.clone(), stats.clone(), &worker);
            async move {
                let Ok(message) = message else { return };
                let recorded = work(engine, &bus, &cache, worker, &message).await;
                if let Some(first) = recorded {
                    let mut s = stats.lock().unwrap_or_else(|p| p.into_inner());
                    if first {
                        s.recorded += 1;
                    } else {
                        s.duplicates += 1;
                    }
                }
            }
        })
        .await;
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

/// Runs one task and records its result, then acks it. Returns whether
/// this worker's result was the one recorded (`None`: malformed, dropped).
async fn work(
    engine: &Engine,
    bus: &Bus,
    cache: &Mutex<HashMap<String, Artifact>>,
    worker: &str,
    message: &jetstream::Message,
) -> Option<bool> {
    let Ok(task) = serde_json::from_slice::<NodeTask>(&message.payload) else {
        // Not a task: no one can ever run it.
        let _ = message.ack_with(AckKind::Term).await;
        return None;
    };
    let heartbeat = async {
        loop {
            tokio::time::sleep(NODE_HEARTBEAT).await;
            let _ = message.ack_with(AckKind::Progress).await;
        }
    };
    let start = Instant::now();
    let outcome = tokio::select! {
        outcome = run_task(engine, bus, cache, &task) => outcome,
        () = heartbeat => unreachable!("the heartbeat never ends"),
    };
    let result = match outcome {
        Ok(out) => NodeResult {
            exit: Some(out.exit_code),
            stdout: out.stdout.to_vec(),
            stderr: out.stderr.to_vec(),
            error: None,
            dur_ms: start.elapsed().as_millis() as u64,
            worker: worker.to_string(),
        },
        Err(error) => NodeResult {
            exit: None,
            stdout: Vec::new(),
            stderr: Vec::new(),
            error: Some(error),
            dur_ms: start.elapsed().as_millis() as u64,
            worker: worker.to_string(),
        },
    };
    let value = serde_json::to_vec(&result).ok()?;
    let first = match bus.results.create(&task.id, value.into()).await {
        Ok(_) => true,
        Err(e) if e.kind() == kv::CreateErrorKind::AlreadyExists => false,
        // Not recorded: leave the task unacked, so it is delivered again.
        Err(_) => return None,
    };
    let _ = message.double_ack().await;
    Some(first)
}

/// Fetches, verifies and runs one task's artifact under the task's grant.
async fn run_task(
    engine: &Engine,
    bus: &Bus,
    cache: &Mutex<HashMap<String, Artifact>>,
    task: &NodeTask,
) -> Result<CommandOutput, CommandError> {
    let refused = |why: String| CommandError::Refused(why);
    engine
        .cadence()
        .admit(&task.tenant, "exec")
        .map_err(|d| match d {
            crate::cadence::Denial::Revoked => CommandError::Revoked,
            _ => CommandError::RateLimited,
        })?;
    let caps = CapSet::parse(&task.caps.join(" ")).map_err(|e| refused(e.to_string()))?;
    let grant = Grant::narrowed(&task.profile, caps).map_err(|e| refused(e.to_string()))?;
    let artifact = fetch(bus, cache, &task.sha256).await?;
    let env = CommandEnv {
        principal: task.tenant.clone(),
        session_id: task.session_id.clone(),
        caller_caps: grant.caps.with(Cap::Commands),
        grant,
        dirs: Vec::new(),
        policy: CommandPolicy {
            timeout: Some(Duration::from_millis(task.timeout_ms)),
            fuel: task.fuel,
            memory: task.memory,
            ..CommandPolicy::default()
        },
    };
    let resolved = Resolved {
        artifact,
        prefix: None,
        packaged: Vec::new(),
        arg_mode: ArgMode::Argv,
        tier: Tier::Instance,
        path: None,
        stubs: crate::policy::Stubs::NONE,
    };
    engine
        .run_instance(
            &env,
            &resolved,
            task.argv.clone(),
            Bytes::from(task.stdin.clone()).into(),
            Output::Capture,
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
    let got = crate::identity::sha256_hex(&bytes);
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
