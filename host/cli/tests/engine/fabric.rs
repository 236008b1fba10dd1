//! The fabric, the `parallel` cap and kernels, attacked: a guest fanning
//! out without the cap, past the broker's caps, one failing input among
//! many; tasks forced to a tier and tiers that are not live here; kernels
//! that trap, and a component kernel.

use crate::common::{Failure, own_builder, run_with, text, wbx};
use guest_artifacts::*;
use std::path::Path;
use workbooks::commands::{ArgMode, Tier};
use workbooks::kernel::{Kernel, KernelError, KernelOptions};
use workbooks::state::Stdin;
use workbooks::{Engine, Grant, LineOptions, Profile, SessionOptions};
use workbooks_fabric::{FabricError, FabricOptions, Target, TaskInput, TierEnv};

guest_artifacts::foreach_parallel!(assert_test_exists);

/// Runs the `parallel_many` probe under `profile` with `args` and `stdin`.
async fn fan(profile: Profile, args: &[&str], stdin: &str) -> Result<String, String> {
    let mut opts = SessionOptions::new("fan", "default");
    opts.args = args.iter().map(|a| a.to_string()).collect();
    opts.stdin = Stdin::Bytes(stdin.to_string().into());
    match run_with(PARALLEL_MANY, &Grant::profile(profile.name()), opts).await {
        Ok(out) => Ok(text(&out.stdout)),
        Err(Failure::Dock(e)) => Err(e.to_string()),
        Err(Failure::Run(e)) => panic!("run failed: {e}"),
    }
}

#[tokio::test]
async fn parallel_many() {
    // posix grants parallel: every input runs, in input order, and the
    // broken one fails alone.
    let lines: Vec<String> = (0..40)
        .map(|i| match i {
            7 => "{broken".to_string(),
            i => format!("{{\"n\": {i}}}"),
        })
        .collect();
    let out = fan(Profile::Posix, &["jq", "4", "-c", ".n"], &lines.join("\n"))
        .await
        .unwrap();
    let rows: Vec<&str> = out.lines().collect();
    assert_eq!(rows.len(), 40, "{out}");
    for (i, row) in rows.iter().enumerate() {
        if i == 7 {
            assert!(
                row.starts_with("7 exit ") && !row.starts_with("7 exit 0"),
                "{row}"
            );
        } else {
            assert_eq!(*row, format!("{i} exit 0 {i}"));
        }
    }
    // An unknown command is each input's own error, not a crash.
    let out = fan(Profile::Posix, &["no-such-command", "2"], "a\nb")
        .await
        .unwrap();
    assert_eq!(
        out,
        "0 error Error::UnknownCommand(\"no-such-command\")\n1 error Error::UnknownCommand(\"no-such-command\")\n"
    );
}

#[tokio::test]
async fn a_profile_without_parallel_never_links_run_command_many() {
    // network holds commands but not parallel: the import is absent, so the
    // probe is refused at dock, before it runs, and the refusal names it.
    for profile in [Profile::Network, Profile::Compute, Profile::Minimal] {
        let err = fan(profile, &["jq", "1"], "{}").await.unwrap_err();
        assert!(
            err.contains("workbooks:engine/parallel") && err.contains("parallel"),
            "{profile:?}: {err}"
        );
    }
}

#[tokio::test]
async fn the_broker_refuses_a_fan_out_past_its_caps_before_any_run() {
    let out = fan(Profile::Posix, &["jq", "1", "--inputs", "1025"], "")
        .await
        .unwrap();
    assert!(out.starts_with("refused Error::Refused(\"run-command-many takes at most 1024 inputs; this call has 1025"), "{out}");
    let out = fan(Profile::Posix, &["jq", "65", "--inputs", "2"], "")
        .await
        .unwrap();
    assert!(out.contains("at most 64 at once; width 65"), "{out}");
    // 1024 inputs and width 0 (the default) are within the caps.
    let out = fan(Profile::Posix, &["true", "0", "--inputs", "1024"], "")
        .await
        .unwrap();
    assert_eq!(
        out.lines().filter(|l| l.ends_with("exit 0 ")).count(),
        1024,
        "{out}"
    );
}

fn inputs(n: usize) -> Vec<TaskInput> {
    (0..n)
        .map(|i| TaskInput {
            args: vec!["-c".into(), ".n * 2".into()],
            stdin: format!("{{\"n\": {i}}}"),
        })
        .collect()
}

fn own(home: &Path) -> Engine {
    own_builder(home)
        .child_binary(env!("CARGO_BIN_EXE_wbx"))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_fan_out_returns_every_result_in_input_order() {
    let home = tempfile::tempdir().unwrap();
    let e = own(home.path());
    let finished = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let opts = FabricOptions {
        width: 8,
        finished: Some(finished.clone()),
        ..FabricOptions::default()
    };
    let target = Target::Command("jq".into());
    let results = workbooks_fabric::Fabric::new(e.clone())
        .fan_out_as_host(LineOptions::default(), &target, inputs(200), &opts)
        .await
        .unwrap();
    assert_eq!(results.len(), 200);
    // The progress count saw every task finish, once.
    assert_eq!(finished.load(std::sync::atomic::Ordering::Relaxed), 200);
    for (i, r) in results.iter().enumerate() {
        assert_eq!(
            (r.index, r.exit, r.stdout.clone()),
            (i, Some(0), format!("{}\n", i * 2))
        );
    }
    for width in [0, 65] {
        let opts = FabricOptions {
            width,
            ..FabricOptions::default()
        };
        let err = workbooks_fabric::Fabric::new(e.clone())
            .fan_out_as_host(LineOptions::default(), &target, inputs(1), &opts)
            .await
            .unwrap_err();
        assert_eq!(err, FabricError::Width(width));
    }
    // One input past the cap is refused whole, before any task runs, for
    // a command and a kernel alike.
    let finished = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let opts = FabricOptions {
        finished: Some(finished.clone()),
        ..FabricOptions::default()
    };
    let max = workbooks_fabric::FABRIC_MAX_INPUTS;
    for target in [target.clone(), Target::Kernel("never-registered".into())] {
        let over = vec![TaskInput::default(); max + 1];
        let err = workbooks_fabric::Fabric::new(e.clone())
            .fan_out_as_host(LineOptions::default(), &target, over, &opts)
            .await
            .unwrap_err();
        assert_eq!(
            err,
            FabricError::TooManyInputs {
                given: max + 1,
                max
            }
        );
    }
    assert_eq!(finished.load(std::sync::atomic::Ordering::Relaxed), 0);
}

#[tokio::test]
async fn a_task_forced_to_a_stronger_tier_runs_there_and_a_weaker_one_is_never_taken() {
    let home = tempfile::tempdir().unwrap();
    let e = own(home.path());
    let cat = std::fs::read(CLI_CAT).unwrap();
    e.registry()
        .register("cat1", cat.clone(), ArgMode::Argv, Tier::Instance)
        .unwrap();
    let tiers = [Tier::Instance, Tier::OsProcess, Tier::Container];
    for tier in tiers {
        let opts = FabricOptions {
            width: 2,
            tier: Some(tier),
            ..FabricOptions::default()
        };
        let input = vec![
            TaskInput {
                args: vec![],
                stdin: format!("via {}", tier.name())
            };
            3
        ];
        let results = workbooks_fabric::Fabric::new(e.clone())
            .fan_out_as_host(
                LineOptions::default(),
                &Target::Command("cat1".into()),
                input,
                &opts,
            )
            .await
            .unwrap();
        for r in &results {
            assert_eq!(
                (r.exit, r.stdout.as_str()),
                (Some(0), format!("via {}", tier.name()).as_str()),
                "{r:?}"
            );
        }
    }
    // The tier is at least the command's own.
    assert_eq!(Tier::Instance.at_least(Tier::OsProcess), Tier::OsProcess);
    assert_eq!(Tier::Container.at_least(Tier::Instance), Tier::Container);
}

#[test]
fn a_tier_that_is_not_live_says_why() {
    let bare = TierEnv::default();
    assert!(bare.resolve(Tier::Instance).is_ok());
    let cases = [
        (
            Tier::OsProcess,
            "tier unavailable: os_process (this engine has no child binary",
        ),
        (
            Tier::Container,
            "tier unavailable: container (bubblewrap not found",
        ),
        (
            Tier::Node,
            "tier unavailable: node (this engine has no remote tier",
        ),
    ];
    for (tier, want) in cases {
        let err = bare.resolve(tier).unwrap_err().to_string();
        assert!(err.starts_with(want), "{err}");
    }
    // The fabric runs the node tier, and says what it lacks.
    let home = tempfile::tempdir().unwrap();
    let fabric = workbooks_fabric::Fabric::new(own(home.path()));
    let err = fabric.tier_env(None).resolve(Tier::Node).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("tier unavailable: node (no NATS server: pass --nats URL"),
        "{err}"
    );
    let with_bus = fabric.tier_env(Some("nats://127.0.0.1:4222".into()));
    assert_eq!(with_bus.resolve(Tier::Node).is_ok(), cfg!(feature = "node"));
}

/// Adds one to every byte; traps on an input starting with `!`.
const BUMP: &str = KERNEL_BUMP_WAT;

#[tokio::test]
async fn a_kernel_fans_out_and_a_trapping_input_fails_alone() {
    let home = tempfile::tempdir().unwrap();
    let e = own(home.path());
    workbooks::kernel::Kernels::of(&e)
        .register("bump", wat::parse_str(BUMP).unwrap(), "process", false)
        .unwrap();
    let inputs: Vec<TaskInput> = (0..100)
        .map(|i| TaskInput {
            args: vec![],
            stdin: if i == 42 {
                "!".into()
            } else {
                format!("abc{i}")
            },
        })
        .collect();
    let opts = FabricOptions {
        width: 4,
        ..FabricOptions::default()
    };
    let results = workbooks_fabric::Fabric::new(e.clone())
        .fan_out_as_host(
            LineOptions::default(),
            &Target::Kernel("bump".into()),
            inputs,
            &opts,
        )
        .await
        .unwrap();
    for (i, r) in results.iter().enumerate() {
        assert_eq!(r.index, i);
        if i == 42 {
            assert!(
                r.error.as_deref().unwrap().starts_with("trap: call "),
                "{r:?}"
            );
        } else {
            let want: String = format!("abc{i}").bytes().map(|b| (b + 1) as char).collect();
            assert_eq!((r.exit, r.stdout.as_str()), (Some(0), want.as_str()));
        }
    }
    // A kernel runs at instance: the shape, not a knob.
    let opts = FabricOptions {
        tier: Some(Tier::OsProcess),
        ..FabricOptions::default()
    };
    let err = workbooks_fabric::Fabric::new(e.clone())
        .fan_out_as_host(
            LineOptions::default(),
            &Target::Kernel("bump".into()),
            vec![],
            &opts,
        )
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("a kernel runs at instance"),
        "{err}"
    );
    // An unknown kernel, and a command component registered as a kernel.
    let err = workbooks_fabric::Fabric::new(e.clone())
        .fan_out_as_host(
            LineOptions::default(),
            &Target::Kernel("nope".into()),
            vec![],
            &FabricOptions::default(),
        )
        .await
        .unwrap_err();
    assert!(err.to_string().contains("unknown_kernel: `nope`"), "{err}");
    let err = workbooks::kernel::Kernels::of(&e)
        .register("hello", std::fs::read(CLI_HELLO).unwrap(), "process", false)
        .unwrap_err();
    assert!(
        matches!(&err, KernelError::NotAKernel(why) if why.contains("exports `process")),
        "{err}"
    );
}

#[tokio::test]
async fn a_component_kernel_keeps_its_instance_until_a_trap() {
    let home = tempfile::tempdir().unwrap();
    let e = own(home.path());
    workbooks::kernel::Kernels::of(&e)
        .register("rev", std::fs::read(TEST_KERNEL).unwrap(), "process", false)
        .unwrap();
    let artifact = workbooks::kernel::Kernels::of(&e).load("rev").unwrap();
    let mut k = Kernel::load(&e, &artifact, KernelOptions::default())
        .await
        .unwrap();
    assert_eq!(k.call(b"abc").await.unwrap(), b"1:cba");
    assert_eq!(k.call(b"xy").await.unwrap(), b"2:yx");
    let err = k.call(b"trap").await.unwrap_err();
    assert!(matches!(err, KernelError::Trap { call: 3, .. }), "{err}");
    // A fresh instance: its count starts again.
    assert_eq!(k.call(b"z").await.unwrap(), b"1:z");
}

#[test]
fn wbx_kernel_and_fabric_run_from_the_command_line() {
    let home = tempfile::tempdir().unwrap();
    let wasm = home.path().join("bump.wasm");
    std::fs::write(&wasm, wat::parse_str(BUMP).unwrap()).unwrap();
    let out = wbx(
        home.path(),
        &["kernel", "register", "bump", wasm.to_str().unwrap()],
        b"",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = wbx(
        home.path(),
        &["kernel", "run", "bump", "--input", "HAL"],
        b"",
    );
    assert_eq!(text(&out.stdout), "IBM");
    let out = wbx(home.path(), &["kernel", "list", "--json"], b"");
    assert!(
        text(&out.stdout).contains("\"bump\""),
        "{}",
        text(&out.stdout)
    );

    let jsonl = home.path().join("in.jsonl");
    std::fs::write(
        &jsonl,
        "{\"args\": [\"-c\", \".\"], \"stdin\": \"[1]\"}\n{\"args\": [\"-c\", \".\"], \"stdin\": \"oops\"}\n",
    )
    .unwrap();
    let inputs = jsonl.to_str().unwrap();
    let out = wbx(
        home.path(),
        &[
            "fabric", "run", "jq", "--inputs", inputs, "--json", "--width", "2",
        ],
        b"",
    );
    // One input failed: exit 1, both results in order, then the failure
    // as every verb gives it under --json.
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let mut rows: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 3);
    let failure = rows.pop().unwrap();
    assert_eq!(failure["error"]["kind"], "failed", "{failure}");
    assert!(
        failure["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1 failed"),
        "{failure}"
    );
    assert_eq!(
        (rows[0]["index"].as_u64(), rows[0]["exit"].as_i64()),
        (Some(0), Some(0))
    );
    assert_eq!(rows[0]["stdout"], "[1]\n");
    assert_eq!(rows[1]["index"], 1);
    assert_ne!(rows[1]["exit"], 0);
    for key in ["stderr", "error", "dur_ms"] {
        assert!(rows[0].get(key).is_some(), "{key}");
    }
    let out = wbx(
        home.path(),
        &["fabric", "run", "jq", "--inputs", inputs, "--tier", "node"],
        b"",
    );
    assert_eq!(out.status.code(), Some(120));
    assert!(
        text(&out.stderr).contains("tier unavailable: node (no NATS server"),
        "{}",
        text(&out.stderr)
    );
    let out = wbx(
        home.path(),
        &["fabric", "run", "bump", "--kernel", "--inputs", inputs],
        b"",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
}
