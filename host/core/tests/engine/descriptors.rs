//! Descriptors per tenant (issue 54): the sockets and files all stores of
//! one tenant hold share one count, so a tenant that runs many stores at
//! once does not multiply a store's cap by them, and another tenant's room
//! is its own.

use crate::common::own_builder;
use guest_artifacts::{
    NET_REQUESTS_HOLD, NET_SOCKETS_HOLD, SANDBOX_FILES_HOLD, WASI03_FILES_HOLD, WASI03_SOCKETS_HOLD,
};
use std::io::{BufRead, BufReader};
use std::time::Duration;
use workbooks::{
    Artifact, Cidr, Engine, Grant, Output, Preopen, RunOutput, SessionOptions, SessionOutput, Stdin,
};

/// The per-tenant cap the attack runs under: one store's 256 sockets and
/// 44 more.
const TENANT_CAP: usize = 300;

/// A session of `tenant` with `args`.
fn session(tenant: &str, args: &[&str]) -> SessionOptions {
    let mut opts = SessionOptions::new("held", tenant);
    opts.args = args.iter().map(|a| a.to_string()).collect();
    opts.timeout = Some(Duration::from_secs(60));
    opts
}

/// `opts` with `dir` preopened read-only at `/data`.
fn with_data(mut opts: SessionOptions, dir: &std::path::Path) -> SessionOptions {
    let spec = format!("{}::/data::ro", dir.display());
    opts.dirs = vec![Preopen::parse(&spec).unwrap()];
    opts
}

/// Docks `probe` under `profile`.
fn docked(e: &Engine, probe: &str, profile: &str) -> std::sync::Arc<workbooks::Docked> {
    e.dock(
        &Artifact::from_file(probe).unwrap(),
        &Grant::profile(profile),
    )
    .unwrap()
}

/// Runs `probe` under `profile` to its end, expecting exit 0: its stdout.
async fn run_to_end(e: &Engine, probe: &str, profile: &str, opts: SessionOptions) -> String {
    let out = e.run(&docked(e, probe, profile), opts).await.unwrap();
    assert_eq!(out.exit_code, 0, "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A store kept running by [`holding`].
struct Held {
    /// Its run.
    run: tokio::task::JoinHandle<RunOutput>,
    /// Its stdin: dropping it ends the store.
    keep: std::io::PipeWriter,
    /// Its stdout, kept open (a closed stdout would end it too).
    _out: BufReader<std::io::PipeReader>,
    /// What it said up to the line it was waited for.
    said: String,
}

/// Starts `probe` under `profile` with `opts` (a probe run with `wait` or
/// `release`, which keeps what it holds until its stdin ends) and reads its
/// stdout up to a line starting with `until`.
async fn holding(
    e: &Engine,
    probe: &str,
    profile: &str,
    mut opts: SessionOptions,
    until: &'static str,
) -> Held {
    let (stdin, keep) = std::io::pipe().unwrap();
    let (out, stdout) = std::io::pipe().unwrap();
    opts.stdin = Stdin::Pipe(workbooks::pipes::feed(stdin, 64));
    opts.stdout = Output::Shared(SessionOutput::through(stdout));
    let docked = docked(e, probe, profile);
    let e = e.clone();
    let run = tokio::spawn(async move { e.run(&docked, opts).await.unwrap() });
    let (said, out) = tokio::task::spawn_blocking(move || {
        let mut out = BufReader::new(out);
        let mut said = String::new();
        loop {
            let mut line = String::new();
            if out.read_line(&mut line).unwrap() == 0 {
                break;
            }
            said.push_str(&line);
            if line.starts_with(until) {
                break;
            }
        }
        (said, out)
    })
    .await
    .unwrap();
    Held {
        run,
        keep,
        _out: out,
        said,
    }
}

impl Held {
    /// Ends the store; it must exit 0.
    async fn end(self) {
        drop(self.keep);
        let out = self.run.await.unwrap();
        assert_eq!(out.exit_code, 0, "{}", String::from_utf8_lossy(&out.stderr));
    }
}

/// The attack: tenant `a` keeps one store's 256 sockets open and runs more
/// stores beside it. Before, each store had 256 sockets and 512 files of
/// its own, so a tenant's descriptors grew with its stores (a daemon's
/// lines, a server's requests) until the process had none for anyone. Now
/// its second store gets the 44 sockets left of its tenant's 300, at 0.2
/// and at 0.3; a store opening files gets 43 beside its preopen, and once
/// it closes them (keeping its preopen) the next store gets 43 sockets;
/// tenant `b` gets a whole store's 256; and once the first stores end,
/// their sockets are free again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenants_stores_share_one_descriptor_count_and_another_tenant_keeps_its_own() {
    let home = tempfile::tempdir().unwrap();
    let e = own_builder(home.path())
        .max_descriptors_per_tenant(TENANT_CAP)
        .build()
        .unwrap();
    let sockets = &["1000", "tcp", "wait"];
    let first = holding(
        &e,
        NET_SOCKETS_HOLD,
        "network",
        session("a", sockets),
        "created",
    )
    .await;
    assert_eq!(first.said, "created 256\n", "a store's own cap");

    let second = run_to_end(&e, NET_SOCKETS_HOLD, "network", session("a", &["1000"])).await;
    assert!(
        second.starts_with("created 44\nerror ") && second.contains("new-socket-limit"),
        "0.2: {second}"
    );
    let at_03 = run_to_end(&e, WASI03_SOCKETS_HOLD, "network", session("a", &["1000"])).await;
    assert!(
        at_03.starts_with("created 44\nerror ")
            && at_03.contains("a tenant's stores 300 sockets and files together"),
        "0.3: {at_03}"
    );

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "x").unwrap();
    let files = with_data(session("a", &["1000", "/data/f", "release"]), dir.path());
    let files = holding(&e, SANDBOX_FILES_HOLD, "compute", files, "released").await;
    assert!(
        files.said.starts_with("opened 43\nerror ")
            && files.said.to_lowercase().contains("quota")
            && files.said.ends_with("released 43\n"),
        "files: {}",
        files.said
    );
    let beside = run_to_end(&e, NET_SOCKETS_HOLD, "network", session("a", &["1000"])).await;
    assert!(
        beside.starts_with("created 43\nerror "),
        "the closed files left the count, the preopen stays: {beside}"
    );

    let other = run_to_end(&e, NET_SOCKETS_HOLD, "network", session("b", &["1000"])).await;
    assert!(
        other.starts_with("created 256\nerror "),
        "tenant b: {other}"
    );

    files.end().await;
    first.end().await;
    let again = run_to_end(&e, NET_SOCKETS_HOLD, "network", session("a", &["1000"])).await;
    assert!(again.starts_with("created 256\nerror "), "after: {again}");
}

/// The tenant's count takes outgoing requests too: beside a store of its
/// tenant holding 256 sockets, a store sending a thousand `wasi:http`
/// requests at once to a loopback server that never answers holds the 44
/// connections left of the tenant's 300, and the rest are answered
/// `connection-limit-reached` with no connection opened (counted by the
/// store alone, it would have held 256).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenants_requests_take_from_the_count_its_sockets_hold() {
    let home = tempfile::tempdir().unwrap();
    let e = own_builder(home.path())
        .max_descriptors_per_tenant(TENANT_CAP)
        .net_allow(Cidr::parse_list("127.0.0.0/8").unwrap())
        .build()
        .unwrap();
    let sockets = session("a", &["1000", "tcp", "wait"]);
    let first = holding(&e, NET_SOCKETS_HOLD, "network", sockets, "created").await;
    assert_eq!(first.said, "created 256\n", "a store's own cap");

    let silent = crate::loopback::Silent::start();
    let addr = silent.addr.to_string();
    let sent = session("a", &["1000", &addr]);
    let requests = holding(&e, NET_REQUESTS_HOLD, "network", sent, "pending").await;
    let connections = silent.accepted();
    assert_eq!(
        requests.said, "pending 44; refused 956\n",
        "the server took {connections} connections"
    );
    assert!(
        connections <= 44,
        "the server took {connections} connections"
    );
    requests.end().await;
    first.end().await;
}

/// Asserts a 0.3 guest that opens one file a thousand times in `mode`
/// (`wasi03_files_hold`'s) gets the store's 511 beside its preopen, then
/// the refusal; its file I/O is off the calling thread, as under
/// `wbx serve`, so its calls are in flight together.
async fn assert_03_opens_get_511(mode: &str) {
    let home = tempfile::tempdir().unwrap();
    let e = own_builder(home.path()).build().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "x").unwrap();
    let opts = with_data(session("a", &["1000", mode]), dir.path());
    let opened = run_to_end(&e, WASI03_FILES_HOLD, "compute", opts).await;
    assert!(
        opened.starts_with("opened 511\nerror ") && opened.contains("too-many-open-files"),
        "{mode}: {opened}"
    );
}

/// The counts hold for calls made together too: a 0.3 guest makes a
/// thousand `open-at` calls at once, each in flight before any is
/// answered. Before, each call counted the table before any open had
/// filled it, and all thousand files were opened; now the calls in flight
/// count, and it gets the store's 511.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_03_guest_opening_files_all_at_once_gets_no_more_than_one_at_a_time() {
    assert_03_opens_get_511("together").await;
}

/// A call the guest cancels in flight gives back what it took: a 0.3
/// guest starts a thousand `open-at` calls at once, drops them all before
/// the host answers (cancelling each), then opens one at a time and still
/// gets the store's 511 (488 before: each cancelled call kept its place).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_03_guest_cancelling_its_opens_in_flight_keeps_its_whole_count() {
    assert_03_opens_get_511("cancelled").await;
}
