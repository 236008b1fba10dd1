//! The node tier attacked on a real nats-server: a real task read off the
//! bus, rewritten to another tenant and profile and published again; the
//! same task published twice; a task signed by a stranger; a stale one; a
//! result forged under a worker's key; a task asking for more time than a
//! worker gives; a command registered at `os_process`; and, with the bus's
//! own authentication, a stranger who may not publish or read tasks and
//! roles that may not read each other's replies.

use crate::node::{Nats, SUBMITTER_SEED, WORKER_SEED, Worker, counts, identity, node_opts};
use futures::StreamExt;
use serde_json::Value;
use std::time::{Duration, Instant};
use workbooks::LineOptions;
use workbooks_fabric::Target;
use workbooks_fabric::node::{
    Envelope, NODE_RESULTS_BUCKET, NODE_TASK_SUBJECT, NodeResult, NodeTask, inbox_prefix,
    result_key,
};

/// The seed of a key no worker pins.
const STRANGER_SEED: &str = "BAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQ=";

async fn jetstream(url: &str) -> async_nats::jetstream::Context {
    async_nats::jetstream::new(async_nats::connect(url).await.unwrap())
}

/// Publishes `envelope` as a task, as anyone on the bus can.
async fn publish(url: &str, envelope: &Envelope) {
    let js = jetstream(url).await;
    js.publish(
        NODE_TASK_SUBJECT,
        serde_json::to_vec(envelope).unwrap().into(),
    )
    .await
    .unwrap()
    .await
    .unwrap();
}

/// The worker's audit, as `wbx audit --json` prints it.
fn audit(worker: &Worker) -> Value {
    let out = crate::common::wbx(worker.home.path(), &["audit", "--json"], b"");
    serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
}

/// Waits until the worker's audit names `reason` (a bound on a hang).
async fn audited(worker: &Worker, reason: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let seen = audit(worker);
        if seen.to_string().contains(reason) {
            return seen;
        }
        assert!(Instant::now() < deadline, "no {reason} in {seen}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The worker's signed result under `key`, checked, when there is one.
async fn result_under(url: &str, key: &str) -> Option<NodeResult> {
    let js = jetstream(url).await;
    let kv = js.get_key_value(NODE_RESULTS_BUCKET).await.ok()?;
    let value = kv.get(key).await.ok()??;
    let envelope: Envelope = serde_json::from_slice(&value).ok()?;
    assert_eq!(envelope.signer, identity(WORKER_SEED).did);
    Some(envelope.verified().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_captured_task_rewritten_or_replayed_or_signed_by_a_stranger_never_runs() {
    let nats = Nats::start();
    let submitter = identity(SUBMITTER_SEED);
    // This worker runs the submitter's tasks for acme, under compute.
    let worker = Worker::start_with(
        &nats.url,
        &["--trust", &format!("{}@acme/compute", submitter.did)],
    );
    // Anyone on an open bus sees every task as it is published.
    let client = async_nats::connect(&nats.url).await.unwrap();
    let mut tap = client.subscribe(NODE_TASK_SUBJECT).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let engine = crate::common::own_engine(home.path());
    let line = LineOptions {
        tenant: "acme".into(),
        ..LineOptions::default()
    };
    let ran = workbooks_fabric::Fabric::new(engine.clone())
        .fan_out_as_host(
            line,
            &Target::Command("jq".into()),
            counts(1),
            &node_opts(&nats.url),
        )
        .await
        .unwrap();
    assert_eq!(ran[0].exit, Some(0), "{:?}", ran[0]);
    let captured: Envelope = serde_json::from_slice(&tap.next().await.unwrap().payload).unwrap();
    let original: NodeTask = captured.verified().unwrap();
    // Rewritten to another tenant and profile, the signature kept.
    let mut rewritten = captured.clone();
    rewritten.body = rewritten
        .body
        .replace("\"tenant\":\"acme\"", "\"tenant\":\"victim\"")
        .replace("\"profile\":\"compute\"", "\"profile\":\"posix\"");
    assert_ne!(rewritten.body, captured.body);
    publish(&nats.url, &rewritten).await;
    audited(&worker, "task_bad_signature").await;
    // The same task, published again as it was.
    publish(&nats.url, &captured).await;
    audited(&worker, "task_replayed").await;
    // Re-signed by a key the worker does not pin.
    let stranger = identity(STRANGER_SEED);
    let mut theirs = original.clone();
    theirs.tenant = "victim".into();
    theirs.nonce = "00".repeat(16);
    publish(&nats.url, &Envelope::sign(&stranger, &theirs).unwrap()).await;
    audited(&worker, "task_unknown_signer").await;
    // Its id is the real task's: the refusal never replaces the real
    // result recorded under it.
    let real = result_key(&original.id, &identity(WORKER_SEED).did);
    let kept = result_under(&nats.url, &real).await.unwrap();
    assert_eq!(
        (kept.task_sha256, kept.exit),
        (captured.body_sha256(), Some(0)),
        "a refusal replaced the real result"
    );
    // Stale: signed by the pinned key, past its expiry (a task captured
    // long ago); its refusal is recorded, signed, for its own bytes.
    let mut stale = original.clone();
    stale.id = format!("{}.stale", original.id);
    stale.nonce = "11".repeat(16);
    stale.expires = 1;
    let stale = Envelope::sign(&submitter, &stale).unwrap();
    publish(&nats.url, &stale).await;
    audited(&worker, "task_expired").await;
    let key = result_key(
        &format!("{}.stale", original.id),
        &identity(WORKER_SEED).did,
    );
    let refused = result_under(&nats.url, &key).await.unwrap();
    assert_eq!(refused.task_sha256, stale.body_sha256());
    let said = serde_json::to_string(&refused.error).unwrap();
    assert!(said.contains("task refused: expired"), "{said}");
    // Nothing ran for the victim: no result but the ones named.
    let js = jetstream(&nats.url).await;
    let kv = js.get_key_value(NODE_RESULTS_BUCKET).await.unwrap();
    let mut keys = kv.keys().await.unwrap();
    while let Some(Ok(key)) = keys.next().await {
        assert!(!key.starts_with("victim."), "{key}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_or_profile_the_submitter_may_not_use_is_refused_by_name() {
    let nats = Nats::start();
    let submitter = identity(SUBMITTER_SEED);
    let _worker = Worker::start_with(
        &nats.url,
        &["--trust", &format!("{}@acme/compute", submitter.did)],
    );
    let home = tempfile::tempdir().unwrap();
    let engine = crate::common::own_engine(home.path());
    let jq = Target::Command("jq".into());
    for (tenant, profile, want) in [
        ("victim", "compute", "task refused: tenant_not_allowed"),
        ("acme", "posix", "task refused: profile_not_allowed"),
    ] {
        let line = LineOptions {
            tenant: tenant.into(),
            profile: profile.into(),
            ..LineOptions::default()
        };
        let ran = workbooks_fabric::Fabric::new(engine.clone())
            .fan_out_as_host(line, &jq, counts(1), &node_opts(&nats.url))
            .await
            .unwrap();
        let error = ran[0].error.clone().unwrap_or_default();
        assert!(error.contains(want), "{tenant}/{profile}: {error}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_forged_under_the_workers_key_is_ignored_and_the_real_one_is_taken() {
    let nats = Nats::start();
    let _worker = Worker::start(&nats.url);
    let client = async_nats::connect(&nats.url).await.unwrap();
    let mut tap = client.subscribe(NODE_TASK_SUBJECT).await.unwrap();
    let url = nats.url.clone();
    // As each task appears, a forger writes its own result under the
    // worker's key, before the worker can answer: unsigned, and signed by
    // a key the submitter does not pin.
    let forger = tokio::spawn(async move {
        let js = jetstream(&url).await;
        let kv = loop {
            if let Ok(kv) = js.get_key_value(NODE_RESULTS_BUCKET).await {
                break kv;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        let mut forged = 0;
        while let Some(message) = tap.next().await {
            let envelope: Envelope = serde_json::from_slice(&message.payload).unwrap();
            let task: NodeTask = envelope.verified().unwrap();
            let lie = NodeResult {
                task: task.id.clone(),
                task_sha256: envelope.body_sha256(),
                exit: Some(0),
                stdout: b"forged\n".to_vec(),
                stderr: Vec::new(),
                error: None,
                dur_ms: 1,
                host: "forger".into(),
            };
            let key = result_key(&task.id, &identity(WORKER_SEED).did);
            let signed = Envelope::sign(&identity(STRANGER_SEED), &lie).unwrap();
            kv.put(&key, serde_json::to_vec(&signed).unwrap().into())
                .await
                .unwrap();
            forged += 1;
            if forged == 3 {
                return forged;
            }
        }
        forged
    });
    let home = tempfile::tempdir().unwrap();
    let engine = crate::common::own_engine(home.path());
    let ran = workbooks_fabric::Fabric::new(engine.clone())
        .fan_out_as_host(
            LineOptions::default(),
            &Target::Command("jq".into()),
            counts(3),
            &node_opts(&nats.url),
        )
        .await
        .unwrap();
    assert_eq!(forger.await.unwrap(), 3);
    for (i, r) in ran.iter().enumerate() {
        assert_eq!(r.stdout, format!("[{i},20000]\n"), "{r:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_clamps_a_tasks_budget_and_runs_an_os_process_command_in_a_child() {
    use workbooks::commands::{ArgMode, Tier};
    let nats = Nats::start();
    let mut worker = Worker::start_with(
        &nats.url,
        &[
            "--trust",
            &format!("{}@*/*", identity(SUBMITTER_SEED).did),
            "--max-timeout",
            "1500",
        ],
    );
    let home = tempfile::tempdir().unwrap();
    let engine = crate::common::own_engine(home.path());
    engine
        .registry()
        .register(
            "sleeper",
            std::fs::read(guest_artifacts::LIMITS_BLOCKING_SLEEP).unwrap(),
            ArgMode::Argv,
            Tier::OsProcess,
        )
        .unwrap();
    // The task asks for a minute; the worker gives it 1.5 s, in a child
    // `wbx exec --framed` of its own while it runs.
    let opts = workbooks_fabric::FabricOptions {
        timeout: Duration::from_secs(60),
        ..node_opts(&nats.url)
    };
    let sleeper = Target::Command("sleeper".into());
    let fabric = workbooks_fabric::Fabric::new(engine.clone());
    let run = fabric.fan_out_as_host(
        LineOptions::default(),
        &sleeper,
        vec![workbooks_fabric::TaskInput::default()],
        &opts,
    );
    let worker_pid = worker.pid();
    let look = async {
        for _ in 0..600 {
            if crate::container::framed_children_of(worker_pid) > 0 {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        false
    };
    let (ran, child_seen) = tokio::join!(run, look);
    let ran = ran.unwrap();
    let error = ran[0].error.clone().unwrap_or_default();
    assert!(
        error.starts_with("timeout: over its 1500 ms budget"),
        "{error}; {}",
        worker.report()
    );
    assert!(
        child_seen,
        "no child wbx ran the os_process command; {}",
        worker.report()
    );
}

/// Users of a bus with per-subject permissions: the submitter publishes
/// tasks and reads results, the worker reads tasks and writes results,
/// a stranger may use only its own subjects.
pub(crate) const ACCOUNTS: &str = include_str!("../../../../docs/nats-accounts.conf");

/// A client of `nats` as `user`, and the server's complaints about it.
async fn client_as(
    nats: &Nats,
    user: &str,
) -> (
    async_nats::Client,
    tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    let (errors, seen) = tokio::sync::mpsc::unbounded_channel::<String>();
    let client = async_nats::ConnectOptions::new()
        .user_and_password(user.into(), format!("{user}-secret"))
        .event_callback(move |event| {
            let errors = errors.clone();
            async move {
                let _ = errors.send(event.to_string());
            }
        })
        .connect(format!("nats://127.0.0.1:{}", nats.port))
        .await
        .unwrap();
    (client, seen)
}

/// The permissions violations among `seen`, waiting up to 10 s for `want`.
async fn violations(
    seen: &mut tokio::sync::mpsc::UnboundedReceiver<String>,
    want: usize,
) -> Vec<String> {
    let mut found = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while found.len() < want && Instant::now() < deadline {
        if let Ok(Some(e)) = tokio::time::timeout(Duration::from_millis(200), seen.recv()).await
            && e.to_lowercase().contains("permissions violation")
        {
            found.push(e);
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_an_authenticated_bus_a_stranger_reads_no_task_and_no_role_reads_anothers_replies() {
    let nats = Nats::start_with(Some(ACCOUNTS));
    let _worker = Worker::start(&nats.url_as("worker", "worker-secret"));
    let home = tempfile::tempdir().unwrap();
    let engine = crate::common::own_engine(home.path());
    let submitter_url = nats.url_as("submitter", "submitter-secret");
    // The roles work with their own credentials.
    let ran = workbooks_fabric::Fabric::new(engine.clone())
        .fan_out_as_host(
            LineOptions::default(),
            &Target::Command("jq".into()),
            counts(2),
            &node_opts(&submitter_url),
        )
        .await
        .unwrap();
    assert_eq!((ran[0].exit, ran[1].exit), (Some(0), Some(0)), "{ran:?}");
    // The stranger: every attempt on the node tier's subjects is refused by
    // the server, and no task reaches it.
    let (stranger, mut seen) = client_as(&nats, "stranger").await;
    let mut tap = stranger.subscribe(NODE_TASK_SUBJECT).await.unwrap();
    stranger
        .publish(NODE_TASK_SUBJECT, "{}".into())
        .await
        .unwrap();
    stranger.flush().await.unwrap();
    let refused = violations(&mut seen, 2).await;
    assert_eq!(refused.len(), 2, "{refused:?}");
    // Nor may one role read the other's replies: a submitter is refused the
    // worker's inbox, where the tasks a worker fetches (their stdin) come,
    // and a worker the submitter's, where results come.
    for (user, other) in [("submitter", "worker"), ("worker", "submitter")] {
        let (nosy, mut seen) = client_as(&nats, user).await;
        let _tap = nosy
            .subscribe(format!("{}.>", inbox_prefix(other)))
            .await
            .unwrap();
        nosy.flush().await.unwrap();
        let refused = violations(&mut seen, 1).await;
        assert_eq!(refused.len(), 1, "{user} read {other}'s inbox: {refused:?}");
    }
    // A task published by the submitter meanwhile never reaches the tap.
    let again = workbooks_fabric::Fabric::new(engine.clone())
        .fan_out_as_host(
            LineOptions::default(),
            &Target::Command("jq".into()),
            counts(1),
            &node_opts(&submitter_url),
        )
        .await
        .unwrap();
    assert_eq!(again[0].exit, Some(0));
    let tapped = tokio::time::timeout(Duration::from_millis(500), tap.next()).await;
    assert!(!matches!(tapped, Ok(Some(_))), "the stranger read a task");
    let js = async_nats::jetstream::new(stranger);
    assert!(js.get_key_value(NODE_RESULTS_BUCKET).await.is_err());
}
