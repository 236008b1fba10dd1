//! Commands: the registry's guards, the exec broker's deny ladder (in
//! order, each audited), the per-invocation envelope, arg modes, tiers and
//! the core-module lane.

use crate::common::{own_builder, own_engine};
use guest_artifacts::*;
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;
use workbooks::commands::{ArgMode, RegistryError, Tier};
use workbooks::{
    Cap, CapSet, CommandEnv, CommandError, CommandPolicy, Engine, Grant, LineError, LineOptions,
};

guest_artifacts::foreach_commands!(assert_test_exists);

fn bytes(path: &str) -> Vec<u8> {
    std::fs::read(path).unwrap()
}

/// A fresh engine with its own home (and the child binary for os_process).
fn fresh() -> (tempfile::TempDir, Engine) {
    let home = tempfile::tempdir().unwrap();
    let engine = own_builder(home.path())
        .child_binary(crate::CHILD)
        .build()
        .unwrap();
    (home, engine)
}

fn opts(profile: &str) -> LineOptions {
    LineOptions {
        profile: profile.into(),
        ..LineOptions::default()
    }
}

fn env(tenant: &str, caller: &[Cap]) -> CommandEnv {
    CommandEnv {
        tenant: tenant.into(),
        session_id: "ladder".into(),
        caller_caps: CapSet::of(caller),
        grant: Grant::profile("compute"),
        dirs: Vec::new(),
        policy: CommandPolicy::default(),
        scope: None,
    }
}

async fn run_env(e: &Engine, env: &CommandEnv, name: &str) -> Result<String, CommandError> {
    e.commands()
        .run_as(env, Cap::Commands, name, vec![], bytes::Bytes::new())
        .await
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
}

fn command_error(r: Result<workbooks::CommandOutput, LineError>) -> CommandError {
    match r {
        Err(LineError::Command { error, .. }) => error,
        other => panic!("expected a command error, got {other:?}"),
    }
}

#[tokio::test]
async fn the_deny_ladder_refuses_in_order_and_audits_every_denial() {
    let (_home, e) = fresh();
    e.registry()
        .register("kat", bytes(CLI_CAT), ArgMode::Argv, Tier::Instance)
        .unwrap();
    let ok = env("acme", &[Cap::Commands]);
    assert_eq!(run_env(&e, &ok, "kat").await.unwrap(), "");

    // Each rung wins over every rung below it.
    e.cadence().revocations().revoke("evil").unwrap();
    let mut revoked = env("evil", &[]);
    revoked.policy.depth = 99;
    assert_eq!(
        run_env(&e, &revoked, "nope").await,
        Err(CommandError::Revoked)
    );

    let mut denied = env("acme", &[Cap::Vfs]);
    denied.policy.depth = 99;
    assert_eq!(
        run_env(&e, &denied, "nope").await,
        Err(CommandError::Denied)
    );

    let mut deep = env("acme", &[Cap::Commands]);
    deep.policy.depth = 8;
    deep.policy.allowlist = Some(Arc::new(BTreeSet::new()));
    assert_eq!(
        run_env(&e, &deep, "nope").await,
        Err(CommandError::MaxDepth(8))
    );

    let mut listed = env("acme", &[Cap::Commands]);
    listed.policy.allowlist = Some(Arc::new(BTreeSet::from(["kat".to_string()])));
    assert_eq!(
        run_env(&e, &listed, "nope").await,
        Err(CommandError::NotGranted("nope".into()))
    );
    assert_eq!(run_env(&e, &listed, "kat").await.unwrap(), "");

    assert_eq!(
        run_env(&e, &ok, "nope").await,
        Err(CommandError::Unknown("nope".into()))
    );

    let audit = e.cadence().audit().summary();
    for reason in [
        "revoked",
        "denied",
        "max_depth",
        "command_not_granted",
        "unknown_command",
    ] {
        assert_eq!(audit.counts.get(reason), Some(&1), "{reason}: {audit:?}");
    }
    let caps: Vec<&str> = audit.recent.iter().map(|a| a.cap.as_str()).collect();
    assert_eq!(caps, ["exec"; 5], "{audit:?}");
}

/// An engine with its own home whose tenants may make `calls` calls an
/// hour.
fn rate_limited(calls: u64) -> (tempfile::TempDir, Engine) {
    let home = tempfile::tempdir().unwrap();
    let engine = own_builder(home.path())
        .rate_limit(calls, Duration::from_secs(3600))
        .build()
        .unwrap();
    (home, engine)
}

#[tokio::test]
async fn the_rate_limit_cuts_a_tenant_off() {
    let (_home, e) = rate_limited(3);
    let acme = env("acme", &[Cap::Commands]);
    for _ in 0..3 {
        run_env(&e, &acme, "true").await.ok();
    }
    assert_eq!(
        run_env(&e, &acme, "true").await,
        Err(CommandError::RateLimited)
    );
    assert_eq!(
        e.cadence().audit().summary().counts.get("rate_limited"),
        Some(&1)
    );
}

/// The options of a line run by tenant `acme`.
fn acme_line() -> LineOptions {
    LineOptions {
        tenant: "acme".into(),
        ..LineOptions::default()
    }
}

#[tokio::test]
async fn every_stage_of_a_line_counts_against_the_rate_limit() {
    let (_home, e) = rate_limited(3);
    match e
        .commands()
        .run_line("true | true | true | true", acme_line())
        .await
    {
        Err(LineError::Command { name, error }) => {
            assert_eq!((name.as_str(), error), ("true", CommandError::RateLimited));
        }
        other => panic!("expected the fourth stage over the limit, got {other:?}"),
    }
    assert_eq!(
        e.cadence().audit().summary().counts.get("rate_limited"),
        Some(&1)
    );
}

#[tokio::test]
async fn a_revocation_written_elsewhere_refuses_the_next_line_before_any_stage_runs() {
    let (home, e) = fresh();
    let line = "seq 1 3 | wc -l";
    let out = e.commands().run_line(line, acme_line()).await.unwrap();
    assert_eq!(&out.stdout[..], b"3\n");
    // What `wbx revoke` does from another process: its own view of the home.
    let elsewhere = workbooks::cadence::Revocations::new(Some(
        home.path().join(workbooks::cadence::REVOCATIONS_FILE),
    ));
    assert!(elsewhere.revoke("acme").unwrap());
    match e.commands().run_line(line, acme_line()).await {
        Err(LineError::Command { name, error }) => {
            assert_eq!((name.as_str(), error), ("seq", CommandError::Revoked));
        }
        other => panic!("expected the line refused at its first stage, got {other:?}"),
    }
    let other_tenant = e
        .commands()
        .run_line(line, LineOptions::default())
        .await
        .unwrap();
    assert_eq!(&other_tenant.stdout[..], b"3\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_runs_at_most_sixty_four_commands_at_once() {
    let (_home, e) = fresh();
    e.registry()
        .register(
            "nap",
            bytes(LIMITS_BLOCKING_SLEEP),
            ArgMode::Argv,
            Tier::Instance,
        )
        .unwrap();
    let busy = LineOptions {
        tenant: "busy".into(),
        stage_timeout: Some(Duration::from_secs(5)),
        ..opts("compute")
    };
    // Compiled and docked once up front, so the naps start together.
    let warm = LineOptions {
        stage_timeout: Some(Duration::from_millis(100)),
        ..busy.clone()
    };
    let _ = e.commands().run("nap", vec![], warm).await;
    // 65 naps that outlast their admission: exactly one finds no slot.
    let naps: Vec<_> = (0..65)
        .map(|_| {
            let (e, o) = (e.clone(), busy.clone());
            tokio::spawn(async move { e.commands().run("nap", vec![], o).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(1)).await;
    // Another tenant is not held up by this one's load.
    let calm = LineOptions {
        tenant: "calm".into(),
        ..opts("compute")
    };
    let out = e.commands().run("true", vec![], calm).await.unwrap();
    assert_eq!(out.exit_code, 0);
    let (mut refused, mut timed_out) = (0, 0);
    for nap in naps {
        match command_error(nap.await.unwrap()) {
            CommandError::TooManyRunning(64) => refused += 1,
            CommandError::Timeout(_) => timed_out += 1,
            other => panic!("unexpected {other}"),
        }
    }
    assert_eq!((refused, timed_out), (1, 64));
    let audit = e.cadence().audit().summary();
    assert_eq!(audit.counts.get("too_many_running"), Some(&1));
    // The slots come back when the commands end.
    let out = e.commands().run("true", vec![], busy).await.unwrap();
    assert_eq!(out.exit_code, 0);
}

#[tokio::test]
async fn commands_nest() {
    let (_home, e) = fresh();
    e.registry()
        .register("nest", bytes(COMMANDS_NEST), ArgMode::Argv, Tier::Instance)
        .unwrap();
    // Each level runs the next through run-command until the broker stops
    // the chain at depth 8.
    let out = e
        .commands()
        .run("nest", vec!["nest".into()], opts("minimal"))
        .await
        .unwrap();
    assert_eq!(out.exit_code, 3);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "refused: Error::MaxDepth(8)\n"
    );
    assert_eq!(
        e.cadence().audit().summary().counts.get("max_depth"),
        Some(&1)
    );
}

#[tokio::test]
async fn commands_run() {
    let (_home, e) = fresh();
    e.registry()
        .register("kat", bytes(CLI_CAT), ArgMode::Argv, Tier::Instance)
        .unwrap();
    e.registry()
        .register("runner", bytes(COMMANDS_RUN), ArgMode::Argv, Tier::Instance)
        .unwrap();
    let mut o = opts("minimal");
    o.stdin = "piped through\n".into();
    let out = e
        .commands()
        .run("runner", vec!["kat".into(), "ada; rm -rf /".into()], o)
        .await
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "piped through\nexit 0\n"
    );
    // The argument with `;` reached kat as one argv entry (echoed on stderr).
    let out = e
        .commands()
        .run("runner", vec!["ghost".into()], opts("minimal"))
        .await
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "error Error::UnknownCommand(\"ghost\")\n"
    );
    // Under compute the runner cannot even dock: commands is absent.
    let err = command_error(
        e.commands()
            .run("runner", vec!["kat".into()], opts("compute"))
            .await,
    );
    assert!(
        matches!(&err, CommandError::Refused(m) if m.contains("capability not granted: commands")),
        "{err}"
    );
}

#[tokio::test]
async fn registration_guards_names_bytes_and_capacity() {
    let (home, e) = fresh();
    let r = e.registry();
    for bad in ["", "a/b", "..", "a b", "ü", &"x".repeat(129)] {
        assert!(
            matches!(
                r.register(bad, bytes(CLI_CAT), ArgMode::Argv, Tier::Instance),
                Err(RegistryError::InvalidName(_))
            ),
            "{bad:?}"
        );
    }
    for reserved in ["jq", "grep", "upper", "wbox", "sort", "cat", "shell"] {
        let err = r
            .register(reserved, bytes(CLI_CAT), ArgMode::Argv, Tier::Instance)
            .unwrap_err();
        assert!(err.to_string().starts_with("reserved_name"), "{err}");
        assert!(matches!(
            r.remove(reserved),
            Err(RegistryError::Reserved(_))
        ));
    }
    let err = r
        .register(
            "script",
            b"#!/bin/sh\nrm -rf /".to_vec(),
            ArgMode::Argv,
            Tier::Instance,
        )
        .unwrap_err();
    assert!(matches!(err, RegistryError::NotWasm(_)), "{err}");

    // Idempotent: the same bytes land on the same path.
    let a = r
        .register("kat", bytes(CLI_CAT), ArgMode::Argv, Tier::Instance)
        .unwrap();
    let b = r
        .register("kat", bytes(CLI_CAT), ArgMode::Argv, Tier::Instance)
        .unwrap();
    assert_eq!(a.sha256, b.sha256);
    assert_eq!(
        std::fs::read_dir(home.path().join("store"))
            .unwrap()
            .count(),
        1
    );

    // At capacity a new name is refused; an existing one can still swap.
    let full: Vec<serde_json::Value> = (0..workbooks::commands::registry::MAX_REGISTERED)
        .map(|i| serde_json::json!({"name": format!("c{i}"), "sha256": a.sha256, "arg_mode": "argv", "tier": "instance", "size": 1, "registered_ms": 0}))
        .collect();
    std::fs::write(
        home.path().join("registry.json"),
        serde_json::to_vec(&full).unwrap(),
    )
    .unwrap();
    assert!(matches!(
        r.register("one-more", bytes(CLI_CAT), ArgMode::Argv, Tier::Instance),
        Err(RegistryError::Full)
    ));
    r.replace("c7", bytes(CLI_HELLO), ArgMode::Argv, Tier::Instance)
        .unwrap();
}

#[test]
fn a_name_held_already_is_replaced_only_when_asked_and_catalog_names_hold_only_their_pin() {
    let home = tempfile::tempdir().unwrap();
    let r = workbooks::commands::Registry::new(home.path());
    let first = r
        .register("greet", bytes(CLI_HELLO), ArgMode::Argv, Tier::Instance)
        .unwrap();
    // The same registration again changes nothing.
    assert_eq!(
        r.register("greet", bytes(CLI_HELLO), ArgMode::Argv, Tier::Instance)
            .unwrap(),
        first
    );
    // Other bytes, or another tier, under the name: refused, naming what
    // the name holds.
    for (b, tier) in [(CLI_CAT, Tier::Instance), (CLI_HELLO, Tier::OsProcess)] {
        let err = r
            .register("greet", bytes(b), ArgMode::Argv, tier)
            .unwrap_err();
        assert!(matches!(err, RegistryError::Exists { .. }), "{err}");
        assert!(err.to_string().contains(&first.sha256), "{err}");
        assert!(err.to_string().contains("--replace"), "{err}");
    }
    assert_eq!(r.get("greet").unwrap().unwrap(), first);
    let (now, replaced) = r
        .replace("greet", bytes(CLI_CAT), ArgMode::Argv, Tier::Instance)
        .unwrap();
    assert_eq!(replaced, Some(first));
    assert_eq!(r.get("greet").unwrap().unwrap(), now);
    // `python` and `qjs` are the catalog's: only their pinned bytes.
    for name in ["python", "qjs"] {
        for attempt in [
            r.register(name, bytes(CLI_HELLO), ArgMode::Argv, Tier::Instance),
            r.replace(name, bytes(CLI_HELLO), ArgMode::Argv, Tier::Instance)
                .map(|(e, _)| e),
        ] {
            let err = attempt.unwrap_err();
            assert!(matches!(err, RegistryError::Pinned { .. }), "{name}: {err}");
        }
    }
}

#[tokio::test]
async fn names_hot_swap_and_survive_a_restart() {
    let (home, e) = fresh();
    e.registry()
        .register("tool", bytes(CLI_HELLO), ArgMode::Argv, Tier::Instance)
        .unwrap();
    let out = e
        .commands()
        .run("tool", vec![], opts("compute"))
        .await
        .unwrap();
    assert_eq!(&out.stdout[..], b"hello\n");
    e.registry()
        .replace("tool", bytes(CLI_EXIT_CODE), ArgMode::Argv, Tier::Instance)
        .unwrap();
    let out = e
        .commands()
        .run("tool", vec!["4".into()], opts("compute"))
        .await
        .unwrap();
    assert_eq!((out.exit_code, &out.stdout[..]), (4, &b"out\n"[..]));
    drop(e);
    let again = own_engine(home.path());
    assert_eq!(
        again.registry().get("tool").unwrap().unwrap().sha256.len(),
        64
    );
    let out = again
        .commands()
        .run("tool", vec!["0".into()], opts("compute"))
        .await
        .unwrap();
    assert_eq!(out.exit_code, 0);
}

#[tokio::test]
async fn a_store_file_edited_on_disk_is_refused_as_artifact_integrity() {
    let (_home, e) = fresh();
    let entry = e
        .registry()
        .register("tool", bytes(CLI_HELLO), ArgMode::Argv, Tier::Instance)
        .unwrap();
    assert_eq!(
        e.commands()
            .run("tool", vec![], opts("compute"))
            .await
            .unwrap()
            .exit_code,
        0
    );
    // Swap in other valid wasm under the same name on disk.
    let path = e.registry().path_of(&entry);
    std::fs::write(&path, bytes(CLI_EXIT_CODE)).unwrap();
    let err = command_error(e.commands().run("tool", vec![], opts("compute")).await);
    assert!(matches!(err, CommandError::Integrity(_)), "{err}");
    assert_eq!(
        e.cadence()
            .audit()
            .summary()
            .counts
            .get("artifact_integrity"),
        Some(&1)
    );
}

#[tokio::test]
async fn the_envelope_names_every_breach_and_keeps_non_zero_exits_intact() {
    let (_home, e) = fresh();
    let r = e.registry();
    r.register("kat", bytes(CLI_CAT), ArgMode::Argv, Tier::Instance)
        .unwrap();
    r.register("code", bytes(CLI_EXIT_CODE), ArgMode::Argv, Tier::Instance)
        .unwrap();
    r.register(
        "spin",
        bytes(LIMITS_RUNAWAY_LOOP),
        ArgMode::Argv,
        Tier::Instance,
    )
    .unwrap();

    let out = e
        .commands()
        .run("code", vec!["3".into()], opts("compute"))
        .await
        .unwrap();
    assert_eq!(
        (out.exit_code, &out.stdout[..], &out.stderr[..]),
        (3, &b"out\n"[..], &b"err\n"[..])
    );

    let big_arg = "a".repeat(256 << 10);
    let err = command_error(
        e.commands()
            .run("kat", vec![big_arg], opts("compute"))
            .await,
    );
    assert_eq!(err, CommandError::ArgvTooLarge(256 << 10));

    let mut o = opts("compute");
    o.stdin = vec![b'x'; (64 << 20) + 1].into();
    assert_eq!(
        command_error(e.commands().run("kat", vec![], o).await),
        CommandError::StdinTooLarge(64 << 20)
    );

    let mut o = opts("compute");
    o.stdin = vec![b'x'; (8 << 20) + 1].into();
    assert_eq!(
        command_error(e.commands().run("kat", vec![], o).await),
        CommandError::OutputTooLarge(8 << 20)
    );

    let mut o = opts("compute");
    o.stdin = vec![b'x'; 8 << 20].into();
    assert_eq!(
        e.commands()
            .run("kat", vec![], o)
            .await
            .unwrap()
            .stdout
            .len(),
        8 << 20
    );

    let mut o = opts("compute");
    o.stage_timeout = Some(Duration::from_millis(300));
    // Only the clock may stop it: a fast machine spends 5e9 fuel in 300 ms.
    o.stage_fuel = Some(u64::MAX);
    assert_eq!(
        command_error(e.commands().run("spin", vec![], o).await),
        CommandError::Timeout(Duration::from_millis(300))
    );

    let mut o = opts("compute");
    o.stage_fuel = Some(1_000_000);
    assert_eq!(
        command_error(e.commands().run("spin", vec![], o).await),
        CommandError::Fuel
    );
}

#[tokio::test]
async fn stdin1_commands_get_their_argument_as_the_first_stdin_line() {
    let (_home, e) = fresh();
    e.registry()
        .register("kat1", bytes(CLI_CAT), ArgMode::Stdin1, Tier::Instance)
        .unwrap();
    let mut o = opts("compute");
    o.stdin = "rest\n".into();
    let out = e
        .commands()
        .run("kat1", vec!["ada; rm".into()], o)
        .await
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "ada; rm\nrest\n");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "\n",
        "no argv reached the tool"
    );
}

#[tokio::test]
async fn os_process_commands_run_in_a_child() {
    let (_home, e) = fresh();
    let r = e.registry();
    r.register("kat", bytes(CLI_CAT), ArgMode::Argv, Tier::OsProcess)
        .unwrap();
    r.register("code", bytes(CLI_EXIT_CODE), ArgMode::Argv, Tier::OsProcess)
        .unwrap();
    r.register(
        "spin",
        bytes(LIMITS_RUNAWAY_LOOP),
        ArgMode::Argv,
        Tier::OsProcess,
    )
    .unwrap();
    let mut o = opts("compute");
    o.stdin = "through a process\n".into();
    let out = e.commands().run("kat", vec!["x".into()], o).await.unwrap();
    assert_eq!(
        (&out.stdout[..], &out.stderr[..]),
        (&b"through a process\n"[..], &b"x\n"[..])
    );
    assert_eq!(
        e.commands()
            .run("code", vec!["9".into()], opts("compute"))
            .await
            .unwrap()
            .exit_code,
        9
    );
    let mut o = opts("compute");
    o.stage_timeout = Some(Duration::from_millis(300));
    // Only the clock may stop it: a fast machine spends 5e9 fuel in 300 ms.
    o.stage_fuel = Some(u64::MAX);
    assert!(matches!(
        command_error(e.commands().run("spin", vec![], o).await),
        CommandError::Timeout(_)
    ));

    let (_h, no_wbx) = {
        let home = tempfile::tempdir().unwrap();
        let e = own_engine(home.path());
        (home, e)
    };
    no_wbx
        .registry()
        .register("kat", bytes(CLI_CAT), ArgMode::Argv, Tier::OsProcess)
        .unwrap();
    let err = command_error(no_wbx.commands().run("kat", vec![], opts("compute")).await);
    assert!(
        err.to_string().contains("tier os_process unavailable"),
        "{err}"
    );
}

#[tokio::test]
async fn a_command_sent_at_a_fan_out_tier_is_refused_by_name_not_run_in_process() {
    let (_h, e) = fresh();
    let hello = workbooks::Artifact::from_bytes(bytes(CLI_HELLO)).unwrap();
    for tier in [Tier::Node, Tier::Container] {
        let sent = e
            .commands()
            .run_sent(
                &env("t", &[Cap::Commands]),
                hello.clone(),
                tier,
                vec![],
                bytes::Bytes::new(),
            )
            .await;
        let Err(CommandError::Refused(why)) = sent else {
            panic!("{tier:?}: {sent:?}");
        };
        assert!(why.contains("runs at instance or os_process"), "{why}");
    }
}

#[tokio::test]
async fn a_sent_command_for_a_revoked_tenant_is_refused_and_admission_keeps_the_ladder() {
    let (_h, e) = fresh();
    let hello = workbooks::Artifact::from_bytes(bytes(CLI_HELLO)).unwrap();
    let run = |who: &str| {
        let env = env(who, &[Cap::Commands]);
        let (e, hello) = (e.clone(), hello.clone());
        async move {
            e.commands()
                .run_sent(&env, hello, Tier::Instance, vec![], bytes::Bytes::new())
                .await
        }
    };
    assert_eq!(run("alive").await.unwrap().exit_code, 0);
    e.cadence().revocations().revoke("gone").unwrap();
    assert!(matches!(run("gone").await, Err(CommandError::Revoked)));
    // Admission is the ladder's: a revoked tenant, an unknown command and
    // a caller without the cap are each refused before anything is sent.
    let admit = |who: &str, caps: &[Cap], name: &str| {
        e.commands()
            .admit(
                &env(who, caps),
                Cap::Commands,
                name,
                vec![],
                bytes::Bytes::new(),
            )
            .map(|a| a.artifact.sha256_hex())
    };
    assert!(admit("alive", &[Cap::Commands], "upper").is_ok());
    assert!(matches!(
        admit("gone", &[Cap::Commands], "upper"),
        Err(CommandError::Revoked)
    ));
    assert!(admit("alive", &[Cap::Commands], "no-such-command").is_err());
    assert!(admit("alive", &[], "upper").is_err());
}
