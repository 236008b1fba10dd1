//! `wbx agent replay`: a finished run re-run from its record with no
//! model and no network, writing the same trace and ledger root; a record
//! that was tampered with, or a run that did not start empty, is named.

use crate::agent::{builder_for, quick_bounds, task};
use crate::common::text as lossy;
use crate::model_server::{self, tool_calls};
use serde_json::Value;
use workbooks::Cidr;
use workbooks_agent::{AgentOptions, AgentRecord};

/// A run that fetches a loopback page, writes a file, runs a line and
/// ends with `done`; its home.
async fn recorded_run(opts: AgentOptions) -> (AgentRecord, tempfile::TempDir) {
    let pages = crate::servers::http().await;
    let fetch = format!(r#"{{"url":"{}"}}"#, pages.url("/html"));
    let server = model_server::start(vec![
        tool_calls(&[
            ("f", "fetch", &fetch),
            ("w", "vfs_write", r#"{"path":"a.txt","content":"hello"}"#),
        ]),
        tool_calls(&[("s", "shell", r#"{"pipeline":"cat a.txt | wc -c"}"#)]),
        tool_calls(&[("d", "done", r#"{"result":"all done"}"#)]),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let engine = builder_for(home.path(), &server, quick_bounds())
        .net_allow(vec![Cidr::parse("127.0.0.1/32").unwrap()])
        .build()
        .unwrap();
    let record = workbooks_agent::Agents::new(engine.clone())
        .run(opts)
        .await
        .unwrap();
    assert_eq!(record.result, "all done");
    assert_eq!(record.events.len(), 4);
    assert_eq!(record.events[0].exit_code, 0, "{:?}", record.events[0]);
    (record, home)
}

/// `wbx agent replay` with no model reachable and no network allowed.
fn replay(home: &std::path::Path, workdir: &std::path::Path) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_wbx"))
        .args(["agent", "replay", "--json", workdir.to_str().unwrap()])
        .env("WB_HOME", home)
        .env("WB_LLM_BASE_URL", "http://127.0.0.1:9/v1")
        .env_remove("WB_NET_ALLOW")
        .env_remove("WB_OPERATOR_ALLOW")
        .output()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replay_with_no_network_writes_the_same_trace_and_ledger_root() {
    let (record, home) = recorded_run(task("fetch and count")).await;
    let workdir = record.workdir.clone();
    let h = home.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || replay(&h, &workdir))
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        lossy(&out.stdout),
        lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["same"], true, "{got}");
    assert_eq!(got["result"], "all done");
    assert_eq!(got["root"], record.ledger.as_ref().unwrap().root.as_str());
    let again = std::path::PathBuf::from(got["workdir"].as_str().unwrap());
    assert_ne!(again, record.workdir);
    let read = |d: &std::path::Path| std::fs::read(d.join("_steps.jsonl")).unwrap();
    assert_eq!(read(&again), read(&record.workdir));
    // The file the run wrote was written again, by the replay's own tools.
    assert_eq!(
        std::fs::read_to_string(again.join("a.txt")).unwrap(),
        "hello"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tampered_record_or_a_run_that_did_not_start_empty_is_named() {
    let (record, home) = recorded_run(task("fetch and count")).await;
    let model = record.workdir.join("_model.jsonl");
    let takes = std::fs::read_to_string(&model).unwrap();
    assert_eq!(takes.lines().count(), 3);
    std::fs::write(&model, takes.replace("cat a.txt | wc -c", "cat a.txt")).unwrap();
    let (h, w) = (home.path().to_path_buf(), record.workdir.clone());
    let out = tokio::task::spawn_blocking(move || replay(&h, &w))
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", lossy(&out.stderr));
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["same"], false);
    assert_eq!(got["first_different_line"], 3, "{got}");

    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("seed.txt"), "was here").unwrap();
    let opts = AgentOptions {
        workdir: Some(work.path().to_path_buf()),
        ..task("fetch and count")
    };
    let (record, home) = recorded_run(opts).await;
    let (h, w) = (home.path().to_path_buf(), record.workdir.clone());
    let out = tokio::task::spawn_blocking(move || replay(&h, &w))
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    // Under --json the failure is the JSON error on stdout.
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["error"]["kind"], "failed", "{got}");
    assert!(
        got["error"]["message"]
            .as_str()
            .unwrap()
            .contains("held files"),
        "{got}"
    );
}
