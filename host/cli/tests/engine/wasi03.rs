//! WASI 0.3 components (async `run`, 0.3 imports beside the standard
//! library's 0.2 ones) on the command lane: docked under the same cap
//! words as 0.2, refused by name when a cap is missing, and held to every
//! budget (a guest awaiting forever, spawning without end, writing without
//! end) and to the vfs and net guards, each tried as the attacker would.

use crate::common::{
    artifact, engine, ok_stdout, request, run, run_with, serve_handler, stdout, text,
};
use guest_artifacts::*;
use std::time::{Duration, Instant};
use workbooks::{Cap, DockError, Grant, Preopen, Profile, RunError, SessionOptions, Stdin};

guest_artifacts::foreach_wasi03!(assert_test_exists);
// The probe that leads wasmtime into its own defect is tested with the
// runtime's other defects.
use crate::defects::wasi03_cancel_wrong_end;

/// Asserts `e` refused the probe for want of `cap`, naming a 0.3 import
/// of `interface` (a `pkg/` prefix).
fn refused_for(e: DockError, cap: Cap, interface: &str) {
    assert!(
        matches!(&e, DockError::NotGranted { cap: c, .. } if *c == cap),
        "{e}"
    );
    let text = e.to_string();
    assert!(text.contains(interface) && text.contains("@0.3.0"), "{e}");
}

fn opts(args: &[&str]) -> SessionOptions {
    let mut opts = SessionOptions::new("wasi03", "default");
    opts.args = args.iter().map(|a| a.to_string()).collect();
    opts
}

#[tokio::test]
async fn wasi03_echo() {
    let mut o = opts(&["a", "b c"]);
    o.env = vec![("GREETING".into(), "hi".into())];
    o.stdin = Stdin::Bytes(bytes::Bytes::from_static(b"piped in\n"));
    let out = run_with(WASI03_ECHO, &Grant::profile("minimal"), o)
        .await
        .unwrap();
    assert_eq!(out.exit_code, 0);
    assert_eq!(
        stdout(&out),
        "0.3 args=[\"a\", \"b c\"] greeting=hi\nPIPED IN\n"
    );
    assert_eq!(text(&out.stderr), "copied 9 bytes\n");
    // `run` returning its error is exit 1, a normal end.
    let out = run(WASI03_ECHO, Profile::Minimal, &["fail"]).await.unwrap();
    assert_eq!(out.exit_code, 1);
}

#[tokio::test]
async fn wasi03_hello() {
    // The 0.3 twin of `cli_hello` prints what it does, under compute.
    assert_eq!(
        ok_stdout(run(WASI03_HELLO, Profile::Compute, &[]).await),
        ok_stdout(run(CLI_HELLO, Profile::Compute, &[]).await)
    );
}

#[test]
fn a_wasi_03_command_docks_under_the_narrowest_profile_and_its_receipt_names_each_03_import() {
    let docked = engine()
        .dock(&artifact(WASI03_ECHO), &Grant::profile("minimal"))
        .unwrap();
    assert!(docked.is_command());
    assert!(
        docked.exports().iter().any(|e| e == "wasi:cli/run@0.3.0"),
        "{:?}",
        docked.exports()
    );
    let receipt = docked.receipt();
    let stdout_03 = receipt
        .imports
        .iter()
        .find(|i| i.name == "wasi:cli/stdout@0.3.0")
        .unwrap_or_else(|| panic!("no 0.3 stdout in {:?}", receipt.imports));
    assert_eq!(stdout_03.cap, "base");
    // The standard library's own 0.2 imports sit beside the 0.3 ones.
    assert!(
        receipt
            .imports
            .iter()
            .any(|i| i.name.starts_with("wasi:cli/environment@0.2")),
        "{:?}",
        receipt.imports
    );
}

#[tokio::test]
async fn wasi03_sleep() {
    // Awaiting a host timer runs no wasm, so no epoch check can end it:
    // the deadline around the whole event loop must.
    let start = Instant::now();
    let mut o = opts(&[]);
    o.timeout = Some(Duration::from_millis(300));
    let e = run_with(WASI03_SLEEP, &Grant::profile("minimal"), o)
        .await
        .unwrap_err()
        .run();
    assert!(matches!(e, RunError::Timeout { .. }), "{e}");
    let took = start.elapsed();
    assert!(took < Duration::from_secs(5), "stopped after {took:?}");
}

#[tokio::test]
async fn wasi03_spawn() {
    // Tasks without end, each holding a host-side wait, then stream pairs
    // without end (a few bytes of the guest's memory each, an entry per
    // end in the host's tables). Its memory is raised far past what the
    // pairs take, so only the store's table cap can stop the second before
    // the host holds millions of entries; each is stopped by a named limit
    // well before its deadline.
    for (args, memory) in [(&[][..], None), (&["streams"][..], Some(1 << 30))] {
        let mut o = opts(args);
        o.timeout = Some(Duration::from_secs(60));
        o.memory = memory;
        let start = Instant::now();
        let e = run_with(WASI03_SPAWN, &Grant::profile("minimal"), o)
            .await
            .unwrap_err()
            .run();
        if memory.is_some() {
            assert!(matches!(e, RunError::AsyncTasks { limit: 10_000 }), "{e}");
            assert_eq!(e.kind(), "async_tasks");
        } else {
            assert!(
                matches!(e, RunError::AsyncTasks { .. } | RunError::Memory { .. }),
                "{e}"
            );
        }
        assert!(start.elapsed() < Duration::from_secs(30), "{e}");
    }
    // The engine serves the next call at once.
    assert_eq!(
        ok_stdout(run(WASI03_ECHO, Profile::Minimal, &[]).await),
        "0.3 args=[] greeting=\n"
    );
}

#[tokio::test]
async fn wasi03_flood() {
    // Writes through a 0.3 stream past the output cap: the host refuses
    // the rest, and the run is reported over the cap whatever the guest
    // does with the refusal.
    let mut o = opts(&[]);
    o.timeout = Some(Duration::from_secs(60));
    let start = Instant::now();
    let e = run_with(WASI03_FLOOD, &Grant::profile("minimal"), o)
        .await
        .unwrap_err()
        .run();
    assert!(
        matches!(
            e,
            RunError::OutputLimit {
                stream: "stdout",
                ..
            }
        ),
        "{e}"
    );
    // Ended by the cap as it wrote on, not by its deadline.
    assert!(start.elapsed() < Duration::from_secs(20), "{e}");
}

#[tokio::test]
async fn wasi03_fs() {
    // Without vfs (every profile grants it; narrowed away here) the 0.3
    // filesystem is absent, and the refusal names the cap and the 0.3
    // import.
    let bare = Grant::narrowed("compute", workbooks::CapSet::EMPTY).unwrap();
    let e = run_with(WASI03_FS, &bare, opts(&[])).await.unwrap_err();
    refused_for(e.dock(), Cap::Vfs, "wasi:filesystem/");
    // With it, the preopen is the guest's; a link or a path that climbs
    // out is refused, one that stays inside is made.
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    let mut o = opts(&[]);
    o.dirs = vec![Preopen {
        host: dir.clone(),
        guest: "/w".into(),
        read_only: false,
    }];
    let out = ok_stdout(run_with(WASI03_FS, &Grant::profile("compute"), o).await);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "preopen /w",
            "write true",
            "read written at 0.3",
            "symlink out Err(ErrorCode::NotPermitted)",
            "symlink in Ok(())",
            "climb Err(ErrorCode::NotPermitted)",
        ],
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("note.txt")).unwrap(),
        "written at 0.3"
    );
    assert!(std::fs::symlink_metadata(dir.join("escape")).is_err());
    assert!(std::fs::symlink_metadata(dir.join("alias")).is_ok());
    assert!(!root.path().join("outside.txt").exists());
}

#[tokio::test]
async fn wasi03_connect() {
    // Without net the 0.3 sockets are absent, named.
    let e = run(WASI03_CONNECT, Profile::Compute, &["127.0.0.1:9"]).await;
    refused_for(e.unwrap_err().dock(), Cap::Net, "wasi:sockets/");
    // Under net, the floor refuses loopback and the metadata address: a
    // listener on 127.0.0.1 never sees the connection, and a lookup of
    // localhost answers no loopback address.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let at = listener.local_addr().unwrap().to_string();
    for target in [at.as_str(), "169.254.169.254:80"] {
        let out = ok_stdout(run(WASI03_CONNECT, Profile::Network, &[target, "localhost"]).await);
        assert!(
            out.contains("connect Err(ErrorCode::AccessDenied)"),
            "{target}: {out}"
        );
        assert!(
            !out.contains("Ipv4((127"),
            "a loopback address was told: {out}"
        );
        assert!(listener.accept().is_err(), "a connection reached loopback");
    }
}

#[tokio::test]
async fn an_operators_allow_list_lets_a_wasi_03_socket_reach_loopback_so_the_floor_is_what_refused()
{
    let home = tempfile::tempdir().unwrap();
    let e = crate::common::own_builder(home.path())
        .net_allow(workbooks::Cidr::parse_list("127.0.0.0/8").unwrap())
        .build()
        .unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let at = listener.local_addr().unwrap().to_string();
    let docked = e
        .dock(&artifact(WASI03_CONNECT), &Grant::profile("network"))
        .unwrap();
    let out = e.run(&docked, opts(&[&at, "localhost"])).await.unwrap();
    let out = stdout(&out);
    assert!(out.contains("connect Ok(())"), "{out}");
    assert!(out.contains("Ipv4((127, 0, 0, 1))"), "{out}");
    assert!(listener.accept().is_ok());
}

#[tokio::test]
async fn wasi03_listen() {
    use crate::knock::{assert_seen_only_on_loopback, listen_in_wbx, unused_loopback_port};
    // On the default floor loopback is closed to guests: no listener and
    // no port of the guest's choosing, anywhere.
    let port = unused_loopback_port().to_string();
    let out = ok_stdout(run(WASI03_LISTEN, Profile::Network, &[&port]).await);
    for refused in ["wildcard listen", "wildcard port", "loopback port"] {
        assert!(
            out.contains(&format!("{refused} Err(ErrorCode::AccessDenied)")),
            "{refused}: {out}"
        );
    }
    // With 127.0.0.1 opened by the operator, a listener the guest asks for
    // on the wildcard address (by listening unbound, or binding 0.0.0.0)
    // sits on 127.0.0.1 only: a peer at any other address of this host
    // is refused as at a closed port, and a loopback peer is served.
    let seen = listen_in_wbx(WASI03_LISTEN, &[&port], "127.0.0.1/32");
    let all = format!("{}{}", seen.first, seen.rest);
    assert_eq!(seen.knocked.answer.as_deref(), Some("echo:hello"), "{all}");
    assert_seen_only_on_loopback(&seen.knocked);
    assert!(
        seen.first.starts_with("wildcard listen Ok(127.0.0.1:"),
        "{all}"
    );
    assert!(seen.rest.contains("accepted hello"), "{all}");
    assert!(
        seen.rest
            .contains(&format!("wildcard port Ok(()) 127.0.0.1:{port}")),
        "{all}"
    );
    assert!(seen.rest.contains("loopback port Ok(())"), "{all}");
}

#[tokio::test]
async fn a_wasi_03_stage_and_a_02_stage_pipe_into_each_other() {
    let (_home, e) =
        crate::common::engine_with_commands(&[("echo03", WASI03_ECHO), ("kat", CLI_CAT)]);
    let out = e
        .commands()
        .run_line(
            "kat | echo03 x | kat",
            workbooks::LineOptions {
                stdin: Stdin::Bytes(bytes::Bytes::from_static(b"through both\n")),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(
        text(&out.stdout),
        "0.3 args=[\"x\"] greeting=\nTHROUGH BOTH\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wasi03_handler() {
    // The same answers with a fresh instance per request and with shared
    // instances: the response cap holds on a 0.3 body, the budget on a
    // handler awaiting forever, and the next request is served.
    for per_request in [true, false] {
        let home = tempfile::tempdir().unwrap();
        let e = crate::common::own_engine(home.path());
        let opts = workbooks::ServeOptions {
            timeout: Some(Duration::from_millis(800)),
            instance_per_request: per_request,
            ..Default::default()
        };
        let addr = serve_handler(&e, opts).await;
        assert_eq!(
            request(addr, "GET", "/where?x=1", "").await,
            (200, "Method::Get /where?x=1\n".into())
        );
        assert_eq!(
            request(addr, "POST", "/echo", "a body, streamed back").await,
            (200, "a body, streamed back".into())
        );
        assert_eq!(
            request(addr, "GET", "/big", "").await,
            (502, "response larger than the engine's cap\n".into())
        );
        assert_eq!(request(addr, "GET", "/hang", "").await.0, 504);
        assert_eq!(request(addr, "GET", "/again", "").await.0, 200);
    }
}

#[tokio::test]
async fn wasi03_http_get() {
    // Without net the 0.3 client is absent, named.
    let srv = crate::servers::http().await;
    let at = srv.addr.to_string();
    let e = run(WASI03_HTTP_GET, Profile::Compute, &[&at, "/bytes/3"]).await;
    refused_for(e.unwrap_err().dock(), Cap::Net, "wasi:http/");
    // Under net, the send hook's floor refuses loopback and the metadata
    // address: the loopback server sees no request.
    for target in [at.as_str(), "169.254.169.254:80"] {
        let out = ok_stdout(run(WASI03_HTTP_GET, Profile::Network, &[target, "/bytes/3"]).await);
        assert!(out.starts_with("error "), "{target} was reached: {out}");
    }
    assert_eq!(srv.hits.load(std::sync::atomic::Ordering::SeqCst), 0);
    // With the operator's allow-list the same request goes through the same
    // hook and is answered.
    let home = tempfile::tempdir().unwrap();
    let allowed = crate::common::own_builder(home.path())
        .net_allow(workbooks::Cidr::parse_list("127.0.0.0/8").unwrap())
        .build()
        .unwrap();
    let docked = allowed
        .dock(&artifact(WASI03_HTTP_GET), &Grant::profile("network"))
        .unwrap();
    let out = allowed
        .run(&docked, opts(&[&at, "/bytes/3"]))
        .await
        .unwrap();
    assert_eq!(stdout(&out), "status 200 xxx\n");
    assert_eq!(srv.hits.load(std::sync::atomic::Ordering::SeqCst), 1);
}

#[test]
fn wasi03_plugin() {
    // `wbx call` on a plugin whose `run` is lifted async and awaits a 0.3
    // timer: the instance's event loop is driven to the answer, and the
    // call's budget holds while it awaits.
    let home = tempfile::tempdir().unwrap();
    let o = crate::common::wbx(home.path(), &["call", WASI03_PLUGIN, "--input", "hi"], b"");
    assert_eq!(
        text(&o.stdout),
        "async run after 1 ms: hi\n",
        "{}",
        text(&o.stderr)
    );
    let start = Instant::now();
    let o = crate::common::wbx(
        home.path(),
        &[
            "call",
            "--timeout",
            "300",
            WASI03_PLUGIN,
            "--input",
            "sleep:60000",
        ],
        b"",
    );
    assert!(!o.status.success());
    assert_eq!(
        text(&o.stderr),
        "wbx: call: timeout: the call exceeded its 300 ms budget\n"
    );
    assert!(start.elapsed() < Duration::from_secs(20));
}

#[tokio::test]
async fn a_wasi_03_command_registered_at_either_tier_runs_and_keeps_its_budget() {
    use workbooks::commands::{ArgMode, CommandError, Tier};
    let home = tempfile::tempdir().unwrap();
    let e = crate::common::own_builder(home.path())
        .child_binary(env!("CARGO_BIN_EXE_wbx"))
        .build()
        .unwrap();
    for (tier, echo, sleep) in [
        (Tier::Instance, "echo03", "sleep03"),
        (Tier::OsProcess, "echo03p", "sleep03p"),
    ] {
        let r = e.registry();
        let read = |p: &str| std::fs::read(p).unwrap();
        r.register(echo, read(WASI03_ECHO), ArgMode::Argv, tier)
            .unwrap();
        r.register(sleep, read(WASI03_SLEEP), ArgMode::Argv, tier)
            .unwrap();
        let line = workbooks::LineOptions {
            stdin: Stdin::Bytes(bytes::Bytes::from_static(b"in\n")),
            ..Default::default()
        };
        let out = e
            .commands()
            .run(echo, vec!["t".into()], line)
            .await
            .unwrap();
        assert_eq!(
            text(&out.stdout),
            "0.3 args=[\"t\"] greeting=\nIN\n",
            "{tier:?}"
        );
        let line = workbooks::LineOptions {
            stage_timeout: Some(Duration::from_millis(300)),
            ..Default::default()
        };
        match e.commands().run(sleep, vec![], line).await {
            Err(workbooks::LineError::Command {
                error: CommandError::Timeout(_),
                ..
            }) => {}
            other => panic!("{tier:?}: a sleeping 0.3 command was not stopped: {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_wasi_03_command_answers_as_an_mcp_tool_and_fans_out_through_the_fabric_at_both_tiers() {
    use workbooks::LineOptions;
    use workbooks::commands::Tier;
    use workbooks_fabric::{Fabric, FabricOptions, Target, TaskInput};
    let (_home, e) = crate::common::engine_with_commands(&[("echo03", WASI03_ECHO)]);
    // The tool `wbx mcp` lists for a registered command.
    let tools = workbooks_toolkit::tools::Tools::new(e.clone());
    let kind = tools.kind("echo03").expect("a tool per command");
    let given = serde_json::json!({"args": ["via", "mcp"], "stdin": "tool input\n"});
    let out = tools
        .call(&kind, given.as_object().unwrap(), LineOptions::default())
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert!(
        out.text.contains("0.3 args=[\"via\", \"mcp\"]") && out.text.contains("TOOL INPUT"),
        "{}",
        out.text
    );
    // The fabric, a task per input, in the engine and as a process.
    for tier in [Tier::Instance, Tier::OsProcess] {
        let opts = FabricOptions {
            width: 2,
            tier: Some(tier),
            ..FabricOptions::default()
        };
        let inputs = (0..3)
            .map(|i| TaskInput {
                args: vec![format!("task{i}")],
                stdin: format!("input {i}\n"),
            })
            .collect();
        let results = Fabric::new(e.clone())
            .fan_out_as_host(
                LineOptions::default(),
                &Target::Command("echo03".into()),
                inputs,
                &opts,
            )
            .await
            .unwrap();
        assert_eq!(results.len(), 3);
        for (i, r) in results.iter().enumerate() {
            assert_eq!(
                (r.exit, r.stdout.as_str()),
                (
                    Some(0),
                    format!("0.3 args=[\"task{i}\"] greeting=\nINPUT {i}\n").as_str()
                ),
                "{} {r:?}",
                tier.name()
            );
        }
    }
}

#[test]
fn only_a_component_that_needs_the_async_abi_is_read_as_one_for_the_concurrent_engine() {
    for (probe, concurrent) in [
        (CLI_HELLO, false),
        (CLI_CAT, false),
        (WASI03_HELLO, true),
        (WASI03_PLUGIN, true),
        (WASI03_HANDLER, true),
    ] {
        let bytes = std::fs::read(probe).unwrap();
        let surface = workbooks::dock::imports::surface(&bytes).unwrap().unwrap();
        assert_eq!(surface.concurrent, concurrent, "{probe}");
    }
}

#[tokio::test]
async fn wasi03_kv() {
    // A 0.3 guest composes with the kv broker (a 0.2 component) as a 0.2
    // guest does: the receipt names the broker, and the value lands.
    let e = engine();
    let docked = e
        .dock(&artifact(WASI03_KV), &Grant::profile("minimal"))
        .unwrap();
    let brokers: Vec<&str> = docked
        .receipt()
        .brokers
        .iter()
        .map(|b| b.serves.as_str())
        .collect();
    assert_eq!(brokers, ["workbooks:engine/kv@0.1.0"]);
    let out = e
        .run(&docked, opts(&["greeting", "hello from 0.3"]))
        .await
        .unwrap();
    assert_eq!(
        stdout(&out),
        "set Ok(())\nget Ok(Some(\"hello from 0.3\"))\n"
    );
    // Without kv the import is absent, named.
    let without = e.dock(&artifact(WASI03_KV), &Grant::profile("compute"));
    let text = without.unwrap_err().to_string();
    assert!(
        text.contains("kv") && text.contains("workbooks:engine/kv"),
        "{text}"
    );
}

#[test]
fn a_deny_broker_of_02_interfaces_does_not_serve_a_03_import_and_the_refusal_says_so() {
    let grant = Grant::profile("compute").with_stub(workbooks::policy::Stub::Sockets);
    let err = engine()
        .dock(&artifact(WASI03_CONNECT), &grant)
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("capability not granted: net (import wasi:sockets/")
            && text.contains("@0.3.0) under profile compute; granted by network, posix; the deny broker of wasi:sockets does not serve it at this version"),
        "{text}"
    );
    // Nor is the stub offered where it would not help.
    let err = engine()
        .dock(&artifact(WASI03_CONNECT), &Grant::profile("compute"))
        .unwrap_err();
    assert!(!err.to_string().contains("--stub"), "{err}");
}

#[test]
fn a_component_whose_async_use_is_nested_below_its_outer_sections_still_docks() {
    // The outer sections show nothing of the async ABI (no 0.3 import, no
    // async type): the sync engine refuses it and the concurrent one
    // takes it.
    let bytes = wat::parse_str("(component (component (type (func async))))").unwrap();
    let surface = workbooks::dock::imports::surface(&bytes).unwrap().unwrap();
    assert!(!surface.concurrent);
    let artifact = workbooks::Artifact::from_bytes(bytes).unwrap();
    engine()
        .dock(&artifact, &Grant::profile("compute"))
        .unwrap();
}

/// The attack of issue 54 on host memory, at WASI 0.3: header maps filled
/// and kept until the host refuses. The store's budget (a quarter of its
/// memory cap: 32 MiB under `network`) answers `size-exceeded`, and while
/// the guest holds what it was given, `wbx exec`'s peak resident memory
/// stays within the guest's memory cap, the budget and a constant for the
/// engine itself. The table's 10 000 entries let the same guest raise it
/// to 1.25 GiB.
#[test]
fn wasi03_http_held() {
    let home = tempfile::tempdir().unwrap();
    let exec = ["exec", "--profile", "network", WASI03_HTTP_HELD];
    let (line, peak_kib, out) = crate::common::wbx_peak(home.path(), &exec, 1);
    assert!(out.status.success(), "{line}{}", text(&out.stderr));
    assert!(
        line.contains("refused:") && line.contains("SizeExceeded"),
        "{line}"
    );
    let value_bytes = line
        .split(", ")
        .nth(1)
        .and_then(|p| p.split(' ').next()?.parse::<usize>().ok())
        .unwrap_or_else(|| panic!("{line}"));
    assert!(value_bytes > 16 << 20 && value_bytes <= 32 << 20, "{line}");
    // `network`'s memory cap (128 MiB), the budget (32 MiB), and 128 MiB
    // for the engine itself.
    let bound_kib = (128 + 32 + 128) << 10;
    assert!(
        peak_kib < bound_kib,
        "wbx exec peaked at {} MiB holding the probe's maps: {line}",
        peak_kib >> 10
    );
}

/// The attack of issue 54 on descriptors, at WASI 0.3: a guest making TCP
/// (then UDP) sockets and keeping them gets the store's 256, then an `other` error
/// naming the limit, instead of a descriptor per table entry.
#[test]
fn wasi03_sockets_hold() {
    let home = tempfile::tempdir().unwrap();
    for kind in ["tcp", "udp"] {
        let out = crate::common::wbx(
            home.path(),
            &[
                "exec",
                "--profile",
                "network",
                WASI03_SOCKETS_HOLD,
                "--",
                "1000",
                kind,
            ],
            b"",
        );
        let stdout = text(&out.stdout);
        assert!(
            stdout.starts_with("created 256\nerror ")
                && stdout.contains("new-socket-limit: a store holds at most 256 sockets"),
            "{kind}: {stdout}{}",
            text(&out.stderr)
        );
    }
}

/// The same attack through a listener: a guest takes every connection its
/// peers make (300 here) and keeps each one. Those sockets count too: it
/// gets 255 beside its listener, and each connection past them is reset
/// by the host, never handed to it. A guest that drops each connection
/// once done with it takes all 300.
#[test]
fn wasi03_accepts_hold() {
    crate::knock::assert_accepts_hold_at_the_socket_cap(WASI03_ACCEPTS_HOLD);
}

/// The same attack on files at 0.3: a guest opens one file of its preopen
/// a thousand times and keeps every descriptor; it gets the store's 512
/// (its preopen is one), then `other` naming the limit.
#[test]
fn wasi03_files_hold() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "x").unwrap();
    let preopen = format!("{}::/data::ro", dir.path().display());
    let out = crate::common::wbx(
        home.path(),
        &[
            "exec",
            "--profile",
            "compute",
            "--dir",
            &preopen,
            WASI03_FILES_HOLD,
            "--",
            "1000",
        ],
        b"",
    );
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("opened 511\nerror ")
            && stdout.contains("too-many-open-files: a store holds at most 512 open files"),
        "{stdout}{}",
        text(&out.stderr)
    );
}

/// The attack of issue 54 on host memory through 0.3 datagrams: one UDP
/// socket bound to port 0 and 9 000 `receive` calls started at once (the
/// store's 10 000 tasks in flight allow them), none ever answered. Each
/// waiting call holds a 64 KiB buffer in the host; the store may have 64
/// waiting, and the calls past them are
/// refused at once, naming the limit, so `wbx exec`'s peak resident memory
/// stays within the guest's cap and a constant while the guest holds them;
/// a second wave, after the guest drops the first, gets its 64 again.
#[test]
fn wasi03_udp_held() {
    let home = tempfile::tempdir().unwrap();
    let exec = [
        "exec",
        "--profile",
        "network",
        WASI03_UDP_HELD,
        "--",
        "9000",
        "twice",
    ];
    let (report, peak_kib, out) = crate::common::wbx_peak(home.path(), &exec, 2);
    assert!(out.status.success(), "{report}{}", text(&out.stderr));
    // The second wave gets its 64 too: the first's calls, cancelled when
    // the guest dropped them, gave their places back.
    assert_eq!(report.lines().count(), 2, "{report}");
    for wave in report.lines() {
        assert!(
            wave.starts_with("pending 64; error ")
                && wave.contains("udp-calls-waiting: a store has at most 64 datagram calls"),
            "{report}"
        );
    }
    // `network`'s memory cap (128 MiB) and 128 MiB for the engine itself.
    let bound_kib = (128 + 128) << 10;
    assert!(
        peak_kib < bound_kib,
        "wbx exec peaked at {} MiB holding the probe's calls: {report}",
        peak_kib >> 10
    );
}

/// The attack of issue 54 on descriptors through `wasi:http` at 0.3: a
/// thousand `send` calls started at once, each in flight before any is
/// answered, to a loopback server that never answers. Each holds a
/// connection from its send until its response is dropped, so the store
/// holds 256 and the rest are answered `connection-limit-reached`; a
/// guest awaiting each answer sends 300. See [`crate::requests`].
#[test]
fn wasi03_requests_hold() {
    crate::requests::assert_requests_hold_at_the_store_cap(WASI03_REQUESTS_HOLD);
}
