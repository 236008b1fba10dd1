//! The node tier on a real nats-server (JetStream) with real `wbx worker`
//! processes: 200 tasks over two workers with one killed mid-run, each
//! task's result taken exactly once; an artifact replaced in the
//! object store, or grown past the cap, refused by the worker before it
//! runs; a task no worker ever records, given up on by name after the
//! delivery limit; a worker that takes tasks again after the server
//! restarts under it; and a WASI 0.3 command run by a worker.

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use workbooks::Keyring;
use workbooks::LineOptions;
use workbooks::identity::Identity;
use workbooks_fabric::node::{
    NODE_ARTIFACTS_BUCKET, NODE_CONSUMER, NODE_MAX_ARTIFACT_BYTES, NODE_MAX_DELIVER,
    NODE_PULL_HEARTBEAT, NODE_RESULTS_BUCKET, NODE_TASK_STREAM, worker_consumer,
};
use workbooks_fabric::{FabricOptions, Target, TaskInput, Tier};

/// A nats-server with JetStream on a free loopback port, stopped on drop.
pub(crate) struct Nats {
    child: Child,
    pub(crate) port: u16,
    pub(crate) url: String,
    args: Vec<std::ffi::OsString>,
    _dir: tempfile::TempDir,
}

impl Nats {
    pub(crate) fn start() -> Nats {
        Nats::start_with(None)
    }

    /// With `accounts` (a nats-server `accounts { … }` block) as its
    /// configuration: authentication and per-subject permissions.
    pub(crate) fn start_with(accounts: Option<&str>) -> Nats {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dir = tempfile::tempdir().unwrap();
        let args: Vec<std::ffi::OsString> = match accounts {
            None => ["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"]
                .into_iter()
                .map(Into::into)
                .chain([dir.path().as_os_str().to_owned()])
                .collect(),
            Some(accounts) => {
                let config = dir.path().join("nats.conf");
                let store = dir.path().join("js");
                std::fs::write(
                    &config,
                    format!(
                        "listen: 127.0.0.1:{port}\njetstream {{ store_dir: \"{}\" }}\n{accounts}\n",
                        store.display()
                    ),
                )
                .unwrap();
                vec!["-c".into(), config.into()]
            }
        };
        Nats {
            child: serve(&args, port),
            port,
            url: format!("nats://127.0.0.1:{port}"),
            args,
            _dir: dir,
        }
    }

    /// Stops the server and starts it again on the same port and store:
    /// every client's connection drops, the streams survive.
    pub(crate) fn restart(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.child = serve(&self.args, self.port);
    }

    /// The server's address with `user`'s credentials in it.
    pub(crate) fn url_as(&self, user: &str, password: &str) -> String {
        format!("nats://{user}:{password}@127.0.0.1:{}", self.port)
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts nats-server with `args` and waits until it listens on `port`.
fn serve(args: &[std::ffi::OsString], port: u16) -> Child {
    let child = Command::new("nats-server")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("nats-server (apt-get install nats-server; .ci/run installs it)");
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "nats-server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

/// The seed of the submitting tenant's key in these tests.
pub(crate) const SUBMITTER_SEED: &str = "AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=";
/// The seed of every test worker's key.
pub(crate) const WORKER_SEED: &str = "AwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwMDAwM=";

/// The identity a seed gives.
pub(crate) fn identity(seed: &str) -> Identity {
    Identity::of_tenant(&Keyring::new(None, Default::default()), "t", Some(seed)).unwrap()
}

/// Where a test worker's stderr goes, in its home.
const WORKER_LOG: &str = "worker.log";

/// A `wbx worker` with its own home, killed on drop.
pub(crate) struct Worker {
    child: Child,
    pub(crate) home: tempfile::TempDir,
}

impl Worker {
    /// A worker that runs the test submitter's tasks for any tenant and
    /// profile.
    pub(crate) fn start(url: &str) -> Worker {
        let trust = format!("{}@*/*", identity(SUBMITTER_SEED).did);
        Worker::start_with(url, &["--trust", &trust])
    }

    /// A worker with `args` after `worker --nats URL --concurrency 2`.
    pub(crate) fn start_with(url: &str, args: &[&str]) -> Worker {
        Worker::start_with_env(url, args, &[])
    }

    /// [`Worker::start_with`], with `env` in its environment.
    pub(crate) fn start_with_env(url: &str, args: &[&str], env: &[(&str, &str)]) -> Worker {
        let home = tempfile::tempdir().unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_wbx"))
            .arg("--home")
            .arg(home.path())
            .args(["worker", "--nats", url, "--concurrency", "2"])
            .args(args)
            .env("WB_SIGNING_KEY", WORKER_SEED)
            .envs(env.iter().copied())
            .env_remove("WB_LOG")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(home.path().join(WORKER_LOG)).unwrap())
            .spawn()
            .unwrap();
        Worker { child, home }
    }

    /// What the worker wrote to stderr so far, and whether it has exited:
    /// for the message of a failed assertion.
    pub(crate) fn report(&mut self) -> String {
        let exited = match self.child.try_wait() {
            Ok(Some(status)) => format!("exited ({status})"),
            Ok(None) => "still running".into(),
            Err(e) => format!("unknown ({e})"),
        };
        let log = std::fs::read_to_string(self.home.path().join(WORKER_LOG)).unwrap_or_default();
        format!("the worker {exited}; its stderr:\n{log}")
    }

    pub(crate) fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Its pid.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

pub(crate) fn node_opts(url: &str) -> FabricOptions {
    FabricOptions {
        width: 16,
        tier: Some(Tier::Node),
        nats: Some(url.to_string()),
        workers: vec![identity(WORKER_SEED).did],
        signer: Some(identity(SUBMITTER_SEED)),
        ..FabricOptions::default()
    }
}

/// `n` tasks of [`counts`] fanned out through the bus at `url`.
async fn fan_counts(
    engine: &workbooks::engine::Engine,
    url: &str,
    n: usize,
) -> Vec<workbooks_fabric::TaskResult> {
    workbooks_fabric::Fabric::new(engine.clone())
        .fan_out_as_host(
            LineOptions::default(),
            &Target::Command("jq".into()),
            counts(n),
            &node_opts(url),
        )
        .await
        .unwrap()
}

pub(crate) fn counts(n: usize) -> Vec<TaskInput> {
    (0..n)
        .map(|i| TaskInput {
            args: vec!["-c".into(), "[.n, ([range(20000)] | length)]".into()],
            stdin: format!("{{\"n\": {i}}}"),
        })
        .collect()
}

pub(crate) async fn results_recorded(url: &str) -> usize {
    let js = async_nats::jetstream::new(async_nats::connect(url).await.unwrap());
    let Ok(kv) = js.get_key_value(NODE_RESULTS_BUCKET).await else {
        return 0;
    };
    let mut keys = kv.keys().await.unwrap();
    let mut n = 0;
    while let Some(Ok(_)) = futures::StreamExt::next(&mut keys).await {
        n += 1;
    }
    n
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_tasks_complete_once_each_with_a_worker_killed_mid_run() {
    let nats = Nats::start();
    let mut doomed = Worker::start(&nats.url);
    let mut survivor = Worker::start(&nats.url);
    let home = tempfile::tempdir().unwrap();
    let engine = crate::common::own_engine(home.path());
    let url = nats.url.clone();
    let run = {
        let engine = engine.clone();
        tokio::spawn(async move {
            workbooks_fabric::Fabric::new(engine.clone())
                .fan_out_as_host(
                    LineOptions::default(),
                    &Target::Command("jq".into()),
                    counts(200),
                    &node_opts(&url),
                )
                .await
        })
    };
    // Kill one worker once results are flowing, while tasks are in flight.
    let deadline = Instant::now() + Duration::from_secs(120);
    // A fan-out that ended early (an error) is shown by the await below.
    while results_recorded(&nats.url).await < 20 && !run.is_finished() {
        assert!(
            Instant::now() < deadline,
            "no results from the workers in 120 s; {}; {}",
            doomed.report(),
            survivor.report()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    doomed.kill();
    let results = run.await.unwrap().unwrap();
    assert_eq!(results.len(), 200);
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r.index, i);
        assert_eq!(
            (r.exit, r.stdout.as_str(), r.error.as_deref()),
            (Some(0), format!("[{i},20000]\n").as_str(), None),
            "task {i}"
        );
    }
    // Recorded once per worker that answered: every one of the 200 tasks
    // has a result, and no worker's key holds a second revision.
    let js = async_nats::jetstream::new(async_nats::connect(&nats.url).await.unwrap());
    let kv = js.get_key_value(NODE_RESULTS_BUCKET).await.unwrap();
    let mut history = kv.watch_with_history(">").await.unwrap();
    let mut keys = std::collections::HashSet::new();
    let mut tasks = std::collections::HashSet::new();
    while let Ok(Some(Ok(entry))) = tokio::time::timeout(
        Duration::from_secs(2),
        futures::StreamExt::next(&mut history),
    )
    .await
    {
        assert!(
            keys.insert(entry.key.clone()),
            "{} recorded twice",
            entry.key
        );
        let task = entry.key.rsplit_once('.').unwrap().0.to_string();
        tasks.insert(task);
        if tasks.len() == 200 {
            break;
        }
    }
    assert_eq!(tasks.len(), 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_takes_tasks_again_after_the_server_restarts_under_it() {
    let mut nats = Nats::start();
    let mut worker = Worker::start(&nats.url);
    let home = tempfile::tempdir().unwrap();
    let engine = crate::common::own_engine(home.path());
    let url = nats.url.clone();
    let fan = |n| fan_counts(&engine, &url, n);
    assert_eq!(fan(4).await.len(), 4);
    // The worker's connection and its pull stream go down with the server.
    nats.restart();
    let results = tokio::time::timeout(Duration::from_secs(120), fan(4))
        .await
        .unwrap_or_else(|_| panic!("no results after the restart; {}", worker.report()));
    for (i, r) in results.iter().enumerate() {
        assert_eq!(
            (r.exit, r.stdout.as_str(), r.error.as_deref()),
            (Some(0), format!("[{i},20000]\n").as_str(), None),
            "task {i} after the restart; {}",
            worker.report()
        );
    }
}

/// A TCP hop in front of the server whose way back can go silent while
/// the connection stays up: what the server sends is dropped, so a
/// client's pull is as good as forgotten. Returns the hop's address and
/// its switch.
async fn hush_hop(server: u16) -> (String, std::sync::Arc<std::sync::atomic::AtomicBool>) {
    use std::sync::atomic::{AtomicBool, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("nats://{}", listener.local_addr().unwrap());
    let hushed = std::sync::Arc::new(AtomicBool::new(false));
    let switch = hushed.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let Ok(upstream) = tokio::net::TcpStream::connect(("127.0.0.1", server)).await else {
                continue;
            };
            let (mut client_in, mut client_out) = client.into_split();
            let (mut up_in, mut up_out) = upstream.into_split();
            tokio::spawn(async move { tokio::io::copy(&mut client_in, &mut up_out).await });
            let hushed = hushed.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 64 << 10];
                while let Ok(n @ 1..) = up_in.read(&mut buf).await {
                    if !hushed.load(Ordering::SeqCst)
                        && client_out.write_all(&buf[..n]).await.is_err()
                    {
                        break;
                    }
                }
            });
        }
    });
    (url, switch)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_whose_pull_goes_silent_pulls_again_and_takes_tasks() {
    let nats = Nats::start();
    let (hop, hushed) = hush_hop(nats.port).await;
    let mut worker = Worker::start(&hop);
    let home = tempfile::tempdir().unwrap();
    let engine = crate::common::own_engine(home.path());
    let fan = |n| fan_counts(&engine, &nats.url, n);
    assert_eq!(fan(1).await.len(), 1);
    // Nothing from the server reaches the worker for three of its pull's
    // heartbeats (two missed end the pull; the third leaves room for a
    // loaded machine to notice before the server speaks again); its
    // connection stays up all along.
    hushed.store(true, std::sync::atomic::Ordering::SeqCst);
    tokio::time::sleep(NODE_PULL_HEARTBEAT * 3 + Duration::from_secs(2)).await;
    hushed.store(false, std::sync::atomic::Ordering::SeqCst);
    let results = tokio::time::timeout(Duration::from_secs(120), fan(2))
        .await
        .unwrap_or_else(|_| panic!("no results after the silence; {}", worker.report()));
    for r in &results {
        assert_eq!(r.exit, Some(0), "{r:?}; {}", worker.report());
    }
    let report = worker.report();
    assert!(
        report.contains("the task stream missed its heartbeats"),
        "{report}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_artifact_replaced_or_grown_past_the_cap_in_the_object_store_is_refused_by_the_worker() {
    let nats = Nats::start();
    let home = tempfile::tempdir().unwrap();
    let engine = crate::common::own_engine(home.path());
    let (target, opts) = (Target::Command("jq".into()), node_opts(&nats.url));
    let fabric = workbooks_fabric::Fabric::new(engine.clone());
    let run = |n| fabric.fan_out_as_host(LineOptions::default(), &target, counts(n), &opts);
    // A first run uploads jq and runs it.
    let mut worker = Worker::start(&nats.url);
    let first = run(1).await.unwrap();
    assert_eq!(first[0].exit, Some(0), "{:?}", first[0]);
    worker.kill();
    // Someone on the bus swaps the bytes stored under jq's sha256.
    let js = async_nats::jetstream::new(async_nats::connect(&nats.url).await.unwrap());
    let store = js.get_object_store(NODE_ARTIFACTS_BUCKET).await.unwrap();
    let mut names = store.list().await.unwrap();
    let info = futures::StreamExt::next(&mut names).await.unwrap().unwrap();
    let evil = wat::parse_str("(component)").unwrap();
    store
        .put(info.name.as_str(), &mut evil.as_slice())
        .await
        .unwrap();
    // A fresh worker (nothing cached) refuses them before running.
    let _worker = Worker::start(&nats.url);
    let second = run(2).await.unwrap();
    for r in &second {
        let error = r.error.as_deref().unwrap_or_default();
        assert!(
            error.starts_with("artifact_integrity: the object store's bytes for"),
            "{r:?}"
        );
    }
    // Then with more bytes than any worker will read: refused at the cap,
    // before hashing or compiling.
    let huge = vec![0u8; NODE_MAX_ARTIFACT_BYTES + 1];
    store
        .put(info.name.as_str(), &mut huge.as_slice())
        .await
        .unwrap();
    drop(huge);
    let _worker = Worker::start(&nats.url);
    let third = run(1).await.unwrap();
    let error = third[0].error.as_deref().unwrap_or_default();
    assert!(
        error.ends_with(&format!("over {NODE_MAX_ARTIFACT_BYTES} bytes")),
        "{:?}",
        third[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_no_worker_ever_records_is_given_up_after_the_delivery_limit_by_name() {
    use async_nats::jetstream::{AckKind, consumer};
    let nats = Nats::start();
    let home = tempfile::tempdir().unwrap();
    let engine = crate::common::own_engine(home.path());
    let (target, opts) = (Target::Command("jq".into()), node_opts(&nats.url));
    let submitted = std::sync::atomic::AtomicBool::new(false);
    let submit = async {
        let results = workbooks_fabric::Fabric::new(engine.clone())
            .fan_out_as_host(LineOptions::default(), &target, counts(1), &opts)
            .await;
        submitted.store(true, std::sync::atomic::Ordering::Relaxed);
        results
    };
    // A worker that takes the task and never records it, as one that dies
    // holding it would; it hands it back at once instead of waiting out
    // the ack wait, and notes which delivery each one was.
    let faulty = async {
        let js = async_nats::jetstream::new(async_nats::connect(&nats.url).await.unwrap());
        let stream = loop {
            if let Ok(stream) = js.get_stream(NODE_TASK_STREAM).await {
                break stream;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        let consumer: consumer::PullConsumer = stream
            .get_or_create_consumer(NODE_CONSUMER, worker_consumer())
            .await
            .unwrap();
        let mut deliveries = Vec::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        while !submitted.load(std::sync::atomic::Ordering::Relaxed) && Instant::now() < deadline {
            let mut batch = consumer
                .fetch()
                .max_messages(1)
                .expires(Duration::from_millis(200))
                .messages()
                .await
                .unwrap();
            while let Some(Ok(message)) = futures::StreamExt::next(&mut batch).await {
                deliveries.push(message.info().unwrap().delivered);
                message.ack_with(AckKind::Nak(None)).await.unwrap();
            }
        }
        (deliveries, stream)
    };
    let (results, (deliveries, mut stream)) = tokio::join!(submit, faulty);
    let results = results.unwrap();
    let error = results[0].error.as_deref().unwrap_or_default();
    assert!(
        error.starts_with(&format!(
            "refused: node: the task was delivered {NODE_MAX_DELIVER} times (at most {NODE_MAX_DELIVER})"
        )),
        "{:?}",
        results[0]
    );
    assert_eq!(deliveries, (1..=NODE_MAX_DELIVER).collect::<Vec<_>>());
    // Given up on, it no longer sits in the work queue.
    assert_eq!(stream.info().await.unwrap().state.messages, 0);
}

/// Why a node task of `line` is refused before any bus is reached (no
/// server listens at the address it is given).
async fn refused_before_the_bus(line: LineOptions) -> String {
    let home = tempfile::tempdir().unwrap();
    let engine = crate::common::own_engine(home.path());
    workbooks_fabric::Fabric::new(engine.clone())
        .fan_out_as_host(
            line,
            &Target::Command("jq".into()),
            counts(1),
            &node_opts("nats://127.0.0.1:1"),
        )
        .await
        .unwrap_err()
        .to_string()
}

#[tokio::test]
async fn a_node_task_with_a_preopened_directory_is_refused_not_run_without_it() {
    let home = tempfile::tempdir().unwrap();
    let err = refused_before_the_bus(LineOptions {
        dirs: vec![
            workbooks::Preopen::parse(&format!("{}::/data", home.path().display())).unwrap(),
        ],
        ..LineOptions::default()
    })
    .await;
    assert!(err.contains("cannot take preopened directories"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submitters_and_workers_starting_together_on_a_fresh_bus_all_find_its_streams() {
    // Every one of them asks for the task stream, the buckets and the
    // object store at once, and each is made by whoever comes first.
    let nats = Nats::start();
    let mut workers: Vec<Worker> = (0..2).map(|_| Worker::start(&nats.url)).collect();
    let home = tempfile::tempdir().unwrap();
    let engine = crate::common::own_engine(home.path());
    let opts = node_opts(&nats.url);
    let target = Target::Command("jq".into());
    let fabrics: Vec<_> = (0..8)
        .map(|_| workbooks_fabric::Fabric::new(engine.clone()))
        .collect();
    let runs = fabrics
        .iter()
        .map(|fabric| fabric.fan_out_as_host(LineOptions::default(), &target, counts(1), &opts));
    let all = tokio::time::timeout(Duration::from_secs(120), futures::future::join_all(runs));
    let Ok(results) = all.await else {
        panic!("no results; {}", workers[0].report());
    };
    for (i, run) in results.into_iter().enumerate() {
        let run = run.unwrap_or_else(|e| panic!("submitter {i}: {e}"));
        assert_eq!(run[0].exit, Some(0), "submitter {i}: {:?}", run[0]);
    }
    for worker in &mut workers {
        let report = worker.report();
        assert!(report.contains("still running"), "{report}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wasi_03_command_runs_on_a_node_worker() {
    let nats = Nats::start();
    let mut worker = Worker::start(&nats.url);
    let (_home, engine) =
        crate::common::engine_with_commands(&[("echo03", guest_artifacts::WASI03_ECHO)]);
    let inputs = (0..3)
        .map(|i| TaskInput {
            args: vec![format!("node{i}")],
            stdin: format!("via nats {i}\n"),
        })
        .collect();
    let (fabric, target) = (
        workbooks_fabric::Fabric::new(engine),
        Target::Command("echo03".into()),
    );
    let opts = node_opts(&nats.url);
    let fan = fabric.fan_out_as_host(LineOptions::default(), &target, inputs, &opts);
    let results = tokio::time::timeout(Duration::from_secs(120), fan)
        .await
        .unwrap_or_else(|_| panic!("no results; {}", worker.report()))
        .unwrap();
    for (i, r) in results.iter().enumerate() {
        assert_eq!(
            (r.exit, r.stdout.as_str(), r.error.as_deref()),
            (
                Some(0),
                format!("0.3 args=[\"node{i}\"] greeting=\nVIA NATS {i}\n").as_str(),
                None
            ),
            "task {i}; {}",
            worker.report()
        );
    }
}
