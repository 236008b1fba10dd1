//! queue: FIFO order, limits, waiting pops, tenant isolation, durability.

use crate::common::own_engine;
use guest_artifacts::*;
use std::time::{Duration, Instant};
use workbooks::{Artifact, Engine, Grant, SessionOptions};

guest_artifacts::foreach_queue!(assert_test_exists);

async fn q(e: &Engine, tenant: &str, args: &[&str]) -> String {
    let docked = e
        .dock(
            &Artifact::from_file(QUEUE_OPS).unwrap(),
            &Grant::profile("minimal"),
        )
        .unwrap();
    let mut opts = SessionOptions::new("queue", tenant);
    opts.args = args.iter().map(|a| a.to_string()).collect();
    opts.timeout = Some(Duration::from_secs(60));
    let out = e.run(&docked, opts).await.unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn engine(home: &tempfile::TempDir) -> Engine {
    own_engine(home.path())
}

#[tokio::test]
async fn queue_ops() {
    let home = tempfile::tempdir().unwrap();
    let e = engine(&home);
    let out = q(
        &e,
        "a",
        &[
            "push", "jobs", "one", "push", "jobs", "two", "len", "jobs", "pop", "jobs", "pop",
            "jobs", "pop", "jobs", "len", "jobs",
        ],
    )
    .await;
    assert_eq!(out, "Ok(1)\nOk(2)\nOk(2)\none\ntwo\nOk(None)\nOk(0)\n");
    let out = q(
        &e,
        "a",
        &[
            "pushn", "big", "262144", "pushn", "big", "262145", "push", "bad/name", "x",
        ],
    )
    .await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "Ok(1)");
    assert_eq!(lines[1], "Err(Error::MessageTooLarge(262144))");
    assert!(lines[2].contains("InvalidName"), "{out}");
}

#[tokio::test]
async fn a_queue_holds_at_most_a_thousand_messages() {
    let home = tempfile::tempdir().unwrap();
    let e = engine(&home);
    let out = q(
        &e,
        "a",
        &[
            "fill", "deep", "1000", "push", "deep", "more", "pop", "deep", "push", "deep", "fits",
        ],
    )
    .await;
    assert_eq!(
        out,
        "filled 1000\nErr(Error::QueueFull(1000))\n0\nOk(1000)\n"
    );
}

#[tokio::test]
async fn tenants_have_separate_queues_that_survive_a_restart() {
    let home = tempfile::tempdir().unwrap();
    let e = engine(&home);
    q(&e, "a", &["push", "shared", "for-a"]).await;
    assert_eq!(q(&e, "b", &["pop", "shared"]).await, "Ok(None)\n");
    drop(e);
    let e = engine(&home);
    assert_eq!(q(&e, "a", &["pop", "shared"]).await, "for-a\n");
}

#[tokio::test]
async fn a_waiting_pop_times_out_or_wakes_when_a_message_arrives() {
    let home = tempfile::tempdir().unwrap();
    let e = engine(&home);
    let start = Instant::now();
    assert_eq!(q(&e, "a", &["wait", "idle", "300"]).await, "Ok(None)\n");
    assert!(start.elapsed() >= Duration::from_millis(300));

    let waiter = {
        let e = e.clone();
        tokio::spawn(async move { q(&e, "a", &["wait", "wake", "20000"]).await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let start = Instant::now();
    q(&e, "a", &["push", "wake", "hello"]).await;
    assert_eq!(waiter.await.unwrap(), "hello\n");
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn a_revoked_tenant_cannot_use_its_queues() {
    let home = tempfile::tempdir().unwrap();
    let e = engine(&home);
    e.cadence().revocations().revoke("gone").unwrap();
    assert_eq!(
        q(&e, "gone", &["push", "x", "y"]).await,
        "Err(Error::Revoked)\n"
    );
}

#[tokio::test]
async fn a_tenant_cannot_make_queues_without_end() {
    let home = tempfile::tempdir().unwrap();
    let e = engine(&home);
    let names: Vec<String> = (0..=100).map(|i| format!("q{i}")).collect();
    let mut args: Vec<&str> = Vec::new();
    for name in &names {
        args.extend(["push", name.as_str(), "x"]);
    }
    let out = q(&e, "many", &args).await;
    let mut expected = vec!["Ok(1)"; 100];
    expected.push("Err(Error::TooManyQueues(100))");
    assert_eq!(out.lines().collect::<Vec<_>>(), expected);
    // An existing queue still takes messages; emptying one frees its slot.
    let out = q(
        &e,
        "many",
        &[
            "push", "q1", "y", "pop", "q0", "push", "q100", "x", "push", "q101", "x",
        ],
    )
    .await;
    assert_eq!(out, "Ok(2)\nx\nOk(1)\nErr(Error::TooManyQueues(100))\n");
    // The cap is the tenant's own.
    assert_eq!(q(&e, "other", &["push", "q0", "x"]).await, "Ok(1)\n");
}

#[tokio::test]
async fn a_tenants_queues_hold_at_most_sixty_four_mebibytes_in_all() {
    let home = tempfile::tempdir().unwrap();
    let e = engine(&home);
    // 256 messages of 256 KiB, spread over two queues, fill the tenant.
    let mut args: Vec<&str> = Vec::new();
    for i in 0..257 {
        args.extend(["pushn", if i % 2 == 0 { "even" } else { "odd" }, "262144"]);
    }
    let out = q(&e, "bulk", &args).await;
    // Each push reports its queue's new length: 1, 1, 2, 2, ... 128, 128.
    let mut expected: Vec<String> = (0..256).map(|i| format!("Ok({})", i / 2 + 1)).collect();
    expected.push("Err(Error::TenantFull(67108864))".into());
    assert_eq!(out.lines().collect::<Vec<_>>(), expected);
    assert_eq!(
        q(&e, "bulk", &["pop", "even", "pushn", "odd", "262144"])
            .await
            .lines()
            .nth(1),
        Some("Ok(129)")
    );
    assert_eq!(q(&e, "calm", &["pushn", "q", "262144"]).await, "Ok(1)\n");
}
