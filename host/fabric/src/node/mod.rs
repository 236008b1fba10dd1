//! The node tier: fabric tasks carried by NATS JetStream to `wbx worker`
//! processes, on this machine or others.
//!
//! Tasks go to a work-queue stream ([`NODE_TASK_STREAM`]) with one durable
//! pull consumer shared by every worker; the artifact goes to an object
//! store ([`NODE_ARTIFACTS_BUCKET`]) under its sha256; each result goes to a
//! key-value bucket ([`NODE_RESULTS_BUCKET`]) under the task's id and the
//! worker's ([`result_key`]). A worker heartbeats a task while it runs,
//! records its result, and only then acks the task; a worker that dies
//! stops heartbeating and its task is redelivered to another after
//! [`NODE_ACK_WAIT`]. After [`NODE_MAX_DELIVER`] deliveries the server gives
//! up on it and says so in an advisory; the submitter, subscribed before it
//! publishes, fails that task by name and deletes it from the stream.
//!
//! Trust ([`trust`]): every task is signed by its submitter, with a nonce
//! and an expiry, and a worker runs only what a submitter it pins signed,
//! for the tenants and profiles that submitter may use, once, under the
//! worker's own ceilings on time, fuel and memory, at no weaker tier than
//! the command's registered one. Every result is signed by its worker and
//! names the task it answers; a submitter takes results only from workers
//! it pins. Who may publish or read which subjects at all is the bus's own
//! authentication (see docs/fabric.md, the node tier), which also keeps
//! tasks' stdin from other users of the bus.
//!
//! Threat: the object store is shared and anyone on the bus could replace
//! an object, so a worker hashes what it fetched and refuses bytes that do
//! not match the sha256 the task names (`artifact_integrity`), before
//! anything is compiled.

use async_nats::jetstream::{self, kv, object_store, stream};
use serde::{Deserialize, Serialize};
use std::time::Duration;
use workbooks::commands::{CommandError, Tier};

mod grant;
mod submit;
pub mod trust;
mod worker;

use super::FabricError;
pub use grant::{GrantUpdate, grant_key};
pub use trust::{Envelope, Refusal, Submitter, Trust, TrustError};
pub use worker::{WorkerPolicy, WorkerStats, run_worker, worker_consumer};

/// The work-queue stream of tasks.
pub const NODE_TASK_STREAM: &str = "WB_TASKS";
/// The subject tasks are published on.
pub const NODE_TASK_SUBJECT: &str = "wb.tasks";
/// The durable consumer every worker pulls from.
pub const NODE_CONSUMER: &str = "wb-workers";
/// The key-value bucket of results, by task id and worker.
pub const NODE_RESULTS_BUCKET: &str = "wb-node-results";
/// The key-value bucket of the task nonces workers have claimed.
pub const NODE_NONCES_BUCKET: &str = "wb-node-nonces";
/// The key-value bucket of runs' grant changes, by run ([`grant_key`]).
pub const NODE_GRANTS_BUCKET: &str = "wb-node-grants";
/// How long a worker takes a view of a run's grant for, past which, with
/// no later one, every call of the run's tasks is refused: bounds how long
/// a task runs on a view its submitter can no longer change (it stopped,
/// or someone replaced its updates in the bucket), plus the clock skew.
pub const NODE_GRANT_LEASE: Duration = Duration::from_secs(30);
/// How often a submitter renews its run's grant view when it has not
/// changed: a few times within a lease, so one lost update costs nothing.
pub const NODE_GRANT_RENEW: Duration = Duration::from_secs(10);
/// The object store of artifacts, by sha256.
pub const NODE_ARTIFACTS_BUCKET: &str = "wb-artifacts";
/// A task whose worker stops acknowledging it goes to another worker after
/// this long.
pub const NODE_ACK_WAIT: Duration = Duration::from_secs(10);
/// How long a worker waits before pulling again when its pull stream
/// ended: stops a server that keeps dropping it from being asked in a
/// tight loop.
pub const NODE_REPULL_PAUSE: Duration = Duration::from_secs(1);
/// How often the server tells a worker's idle pull it is still there: a
/// worker that hears nothing for twice this long pulls again, so a pull
/// the server forgot (a restart, a lost request) cannot stall it for ever.
pub const NODE_PULL_HEARTBEAT: Duration = Duration::from_secs(5);
/// How long a client that could not make a stream, bucket or store looks
/// for the one another client was making at the same moment, before the
/// error is the answer.
pub const NODE_MADE_ELSEWHERE_WAIT: Duration = Duration::from_secs(2);
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
/// The longest a signed task stays valid: a worker refuses one whose
/// expiry is further off, and keeps claimed nonces this long, so a task
/// captured off the bus cannot be replayed after its nonce is forgotten.
pub const NODE_MAX_TASK_LIFETIME: Duration = Duration::from_secs(3600);
/// How far a worker's clock may be from its submitter's: an expiry is
/// honoured this much either way. Stops a worker a second behind from
/// refusing every task as too far off, and one a second ahead from
/// refusing fresh ones as expired.
pub const NODE_CLOCK_SKEW: Duration = Duration::from_secs(60);

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

/// One task, as its submitter signs it (the body of an [`Envelope`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeTask {
    /// `<tenant>.<run>.<index>`.
    pub id: String,
    /// The tenant it runs as.
    pub tenant: String,
    /// The session (instance) id it runs as.
    pub session_id: String,
    /// The artifact's sha256 (hex), its name in the object store.
    pub sha256: String,
    /// Its arguments.
    pub argv: Vec<String>,
    /// Its stdin.
    #[serde(with = "b64")]
    pub stdin: Vec<u8>,
    /// The profile it runs under.
    pub profile: String,
    /// Its caps (within the profile).
    pub caps: Vec<String>,
    /// Its wall-clock budget, in milliseconds (the worker clamps it).
    pub timeout_ms: u64,
    /// Its fuel (the worker clamps it).
    pub fuel: Option<u64>,
    /// Its memory cap, in bytes (the worker clamps it).
    pub memory: Option<usize>,
    /// The tier the command was registered at: the worker runs it at no
    /// weaker one.
    pub tier: Tier,
    /// Sixteen random bytes, hex: the task runs once.
    pub nonce: String,
    /// Unix seconds after which no worker runs it.
    pub expires: u64,
    /// The grant's scopes as the submitter saw them when it signed the
    /// task (none: unscoped); later changes follow through
    /// [`NODE_GRANTS_BUCKET`]. A worker that does not know this field
    /// refuses the task rather than run it unscoped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<workbooks::grants::ScopeSnapshot>,
    /// Until when `scope` stands unless its submitter renews it (a grant
    /// that changes; see [`NODE_GRANT_LEASE`]), in milliseconds since the
    /// Unix epoch; none for one held fixed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope_until_ms: Option<u64>,
}

/// One result, as its worker signs it (the body of an [`Envelope`]).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeResult {
    /// The task's id.
    pub task: String,
    /// The sha256 (hex) of the signed task bytes it answers.
    pub task_sha256: String,
    /// The exit code, when the command ran to one.
    pub exit: Option<i32>,
    /// Its stdout.
    #[serde(with = "b64")]
    pub stdout: Vec<u8>,
    /// Its stderr.
    #[serde(with = "b64")]
    pub stderr: Vec<u8>,
    /// Why it did not run to an exit code (a refusal of the task itself
    /// among them: `refused: node: task refused: <reason>`).
    pub error: Option<CommandError>,
    /// Its wall time, in milliseconds.
    pub dur_ms: u64,
    /// The worker's host and process.
    pub host: String,
}

/// The key a worker records its result for task `id` under: the id and a
/// fingerprint of the worker's DID, so no one's key is anyone else's.
pub fn result_key(id: &str, worker_did: &str) -> String {
    format!(
        "{id}.{}",
        &workbooks::identity::sha256_hex(worker_did.as_bytes())[..16]
    )
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
    nonces: kv::Store,
    grants: kv::Store,
    artifacts: object_store::ObjectStore,
}

/// The stream `config` names, made if it is not there. A worker and a
/// submitter starting together each make it: nats-server may refuse the
/// second create while the first is being made ("subjects overlap with an
/// existing stream"), so a create that fails is followed by lookups for
/// up to [`NODE_MADE_ELSEWHERE_WAIT`] before its error is the answer.
async fn stream_made(
    js: &jetstream::Context,
    config: stream::Config,
) -> Result<stream::Stream, String> {
    let name = config.name.clone();
    made_or_found(js.get_or_create_stream(config), || js.get_stream(&name)).await
}

/// What `make` made or, when it failed, what `find` finds within
/// [`NODE_MADE_ELSEWHERE_WAIT`] (another client made it at the same
/// moment); else `make`'s error.
async fn made_or_found<T, E: std::fmt::Display, E2, F, G>(
    make: impl std::future::Future<Output = Result<T, E>>,
    find: F,
) -> Result<T, String>
where
    F: Fn() -> G,
    G: std::future::Future<Output = Result<T, E2>>,
{
    let why = match make.await {
        Ok(made) => return Ok(made),
        Err(e) => e.to_string(),
    };
    let deadline = tokio::time::Instant::now() + NODE_MADE_ELSEWHERE_WAIT;
    while tokio::time::Instant::now() < deadline {
        tokio::time::sleep(NODE_MADE_ELSEWHERE_WAIT / 10).await;
        if let Ok(found) = find().await {
            return Ok(found);
        }
    }
    Err(why)
}

/// A key-value bucket made as a stream rather than by `create_key_value`,
/// which first asks for account details nats-server 2.9 does not send.
async fn bucket(
    js: &jetstream::Context,
    name: &str,
    config: stream::Config,
) -> Result<kv::Store, FabricError> {
    stream_made(
        js,
        stream::Config {
            name: format!("KV_{name}"),
            subjects: vec![format!("$KV.{name}.>")],
            max_messages_per_subject: 1,
            allow_rollup: true,
            deny_delete: true,
            allow_direct: true,
            ..config
        },
    )
    .await
    .map_err(|e| FabricError::Node(format!("bucket {name}: {e}")))?;
    js.get_key_value(name)
        .await
        .map_err(|e| FabricError::Node(format!("bucket {name}: {e}")))
}

/// Connects to the server at `url`, with the credentials it names
/// (`nats://user:password@host:port`) when it names any. A user's replies
/// come to an inbox of its own ([`inbox_prefix`]), so the server can keep
/// each role from reading another's (a worker's fetched tasks carry their
/// stdin).
async fn client(url: &str) -> Result<async_nats::Client, FabricError> {
    let shown = redacted(url);
    let unreachable =
        |e: &dyn std::fmt::Display| FabricError::Node(format!("cannot reach NATS at {shown}: {e}"));
    let mut parsed = url::Url::parse(url).map_err(|e| unreachable(&e))?;
    let mut options = async_nats::ConnectOptions::new();
    if !parsed.username().is_empty() {
        let user = percent_decoded(parsed.username());
        let password = percent_decoded(parsed.password().unwrap_or_default());
        options = options
            .custom_inbox_prefix(inbox_prefix(&user))
            .user_and_password(user, password);
        let _ = parsed.set_username("");
        let _ = parsed.set_password(None);
    }
    options
        .connect(parsed.as_str())
        .await
        .map_err(|e| unreachable(&e))
}

/// The inbox prefix of `user`: `_INBOX_<user>`, every character but
/// letters, digits, `-` and `_` made `_` (a subject token cannot hold
/// `.`, `*`, `>` or a space).
pub fn inbox_prefix(user: &str) -> String {
    let token: String = user
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' => c,
            _ => '_',
        })
        .collect();
    format!("_INBOX_{token}")
}

fn percent_decoded(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// `url` without its password, for messages.
pub fn redacted(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) if parsed.password().is_some() => {
            let _ = parsed.set_password(Some("***"));
            parsed.to_string()
        }
        _ => url.to_string(),
    }
}

async fn connect(url: &str) -> Result<Bus, FabricError> {
    let client = client(url).await?;
    let js = jetstream::new(client);
    let tasks = stream_made(
        &js,
        stream::Config {
            name: NODE_TASK_STREAM.into(),
            subjects: vec![NODE_TASK_SUBJECT.into()],
            retention: stream::RetentionPolicy::WorkQueue,
            duplicate_window: Duration::from_secs(120),
            ..Default::default()
        },
    )
    .await
    .map_err(|e| FabricError::Node(format!("stream {NODE_TASK_STREAM}: {e}")))?;
    // A later result replaces an earlier one under the same key; every
    // revision reaches a submitter already watching, which takes the
    // first its pinned worker signed.
    let results = bucket(
        &js,
        NODE_RESULTS_BUCKET,
        stream::Config {
            discard: stream::DiscardPolicy::Old,
            ..Default::default()
        },
    )
    .await?;
    // First claim wins, and claims outlive every task that could use them.
    let nonces = bucket(
        &js,
        NODE_NONCES_BUCKET,
        stream::Config {
            discard: stream::DiscardPolicy::New,
            max_age: NODE_MAX_TASK_LIFETIME * 2,
            ..Default::default()
        },
    )
    .await?;
    // A run's grant changes live as long as its tasks may.
    let grants = bucket(
        &js,
        NODE_GRANTS_BUCKET,
        stream::Config {
            discard: stream::DiscardPolicy::Old,
            max_age: NODE_MAX_TASK_LIFETIME * 2,
            ..Default::default()
        },
    )
    .await?;
    let find_artifacts = || js.get_object_store(NODE_ARTIFACTS_BUCKET);
    let artifacts = match find_artifacts().await {
        Ok(store) => store,
        Err(_) => made_or_found(
            js.create_object_store(object_store::Config {
                bucket: NODE_ARTIFACTS_BUCKET.into(),
                ..Default::default()
            }),
            find_artifacts,
        )
        .await
        .map_err(|e| FabricError::Node(format!("store {NODE_ARTIFACTS_BUCKET}: {e}")))?,
    };
    Ok(Bus {
        js,
        tasks,
        results,
        nonces,
        grants,
        artifacts,
    })
}

/// Sixteen random bytes in hex: a run id, a nonce.
fn random_hex() -> Result<String, FabricError> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(bus_error)?;
    Ok(hex::encode(bytes))
}

/// Now, in Unix seconds.
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::made_or_found;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn a_create_refused_while_another_client_makes_it_takes_the_one_made() {
        let lookups = &AtomicUsize::new(0);
        let found = block_on(made_or_found(
            async { Err::<&str, _>("subjects overlap with an existing stream") },
            move || async move {
                // Not there yet on the first two lookups.
                match lookups.fetch_add(1, SeqCst) {
                    0 | 1 => Err("stream not found"),
                    _ => Ok("made by the other client"),
                }
            },
        ));
        assert_eq!(found, Ok("made by the other client"));
        assert_eq!(lookups.load(SeqCst), 3);
    }

    #[test]
    fn a_create_refused_for_good_keeps_its_own_error() {
        let found = block_on(made_or_found(
            async { Err::<(), _>("permissions violation") },
            || async { Err::<(), _>("stream not found") },
        ));
        assert_eq!(found, Err("permissions violation".to_string()));
    }

    #[test]
    fn a_create_that_succeeds_looks_nothing_up() {
        let found = block_on(made_or_found(async { Ok::<_, &str>("made") }, || async {
            unreachable!("looked up after a create that succeeded") as Result<&str, ()>
        }));
        assert_eq!(found, Ok("made"));
    }
}
