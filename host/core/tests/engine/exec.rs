//! exec: spawn, wait, kill, and the live-process cap.

use crate::common::engine;
use guest_artifacts::*;
use workbooks::{Engine, LineOptions};

guest_artifacts::foreach_exec!(assert_test_exists);

fn fresh() -> (tempfile::TempDir, Engine) {
    crate::common::engine_with_commands(&[
        ("kat", CLI_CAT),
        ("spin", LIMITS_RUNAWAY_LOOP),
        ("spawner", EXEC_SPAWN),
    ])
}

async fn spawner(e: &Engine, args: &[&str]) -> String {
    let opts = LineOptions {
        profile: "minimal".into(),
        // Children outlive their kill by the clock, not by fuel a fast
        // machine burns first.
        stage_fuel: Some(u64::MAX),
        ..LineOptions::default()
    };
    let out = e
        .commands()
        .run(
            "spawner",
            args.iter().map(|a| a.to_string()).collect(),
            opts,
        )
        .await
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn exec_spawn() {
    let (_home, e) = fresh();
    assert_eq!(
        spawner(&e, &["spawn", "3", "kat"]).await,
        "0\n1\n2\nheld 0\n"
    );
}

#[tokio::test]
async fn a_tenant_holds_at_most_thirty_two_live_processes() {
    let (_home, e) = fresh();
    let out = spawner(&e, &["hold", "40", "kat"]).await;
    assert!(out.contains("spawn 32: Error::TooManyRunning(32)"), "{out}");
    assert!(out.ends_with("held 32\n"), "{out}");
    let audit = e.cadence().audit().summary();
    assert_eq!(audit.counts.get("too_many_live_processes"), Some(&1));
    // The slots come back once the processes are done.
    assert_eq!(spawner(&e, &["spawn", "2", "kat"]).await, "0\n1\nheld 0\n");
}

#[tokio::test]
async fn a_killed_process_stops_and_can_be_awaited_once() {
    let (_home, e) = fresh();
    let out = spawner(&e, &["kill", "spin"]).await;
    assert_eq!(
        out,
        "killed while running: true\nafter kill: Err(Error::Trap(\"killed\"))\n\
         second wait: Err(Error::UnknownCommand(\"process already awaited\"))\n"
    );
}

#[tokio::test]
async fn exec_is_absent_without_its_cap() {
    let (_home, e) = fresh();
    let opts = LineOptions {
        profile: "compute".into(),
        ..LineOptions::default()
    };
    let err = e
        .commands()
        .run(
            "spawner",
            vec!["spawn".into(), "1".into(), "kat".into()],
            opts,
        )
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("capability not granted: exec"),
        "{err}"
    );
    let _ = engine();
}

#[tokio::test]
async fn exec_alone_is_enough_to_spawn_without_commands() {
    let (_home, e) = fresh();
    let opts = LineOptions {
        profile: "minimal".into(),
        caps: Some(workbooks::CapSet::of(&[workbooks::Cap::Exec])),
        ..LineOptions::default()
    };
    let out = e
        .commands()
        .run(
            "spawner",
            ["spawn", "1", "kat"].map(String::from).to_vec(),
            opts,
        )
        .await
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "0\nheld 0\n");
}
