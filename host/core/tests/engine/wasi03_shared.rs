//! A WASI 0.3 handler served on shared instances (`serve`'s default at
//! 0.3): concurrent requests on one instance, what one request leaves for
//! the next, an instance retired at its age limit with the work it left
//! running, and a revocation stopping an instance in flight.

use crate::loopback::{request, serve_handler};
use std::time::{Duration, Instant};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_03_handler_holds_concurrent_requests_on_one_instance_and_a_fresh_one_does_not() {
    let home = tempfile::tempdir().unwrap();
    let e = crate::common::own_engine(home.path());
    let shared = serve_handler(&e, workbooks::ServeOptions::default()).await;
    let fresh = serve_handler(
        &e,
        workbooks::ServeOptions {
            instance_per_request: true,
            ..Default::default()
        },
    )
    .await;
    // State a guest keeps is seen by the next request on a shared
    // instance (docs/operating.md's isolation story), never on a fresh one.
    for (addr, counts) in [(shared, ["1\n", "2\n"]), (fresh, ["1\n", "1\n"])] {
        for want in counts {
            assert_eq!(request(addr, "GET", "/count", "").await, (200, want.into()));
        }
    }
    // Eight requests at once: a shared instance holds several in flight.
    let most = |addr| async move {
        let all = futures::future::join_all((0..8).map(|_| request(addr, "GET", "/inflight", "")));
        all.await
            .into_iter()
            .map(|(status, body)| {
                assert_eq!(status, 200);
                body.trim().parse::<u64>().unwrap()
            })
            .max()
            .unwrap()
    };
    assert!(most(shared).await > 1, "no two requests shared an instance");
    assert_eq!(most(fresh).await, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shared_03_instance_is_not_stopped_by_what_all_its_requests_wrote() {
    // One request after another, so one instance takes them all: twelve
    // that write 1 MiB each, past any one store's 8 MiB output cap, are
    // all answered, and by the same instance.
    let home = tempfile::tempdir().unwrap();
    let e = crate::common::own_engine(home.path());
    let addr = serve_handler(&e, workbooks::ServeOptions::default()).await;
    for n in 0..12 {
        assert_eq!(
            request(addr, "GET", "/chatty", "").await,
            (200, "said a lot\n".into()),
            "request {n}"
        );
    }
    assert_eq!(
        request(addr, "GET", "/count", "").await,
        (200, "13\n".into())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn work_left_running_on_a_shared_03_instance_ends_with_it_at_its_age_limit() {
    // A request leaves a task ticking for ever; steady traffic keeps
    // renewing the instance's deadline, so only its age retires it, and
    // the task with it: the next instance starts from no ticks.
    let home = tempfile::tempdir().unwrap();
    let e = crate::common::own_engine(home.path());
    let opts = workbooks::ServeOptions {
        shared_max_age: Duration::from_millis(800),
        ..Default::default()
    };
    let addr = serve_handler(&e, opts).await;
    assert_eq!(request(addr, "GET", "/linger", "").await.0, 200);
    let start = Instant::now();
    let mut before = 0;
    while start.elapsed() < Duration::from_millis(600) {
        let (_, ticks) = request(addr, "GET", "/ticks", "").await;
        before = ticks.trim().parse::<u64>().unwrap();
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(before > 0, "the lingering task never ran");
    let mut after = before;
    while start.elapsed() < Duration::from_secs(3) {
        let (_, ticks) = request(addr, "GET", "/ticks", "").await;
        after = ticks.trim().parse::<u64>().unwrap();
        if after < before {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        after < before,
        "the instance outlived its age: {before} then {after} ticks"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revoking_the_tenant_stops_a_shared_03_instance_in_flight() {
    let home = tempfile::tempdir().unwrap();
    let e = crate::common::own_engine(home.path());
    let opts = workbooks::ServeOptions {
        tenant: "acme".into(),
        timeout: Some(Duration::from_secs(30)),
        ..Default::default()
    };
    let addr = serve_handler(&e, opts).await;
    assert_eq!(request(addr, "GET", "/count", "").await.0, 200);
    let hung = tokio::spawn(request(addr, "GET", "/hang", ""));
    tokio::time::sleep(Duration::from_millis(200)).await;
    let start = Instant::now();
    e.cadence().revocations().revoke("acme").unwrap();
    assert_eq!(hung.await.unwrap(), (403, "revoked\n".into()));
    assert!(start.elapsed() < Duration::from_secs(10));
    assert_eq!(
        request(addr, "GET", "/count", "").await,
        (403, "revoked\n".into())
    );
}
