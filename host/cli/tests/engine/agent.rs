//! The agent loop end to end: the loop component composed with the llm
//! broker, talking to a scripted OpenAI-compatible server on loopback,
//! its tools run by the host. Every exit, bound and error string the
//! model or the caller reads.

use crate::common::own_builder;
use crate::model_server::{self, Answer, text, tool_calls};
use serde_json::{Value, json};
use std::time::Duration;
use workbooks::{Engine, EngineBuilder, LlmBounds, LlmEndpoint};
use workbooks_agent::{AgentOptions, AgentRecord, LoopStatus};

pub(crate) const KEY: &str = "sk-test-key-never-in-a-component";

/// Bounds short enough for tests: 2 retries, 10 ms apart.
pub(crate) fn quick_bounds() -> LlmBounds {
    LlmBounds {
        request_timeout: Duration::from_secs(5),
        retries: 2,
        hard_deadline: Duration::from_secs(20),
        max_retry_after: Duration::from_secs(2),
        backoff: Duration::from_millis(10),
    }
}

/// An engine homed in `home` whose model endpoint is `server`.
pub(crate) fn builder_for(
    home: &std::path::Path,
    server: &model_server::ModelServer,
    bounds: LlmBounds,
) -> EngineBuilder {
    let mut endpoint = LlmEndpoint::new(&server.base_url(), Some(KEY.into()), "default-model");
    endpoint.bounds = bounds;
    own_builder(home).llm(endpoint)
}

pub(crate) fn engine_for(
    home: &std::path::Path,
    server: &model_server::ModelServer,
    bounds: LlmBounds,
) -> Engine {
    builder_for(home, server, bounds).build().expect("engine")
}

pub(crate) fn task(text: &str) -> AgentOptions {
    AgentOptions {
        system: "You are a careful worker.".into(),
        task: text.into(),
        agent: "waldo".into(),
        ..AgentOptions::default()
    }
}

pub(crate) async fn run(
    script: Vec<Answer>,
    opts: AgentOptions,
) -> (AgentRecord, Vec<model_server::Seen>, tempfile::TempDir) {
    run_bounded(script, opts, quick_bounds()).await
}

pub(crate) async fn run_bounded(
    script: Vec<Answer>,
    opts: AgentOptions,
    bounds: LlmBounds,
) -> (AgentRecord, Vec<model_server::Seen>, tempfile::TempDir) {
    let server = model_server::start(script).await;
    let home = tempfile::tempdir().unwrap();
    let engine = engine_for(home.path(), &server, bounds);
    let record = workbooks_agent::Agents::new(engine.clone())
        .run(opts)
        .await
        .expect("the run starts");
    (record, server.requests(), home)
}

/// The tool messages of a request, by call id.
pub(crate) fn tool_answers(seen: &model_server::Seen) -> Vec<(String, String)> {
    seen.messages()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_turn_without_tool_calls_is_the_result_and_the_request_is_the_real_wire_format() {
    let (record, seen, _home) = run(vec![text("all clear")], task("check the roster")).await;
    assert_eq!(record.status, LoopStatus::Finished);
    assert_eq!(record.result, "all clear");
    assert_eq!(record.steps, 0);
    assert_eq!(seen.len(), 1);
    let req = &seen[0];
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.header("authorization"), Some(&*format!("Bearer {KEY}")));
    assert_eq!(req.body["model"], "default-model");
    assert_eq!(req.body["temperature"], json!(0.4));
    assert_eq!(
        req.messages(),
        &vec![
            json!({"role": "system", "content": "You are a careful worker."}),
            json!({"role": "user", "content": "check the roster"}),
        ]
    );
    let tools: Vec<&str> = req.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert_eq!(t["type"], "function");
            assert_eq!(t["function"]["parameters"]["type"], "object");
            t["function"]["name"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        tools,
        [
            "shell",
            "search",
            "wb",
            "fetch",
            "web_search",
            "vfs_read",
            "vfs_write",
            "file_issue",
            "done"
        ]
    );
    assert!(
        !tools.contains(&"run"),
        "a tool that runs host command lines exists"
    );
    assert_eq!(record.turns.len(), 1);
    assert_eq!(record.turns[0].finish_reason, "stop");
    let tokens = record.turns[0].tokens.unwrap();
    assert_eq!((tokens.total_tokens, tokens.estimated), (18, false));
    assert_eq!(record.tokens, 18);
}

#[tokio::test]
async fn parallel_calls_share_one_step_and_the_model_reads_a_stripped_transcript() {
    let mut first = tool_calls(&[
        (
            "c1",
            "vfs_write",
            r#"{"path":"notes/a.txt","content":"hello"}"#,
        ),
        ("c2", "shell", r#"{"pipeline":"cat notes/a.txt | wc -c"}"#),
    ]);
    // Provider extras on the assistant message must not ride along.
    if let Answer::Raw(_, _, body) = &mut first {
        let mut v: Value = serde_json::from_str(body).unwrap();
        v["choices"][0]["message"]["reasoning"] = json!("private chain of thought");
        v["choices"][0]["message"]["refusal"] = Value::Null;
        *body = v.to_string();
    }
    let (record, seen, _home) = run(vec![first, text("wrote it")], task("write a note")).await;
    assert_eq!(record.status, LoopStatus::Finished);
    assert_eq!(record.result, "wrote it");
    assert_eq!(record.steps, 1);
    assert_eq!(record.events.len(), 2);
    assert!(
        record
            .events
            .iter()
            .all(|e| e.step == 1 && e.agent == "waldo")
    );
    assert_eq!(
        std::fs::read_to_string(record.workdir.join("notes/a.txt")).unwrap(),
        "hello"
    );
    let second = &seen[1];
    let messages = second.messages();
    assert_eq!(messages.len(), 5, "{messages:?}");
    let assistant = messages[2].as_object().unwrap();
    let mut keys: Vec<&String> = assistant.keys().collect();
    keys.sort();
    assert_eq!(keys, ["content", "role", "tool_calls"]);
    assert_eq!(assistant["tool_calls"][1]["function"]["name"], "shell");
    let answers = tool_answers(second);
    assert_eq!(
        answers[0],
        ("c1".into(), "wrote 5 bytes to notes/a.txt".into())
    );
    assert_eq!(answers[1].0, "c2");
    assert_eq!(answers[1].1.trim(), "5");
    // The trace: one line per call, written by the host.
    let lines = std::fs::read_to_string(record.workdir.join("_steps.jsonl")).unwrap();
    let lines: Vec<Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[1]["tool"], "shell");
    assert_eq!(lines[1]["args"]["pipeline"], "cat notes/a.txt | wc -c");
    assert_eq!(lines[1]["exit_code"], 0);
    assert!(lines[1]["error"].is_null());
    let org = std::fs::read_to_string(record.workdir.join("events.org")).unwrap();
    assert_eq!(org.matches(":tool_call:").count(), 2, "{org}");
    assert!(org.ends_with("* Result\n  wrote it\n"), "{org}");
}

#[tokio::test]
async fn the_done_tool_ends_the_run_with_its_argument() {
    let script = vec![
        tool_calls(&[("d", "done", r#"{"result":"published the roster page"}"#)]),
        text("never asked"),
    ];
    let (record, seen, _home) = run(script, task("publish")).await;
    assert_eq!(record.status, LoopStatus::Done);
    assert_eq!(record.result, "published the roster page");
    assert_eq!(record.steps, 1);
    assert_eq!(seen.len(), 1);
}

#[tokio::test]
async fn the_step_budget_stops_the_run_with_the_reference_line() {
    let script = vec![tool_calls(&[("s", "shell", r#"{"pipeline":"true"}"#)])];
    let opts = AgentOptions {
        max_steps: 3,
        ..task("loop forever")
    };
    let (record, seen, _home) = run(script, opts).await;
    assert_eq!(record.status, LoopStatus::Stopped);
    assert_eq!(record.result, "stopped: reached max_steps (3)");
    assert_eq!(record.steps, 3);
    assert_eq!(seen.len(), 3);
    let steps: Vec<u32> = record.events.iter().map(|e| e.step).collect();
    assert_eq!(steps, [1, 2, 3]);
}

#[tokio::test]
async fn a_tool_past_its_bound_is_killed_and_the_model_reads_that_it_was() {
    let script = vec![
        tool_calls(&[(
            "slow",
            "shell",
            r#"{"pipeline":"seq 1 1000000000 | wc -l"}"#,
        )]),
        text("moved on"),
    ];
    let opts = AgentOptions {
        tool_timeout: Duration::from_secs(1),
        ..task("count forever")
    };
    let (record, seen, _home) = run(script, opts).await;
    assert_eq!(record.result, "moved on");
    let answers = tool_answers(&seen[1]);
    assert_eq!(
        answers[0].1,
        "tool error: shell timed out after 1s (killed)"
    );
    let e = &record.events[0];
    assert_eq!(
        e.error.as_deref(),
        Some("tool error: shell timed out after 1s (killed)")
    );
    assert!(e.dur_ms >= 1000, "{}", e.dur_ms);
}

#[tokio::test]
async fn every_failure_of_a_tool_is_text_the_model_reads() {
    let script = vec![
        tool_calls(&[
            ("a", "shell", r#"{"command":"ls"}"#),
            ("b", "shell", "not json at all"),
            ("c", "run", r#"{"cmd":"rm -rf /"}"#),
            ("d", "git", r#"{"message":"ship it"}"#),
            ("e", "publish", "{}"),
            ("f", "image", r#"{"prompt":"a banner"}"#),
            (
                "g",
                "vfs_write",
                r#"{"path":"../escape.txt","content":"x"}"#,
            ),
            ("h", "vfs_read", r#"{"path":"../../etc/passwd"}"#),
            ("i", "vfs_write", r#"{"path":"ok.txt","content":5}"#),
            (
                "j",
                "file_issue",
                r#"{"title":"no git","need":"commit","tried":"shell"}"#,
            ),
        ]),
        text("noted"),
    ];
    let (record, seen, home) = run(script, task("try everything")).await;
    assert_eq!(record.result, "noted");
    let answers: Vec<String> = tool_answers(&seen[1]).into_iter().map(|(_, t)| t).collect();
    assert_eq!(
        answers,
        [
            "shell error: required arg `pipeline` missing or not a string",
            "shell error: required arg `pipeline` missing or not a string",
            "tool error: unknown tool `run`",
            "git not permitted (no exec capability)",
            "publish not permitted (no exec capability)",
            "image not permitted (no exec capability)",
            "write blocked: path escapes your working dir",
            "write blocked: path escapes your working dir",
            "vfs_write error: required arg `content` missing or not a string",
            "issue filed: no git. Note it and carry on with what you can do.",
        ]
    );
    let escaped = record.workdir.parent().unwrap().join("escape.txt");
    assert!(!escaped.exists(), "a write left the workdir");
    assert!(!home.path().join("runs/default/escape.txt").exists());
    // The malformed arguments are kept as written.
    assert_eq!(record.events[1].args, json!("not json at all"));
    assert!(
        record
            .events
            .iter()
            .take(9)
            .all(|e| e.exit_code == 1 && e.error.is_some())
    );
    let issues = std::fs::read_to_string(record.workdir.join("_issues.jsonl")).unwrap();
    let issue: Value = serde_json::from_str(issues.trim()).unwrap();
    assert_eq!(issue["need"], "commit");
}

#[tokio::test]
async fn a_symlink_planted_in_the_workdir_does_not_lead_out() {
    let work = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret"), "top secret").unwrap();
    std::os::unix::fs::symlink(outside.path(), work.path().join("link")).unwrap();
    let script = vec![
        tool_calls(&[
            ("r", "vfs_read", r#"{"path":"link/secret"}"#),
            ("w", "vfs_write", r#"{"path":"link/planted","content":"x"}"#),
        ]),
        text("ok"),
    ];
    let opts = AgentOptions {
        workdir: Some(work.path().to_path_buf()),
        ..task("read through the link")
    };
    let (_record, seen, _home) = run(script, opts).await;
    let answers: Vec<String> = tool_answers(&seen[1]).into_iter().map(|(_, t)| t).collect();
    assert_eq!(answers, ["write blocked: path escapes your working dir"; 2]);
    assert!(!outside.path().join("planted").exists());
}

#[tokio::test]
async fn a_long_tool_output_is_cut_to_4000_characters_for_the_model_and_200_in_the_log() {
    let script = vec![
        tool_calls(&[("s", "shell", r#"{"pipeline":"seq 1 5000"}"#)]),
        text("counted"),
    ];
    let (record, seen, _home) = run(script, task("count")).await;
    let answers = tool_answers(&seen[1]);
    assert_eq!(answers[0].1.chars().count(), 4000);
    assert!(answers[0].1.starts_with("1\n2\n3\n"));
    let line = std::fs::read_to_string(record.workdir.join("_steps.jsonl")).unwrap();
    let v: Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(v["output"].as_str().unwrap().chars().count(), 200);
}

#[tokio::test]
async fn runs_are_kept_per_tenant_and_a_bad_tenant_or_id_is_refused() {
    let server = model_server::start(vec![text("ok")]).await;
    let home = tempfile::tempdir().unwrap();
    let engine = engine_for(home.path(), &server, quick_bounds());
    let opts = AgentOptions {
        tenant: "acme".into(),
        id: Some("run-1".into()),
        ..task("t")
    };
    let record = workbooks_agent::Agents::new(engine.clone())
        .run(opts)
        .await
        .unwrap();
    let expected = home
        .path()
        .join("runs/acme/run-1/workdir")
        .canonicalize()
        .unwrap();
    assert_eq!(record.workdir, expected);
    for (tenant, id) in [("../evil", "r"), ("acme", "../../x"), ("acme", "")] {
        let opts = AgentOptions {
            tenant: tenant.into(),
            id: Some(id.into()),
            ..task("t")
        };
        let err = workbooks_agent::Agents::new(engine.clone())
            .run(opts)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("invalid"), "{tenant} {id}: {err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wbx_agent_run_prints_the_record_as_json() {
    let server = model_server::start(vec![
        tool_calls(&[(
            "s",
            "shell",
            r#"{"pipeline":"echo hi > greeting.txt; cat greeting.txt"}"#,
        )]),
        tool_calls(&[("d", "done", r#"{"result":"greeted"}"#)]),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let base = server.base_url();
    let h = home.path().to_path_buf();
    let out = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_wbx"))
            .args([
                "agent", "run", "--task", "greet", "--json", "--tenant", "acme",
            ])
            .env("WB_HOME", &h)
            .env("WB_LLM_BASE_URL", base)
            .env("WB_LLM_API_KEY", KEY)
            .env("WB_LLM_MODEL", "cli-model")
            .env_remove("OPENROUTER_API_KEY")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let record: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(record["status"], "done");
    assert_eq!(record["result"], "greeted");
    assert_eq!(record["steps"], 2);
    assert_eq!(record["events"][0]["output"], "hi\n");
    let workdir = std::path::PathBuf::from(record["workdir"].as_str().unwrap());
    assert!(workdir.starts_with(home.path().canonicalize().unwrap().join("runs/acme")));
    assert_eq!(
        std::fs::read_to_string(workdir.join("greeting.txt")).unwrap(),
        "hi\n"
    );
    assert_eq!(server.requests()[0].body["model"], "cli-model");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wbx_agent_run_takes_its_agent_from_an_org_definition() {
    let server = model_server::start(vec![
        tool_calls(&[("s", "shell", r#"{"pipeline":"true"}"#)]),
        text("roster kept"),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let def = home.path().join("waldo.org");
    std::fs::write(
        &def,
        "* Waldo :agent:\n:PROPERTIES:\n:ID: waldo\n:MODEL: org-model\n:END:\n** System prompt\nYou keep the roster.\n",
    )
    .unwrap();
    let not_agent = home.path().join("notes.org");
    std::fs::write(&not_agent, "* Notes\nnothing here\n").unwrap();
    let (base, h) = (server.base_url(), home.path().to_path_buf());
    let (def, not_agent) = (
        def.to_str().unwrap().to_string(),
        not_agent.to_str().unwrap().to_string(),
    );
    let (out, refused) = tokio::task::spawn_blocking(move || {
        let wbx = |def: &str| {
            std::process::Command::new(env!("CARGO_BIN_EXE_wbx"))
                .args(["agent", "run", "--task", "keep it", "--def", def])
                .env("WB_HOME", &h)
                .env("WB_LLM_BASE_URL", &base)
                .output()
                .unwrap()
        };
        (wbx(&def), wbx(&not_agent))
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "roster kept\n");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("step 1: shell {\"pipeline\":\"true\"} (exit 0,"),
        "{stderr}"
    );
    let first = &server.requests()[0];
    assert_eq!(first.body["model"], "org-model");
    assert_eq!(first.messages()[0]["content"], "You keep the roster.");
    assert_eq!(refused.status.code(), Some(64));
    let why = String::from_utf8_lossy(&refused.stderr);
    assert!(why.contains("no :agent: node"), "{why}");
    assert_eq!(server.requests().len(), 2);
}

#[tokio::test]
async fn search_ranks_the_workdirs_files_in_the_sandbox() {
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join("notes")).unwrap();
    std::fs::write(
        work.path().join("notes/roster.md"),
        "ada\ngrace\nthe roster roster\n",
    )
    .unwrap();
    std::fs::write(work.path().join("plan.txt"), "publish the roster page\n").unwrap();
    std::fs::write(work.path().join("other.txt"), "unrelated\n").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("secret.txt"),
        "roster roster roster roster\n",
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path(), work.path().join("link")).unwrap();
    let script = vec![
        tool_calls(&[
            ("s", "search", r#"{"query":"roster"}"#),
            ("z", "search", r#"{"query":"zebra"}"#),
        ]),
        text("found"),
    ];
    let opts = AgentOptions {
        workdir: Some(work.path().to_path_buf()),
        ..task("find the roster")
    };
    let (record, seen, _home) = run(script, opts).await;
    assert_eq!(record.result, "found");
    let answers = tool_answers(&seen[1]);
    let hits: Vec<&str> = answers[0]
        .1
        .lines()
        .filter(|l| !l.starts_with(' '))
        .collect();
    assert_eq!(hits.len(), 2, "{}", answers[0].1);
    assert!(
        hits[0].starts_with("notes/roster.md (score "),
        "{}",
        answers[0].1
    );
    assert!(hits[1].starts_with("plan.txt (score "), "{}", answers[0].1);
    assert!(
        !answers[0].1.contains("secret"),
        "a link led the search out"
    );
    assert_eq!(answers[1].1, "no files match `zebra`\n");
    assert_eq!(record.events[1].exit_code, 1);
}

#[tokio::test]
async fn fetch_reads_a_page_as_text_and_the_floor_still_holds() {
    use workbooks::Cidr;
    let pages = crate::servers::http().await;
    let server = model_server::start(vec![
        tool_calls(&[
            (
                "p",
                "fetch",
                &format!(r#"{{"url":"{}"}}"#, pages.url("/html")),
            ),
            (
                "m",
                "fetch",
                r#"{"url":"http://169.254.169.254/latest/meta-data/"}"#,
            ),
            ("f", "fetch", r#"{"url":"file:///etc/passwd"}"#),
        ]),
        text("read"),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    // The page server is on loopback: the operator opens exactly that.
    let engine = builder_for(home.path(), &server, quick_bounds())
        .net_allow(vec![Cidr::parse("127.0.0.1/32").unwrap()])
        .build()
        .unwrap();
    let record = workbooks_agent::Agents::new(engine.clone())
        .run(task("read the page"))
        .await
        .unwrap();
    assert_eq!(record.result, "read");
    let answers = tool_answers(&server.requests()[1]);
    assert_eq!(
        answers[0].1,
        "Test Page\n\nHello\nfrom the loopback server & friends\n"
    );
    for (i, e) in record.events.iter().enumerate().skip(1) {
        assert_eq!(e.exit_code, 1, "{e:?}");
        let why = e.error.as_deref().unwrap_or_default();
        assert!(why.starts_with("fetch: "), "{i}: {why}");
    }
    assert!(answers[1].1.contains("Denied"), "{}", answers[1].1);
    assert!(
        answers[2].1.contains("file:///etc/passwd"),
        "{}",
        answers[2].1
    );
    assert!(!answers[2].1.contains("root:"), "{}", answers[2].1);
}

#[tokio::test]
async fn the_hosts_files_in_the_workdir_never_write_through_a_planted_link() {
    let work = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("precious.txt");
    std::fs::write(&target, "precious").unwrap();
    let own = [
        "_steps.jsonl",
        "events.org",
        "_run.json",
        "_model.jsonl",
        "_world.jsonl",
        "ledger.note",
        "ledger.leaves",
        "ledger.vkey",
    ];
    for name in own {
        std::os::unix::fs::symlink(&target, work.path().join(name)).unwrap();
    }
    let script = vec![
        tool_calls(&[("s", "shell", r#"{"pipeline":"true"}"#)]),
        text("done"),
    ];
    let opts = AgentOptions {
        workdir: Some(work.path().to_path_buf()),
        ..task("write your trace")
    };
    let (record, _, _home) = run(script, opts).await;
    assert_eq!(record.result, "done");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
    // Whole files replaced the links; the appended trace refused to follow
    // one, and said so.
    for name in ["events.org", "_run.json", "_model.jsonl", "ledger.note"] {
        let meta = std::fs::symlink_metadata(work.path().join(name)).unwrap();
        assert!(meta.file_type().is_file(), "{name} is still a link");
    }
    let why = record.trace_error.as_deref().unwrap_or_default();
    assert!(why.contains("_steps.jsonl"), "{why}");
}

#[tokio::test]
async fn a_turn_runs_at_most_sixteen_calls_and_answers_the_rest() {
    let ids: Vec<String> = (0..17).map(|i| format!("c{i}")).collect();
    let calls: Vec<(&str, &str, &str)> = ids
        .iter()
        .map(|id| (id.as_str(), "shell", r#"{"pipeline":"true"}"#))
        .collect();
    let (record, seen, _home) = run(vec![tool_calls(&calls), text("ok")], task("t")).await;
    let answers = tool_answers(&seen[1]);
    assert_eq!(answers.len(), 17);
    // `true` prints nothing: the first sixteen ran and answered empty.
    let ran: Vec<&str> = answers[..16].iter().map(|(_, out)| out.as_str()).collect();
    assert_eq!(ran, vec![""; 16]);
    let exits: Vec<i32> = record.events[..16].iter().map(|e| e.exit_code).collect();
    assert_eq!(exits, vec![0; 16]);
    assert_eq!(
        answers[16].1,
        "tool error: more than 16 tool calls in one turn; shell was not run"
    );
    assert_eq!(record.events[16].exit_code, 1);
}
