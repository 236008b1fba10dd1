//! The HTTP API of supervised agent runs, against the scripted model
//! server: start, read, stream, list, cancel, review queues, the token,
//! tenants, and a run its host lost.

use crate::agent::{engine_for, quick_bounds};
use crate::common::own_builder;
use crate::model_server::{self, Answer, text, tool_calls};
use futures::StreamExt;
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use workbooks::Engine;
use workbooks_agent::Sessions;
use workbooks_agent::api::{ApiOptions, router, serve};

fn engine(home: &std::path::Path, server: &model_server::ModelServer) -> Engine {
    engine_for(home, server, quick_bounds())
}

/// Serves the API over `engine`'s runs for `tenant` on a loopback port.
async fn api(engine: Engine, tenant: &str, token: Option<&str>) -> SocketAddr {
    serve_api(engine, tenant, token, false).await
}

/// As [`api`], honouring `exec` when `allow_exec`.
pub(crate) async fn serve_api(
    engine: Engine,
    tenant: &str,
    token: Option<&str>,
    allow_exec: bool,
) -> SocketAddr {
    serve_capped(engine, tenant, token, allow_exec, 40).await
}

/// As [`serve_api`], with the operator's `max_steps`.
pub(crate) async fn serve_capped(
    engine: Engine,
    tenant: &str,
    token: Option<&str>,
    allow_exec: bool,
    max_steps: u32,
) -> SocketAddr {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let opts = ApiOptions {
        tenant: tenant.into(),
        token: token.map(str::to_string),
        addr,
        max_steps,
        allow_exec,
        ..ApiOptions::new(tenant, addr)
    };
    let front = engine.clone();
    let app = router(Sessions::open(workbooks_agent::Agents::new(engine)), opts);
    let tenant = tenant.to_string();
    tokio::spawn(
        async move { serve(&front, &tenant, listener, app, std::future::pending()).await },
    );
    addr
}

/// One request; the status and the JSON body (`Null` when there is none).
pub(crate) async fn call(
    addr: SocketAddr,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (u16, Value) {
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let headers = format!("Host: {addr}\r\n{auth}");
    call_with(addr, method, path, &headers, body).await
}

/// One request with exactly `headers` (each line ending in CRLF) besides
/// the body's own.
pub(crate) async fn call_with(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &str,
    body: Option<Value>,
) -> (u16, Value) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let req = format!(
        "{method} {path} HTTP/1.1\r\n{headers}Connection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    let text = String::from_utf8_lossy(&out).into_owned();
    let status: u16 = text.split(' ').nth(1).unwrap().parse().unwrap();
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b)
        .unwrap_or_default();
    (status, serde_json::from_str(body).unwrap_or(Value::Null))
}

/// Starts a run of `task` (no token); its id. The API answers 202,
/// `running`.
async fn start(addr: SocketAddr, task: &str) -> String {
    let (status, started) = call(addr, "POST", "/api/run", None, Some(json!({"task": task}))).await;
    assert_eq!(
        (status, &started["status"]),
        (202, &json!("running")),
        "{started}"
    );
    started["id"].as_str().unwrap().to_string()
}

/// Waits until the run's trace holds `n` lines (a bound on a hang).
async fn steps_logged(home: &std::path::Path, tenant: &str, id: &str, n: usize) {
    let trace = home
        .join("runs")
        .join(tenant)
        .join(id)
        .join("workdir/_steps.jsonl");
    for _ in 0..4800 {
        let lines = std::fs::read_to_string(&trace).map_or(0, |t| t.lines().count());
        if lines >= n {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("run {id} never logged {n} steps");
}

/// Polls the run until it is no longer running (a bound on a hang, not a
/// timing: a fresh home compiles the loop first).
async fn ended(addr: SocketAddr, id: &str) -> Value {
    for _ in 0..4800 {
        let (status, run) = call(addr, "GET", &format!("/api/run/{id}"), None, None).await;
        assert_eq!(status, 200, "{run}");
        if run["status"] != "running" {
            return run;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("run {id} never ended");
}

/// Every frame of a run's stream until it closes.
async fn frames(addr: SocketAddr, id: &str) -> Vec<Value> {
    let url = format!("ws://{addr}/api/run/{id}/stream");
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let mut got = Vec::new();
    while let Some(Ok(msg)) = ws.next().await {
        if let tokio_tungstenite::tungstenite::Message::Text(t) = msg {
            got.push(serde_json::from_str(&t).unwrap());
        }
    }
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_started_over_http_is_streamed_read_and_listed() {
    let server = model_server::start(vec![
        tool_calls(&[("s", "shell", r#"{"pipeline":"echo hi"}"#)]),
        tool_calls(&[("d", "done", r#"{"result":"greeted"}"#)]),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let addr = api(engine(home.path(), &server), "acme", None).await;
    let id = start(addr, "greet").await;
    let frames = frames(addr, &id).await;
    let kinds: Vec<&str> = frames.iter().map(|f| f["type"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["step", "step", "done"], "{frames:?}");
    assert_eq!(frames[0]["tool"], "shell");
    assert_eq!(frames[0]["output"], "hi\n");
    assert_eq!(frames[2]["status"], "done");
    let run = ended(addr, &id).await;
    assert_eq!(run["status"], "done");
    assert_eq!(run["steps"], 2);
    assert_eq!(run["result"], "greeted");
    assert!(run["tools"].as_array().unwrap().contains(&json!("shell")));
    assert!(run["events_org"].as_str().unwrap().contains(":tool_call:"));
    assert!(run.get("workdir").is_none(), "a host path leaked: {run}");
    let (_, runs) = call(addr, "GET", "/api/runs", None, None).await;
    assert_eq!(runs.as_array().unwrap().len(), 1);
    assert_eq!(runs[0]["id"], id.as_str());
    // The run is kept under the tenant, with its trace and ledger.
    let dir = home.path().join("runs/acme").join(&id);
    assert!(dir.join("record.json").is_file());
    assert!(dir.join("workdir/ledger.note").is_file());
    // A stream opened after the end replays the steps and the end.
    let again = self::frames(addr, &id).await;
    assert_eq!(again.len(), 3);
    assert_eq!(again[2]["result"], "greeted");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_run_is_cancelled_and_its_stream_says_so() {
    let server = model_server::start(vec![Answer::Hang]).await;
    let home = tempfile::tempdir().unwrap();
    let addr = api(engine(home.path(), &server), "default", None).await;
    let id = start(addr, "wait").await;
    let url = format!("ws://{addr}/api/run/{id}/stream");
    let (mut ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
    let (status, run) = call(addr, "DELETE", &format!("/api/run/{id}"), None, None).await;
    assert_eq!(
        (status, run["status"].as_str()),
        (200, Some("cancelled")),
        "{run}"
    );
    let frame = ws.next().await.unwrap().unwrap();
    let frame: Value = serde_json::from_str(frame.to_text().unwrap()).unwrap();
    assert_eq!(
        (frame["type"].as_str(), frame["status"].as_str()),
        (Some("done"), Some("cancelled"))
    );
    assert_eq!(ended(addr, &id).await["status"], "cancelled");
    let (status, _) = call(addr, "DELETE", "/api/run/no-such-run", None, None).await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_token_every_route_wants_it_and_bad_requests_are_named() {
    let server = model_server::start(vec![text("ok")]).await;
    let home = tempfile::tempdir().unwrap();
    let addr = api(engine(home.path(), &server), "default", Some("s3cret")).await;
    for (method, path) in [
        ("GET", "/api/runs"),
        ("GET", "/api/openapi.json"),
        ("POST", "/api/run"),
        ("GET", "/api/run/x"),
    ] {
        for token in [None, Some("wrong"), Some("s3cre")] {
            let body = (method == "POST").then(|| json!({"task": "t"}));
            let (status, _) = call(addr, method, path, token, body).await;
            assert_eq!(status, 401, "{method} {path} with {token:?}");
        }
    }
    let (status, doc) = call(addr, "GET", "/api/openapi.json", Some("s3cret"), None).await;
    assert_eq!(status, 200);
    assert_eq!(doc["openapi"], "3.1.0");
    let t = Some("s3cret");
    let (status, _) = call(addr, "POST", "/api/run", t, Some(json!({"task": " "}))).await;
    assert_eq!(status, 400);
    let (status, _) = call(
        addr,
        "POST",
        "/api/run",
        t,
        Some(json!({"task": "t", "shell": "rm -rf /"})),
    )
    .await;
    assert_eq!(status, 422, "an unknown field is refused");
    let (status, run) = call(
        addr,
        "POST",
        "/api/run",
        t,
        Some(json!({"task": "t", "exec": true})),
    )
    .await;
    assert_eq!((status, &run["exec"]), (202, &json!(false)), "{run}");
    let (status, _) = call(addr, "GET", "/api/run/..%2F..%2Fetc", t, None).await;
    assert_eq!(status, 404);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenants_runs_and_queues_are_its_own_and_queues_outlive_the_host() {
    let server = model_server::start(vec![text("ok")]).await;
    let home = tempfile::tempdir().unwrap();
    let e = engine(home.path(), &server);
    let (a, b) = (
        api(e.clone(), "a", None).await,
        api(e.clone(), "b", None).await,
    );
    let id = start(a, "t").await;
    ended(a, &id).await;
    let run = format!("/api/run/{id}");
    assert_eq!(call(b, "GET", &run, None, None).await.0, 404);
    assert_eq!(call(b, "DELETE", &run, None, None).await.0, 404);
    assert_eq!(
        call(b, "POST", &format!("{run}/review"), None, Some(json!(1)))
            .await
            .0,
        404
    );
    assert_eq!(call(b, "GET", "/api/runs", None, None).await.1, json!([]));
    for item in [json!({"check": "roster"}), json!("second")] {
        assert_eq!(
            call(a, "POST", &format!("{run}/review"), None, Some(item))
                .await
                .0,
            201
        );
    }
    let big = json!("x".repeat(70_000));
    assert_eq!(
        call(a, "POST", &format!("{run}/review"), None, Some(big))
            .await
            .0,
        409
    );
    // Another host on the same home takes them, in order.
    let c = api(e, "a", None).await;
    let take = format!("{run}/review/take");
    assert_eq!(
        call(c, "POST", &take, None, None).await,
        (200, json!({"check": "roster"}))
    );
    assert_eq!(
        call(c, "POST", &take, None, None).await,
        (200, json!("second"))
    );
    assert_eq!(call(c, "POST", &take, None, None).await.0, 204);
}

#[tokio::test]
async fn a_run_live_when_its_host_stopped_says_it_was_interrupted() {
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("runs/default/lost-run");
    std::fs::create_dir_all(dir.join("workdir")).unwrap();
    let record = json!({
        "id": "lost-run", "tenant": "default", "agent": "agent", "task": "t",
        "status": "running", "steps": 0, "result": null, "tools": [],
        "workdir": dir.join("workdir"), "started": 1, "ended": null
    });
    std::fs::write(dir.join("record.json"), record.to_string()).unwrap();
    let sessions = Sessions::open(workbooks_agent::Agents::new(
        own_builder(home.path()).build().unwrap(),
    ));
    let got = sessions.get("default", "lost-run").unwrap();
    assert_eq!(got.status, workbooks_agent::SessionStatus::Interrupted);
    assert!(got.result.unwrap().starts_with("interrupted"));
    assert!(sessions.get("other", "lost-run").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rebound_page_is_refused_by_host_and_origin_and_starts_nothing() {
    let server = model_server::start(vec![text("ok")]).await;
    let home = tempfile::tempdir().unwrap();
    let addr = api(engine(home.path(), &server), "default", None).await;
    let port = addr.port();
    let task = Some(json!({"task": "spend the operator's key"}));
    // A DNS-rebinding page: the browser sends the page's own name.
    for headers in [
        "Host: evil.example\r\n".to_string(),
        format!("Host: evil.example:{port}\r\n"),
        format!("Host: localhost:{}\r\n", port + 1),
        format!("Host: 127.0.0.1.nip.io:{port}\r\n"),
        format!("Host: user@localhost:{port}\r\n"),
        String::new(),
    ] {
        for (method, path, body) in [
            ("GET", "/api/runs", None),
            ("POST", "/api/run", task.clone()),
        ] {
            let (status, said) = call_with(addr, method, path, &headers, body).await;
            assert_eq!(status, 403, "{method} {path} with {headers:?}: {said}");
        }
    }
    // A page on another origin posting to the right name.
    let headers = format!("Host: localhost:{port}\r\nOrigin: http://evil.example\r\n");
    let (status, said) = call_with(addr, "POST", "/api/run", &headers, task.clone()).await;
    assert_eq!(status, 403, "{said}");
    assert!(said["error"].as_str().unwrap().contains("Origin"), "{said}");
    // Nothing ran.
    assert_eq!(
        call(addr, "GET", "/api/runs", None, None).await.1,
        json!([])
    );
    // Every loopback name with the bound port is served, and a page of
    // the server's own origin too.
    for name in ["localhost", "127.0.0.1", "[::1]"] {
        let headers = format!("Host: {name}:{port}\r\nOrigin: http://{name}:{port}\r\n");
        let (status, _) = call_with(addr, "GET", "/api/runs", &headers, None).await;
        assert_eq!(status, 200, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_token_a_foreign_host_is_served_but_a_foreign_origin_is_not() {
    let server = model_server::start(vec![text("ok")]).await;
    let home = tempfile::tempdir().unwrap();
    let addr = api(engine(home.path(), &server), "default", Some("s3cret")).await;
    let auth = "Authorization: Bearer s3cret\r\n";
    let headers = format!("Host: api.example.org\r\n{auth}");
    assert_eq!(
        call_with(addr, "GET", "/api/runs", &headers, None).await.0,
        200
    );
    let headers = format!("Host: api.example.org\r\nOrigin: http://evil.example\r\n{auth}");
    assert_eq!(
        call_with(addr, "GET", "/api/runs", &headers, None).await.0,
        403
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_asks_for_no_more_steps_than_the_operator_allows() {
    // The model calls a tool on every turn and never says done.
    let turns = (0..5)
        .map(|i| tool_calls(&[(&format!("c{i}"), "shell", r#"{"pipeline":"true"}"#)]))
        .collect();
    let server = model_server::start(turns).await;
    let home = tempfile::tempdir().unwrap();
    let addr = serve_capped(engine(home.path(), &server), "default", None, false, 2).await;
    let (status, started) = call(
        addr,
        "POST",
        "/api/run",
        None,
        Some(json!({"task": "loop", "max_steps": 1000})),
    )
    .await;
    assert_eq!(status, 202, "{started}");
    let run = ended(addr, started["id"].as_str().unwrap()).await;
    assert_eq!(run["status"], "stopped", "{run}");
    assert_eq!(run["result"], "stopped: reached max_steps (2)", "{run}");
}

#[test]
fn wbx_serve_api_refuses_a_public_address_without_a_token() {
    let home = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_wbx"))
        .args(["serve-api", "--listen", "0.0.0.0:0"])
        .env("WB_HOME", home.path())
        .env_remove("WB_API_TOKEN")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&out.stderr).contains("WB_API_TOKEN"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_that_comes_mid_run_gets_every_step_exactly_once() {
    let server = model_server::start(vec![
        tool_calls(&[("a", "shell", r#"{"pipeline":"echo one"}"#)]),
        Answer::After(
            Duration::from_millis(1500),
            Box::new(tool_calls(&[("b", "shell", r#"{"pipeline":"echo two"}"#)])),
        ),
        text("end"),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let addr = api(engine(home.path(), &server), "default", None).await;
    let id = start(addr, "count").await;
    steps_logged(home.path(), "default", &id, 1).await;
    let frames = frames(addr, &id).await;
    let got: Vec<(&str, &str)> = frames
        .iter()
        .map(|f| {
            (
                f["type"].as_str().unwrap(),
                f["output"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        got,
        [("step", "one\n"), ("step", "two\n"), ("done", "")],
        "{frames:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_org_is_what_the_host_rendered_never_a_file_the_run_wrote() {
    let server = model_server::start(vec![
        tool_calls(&[(
            "w",
            "vfs_write",
            r#"{"path":"events.org","content":"* forged"}"#,
        )]),
        Answer::Hang,
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let addr = api(engine(home.path(), &server), "default", None).await;
    let id = start(addr, "forge").await;
    steps_logged(home.path(), "default", &id, 1).await;
    let forged = home
        .path()
        .join("runs/default")
        .join(&id)
        .join("workdir/events.org");
    assert_eq!(std::fs::read_to_string(&forged).unwrap(), "* forged");
    let (_, live) = call(addr, "GET", &format!("/api/run/{id}"), None, None).await;
    assert_eq!(
        (&live["status"], &live["events_org"]),
        (&json!("running"), &Value::Null)
    );
    let (_, cancelled) = call(addr, "DELETE", &format!("/api/run/{id}"), None, None).await;
    assert_eq!(cancelled["events_org"], Value::Null, "{cancelled}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_this_host_did_not_see_end_is_streamed_only_while_its_ledger_holds() {
    let server = model_server::start(vec![
        tool_calls(&[("a", "shell", r#"{"pipeline":"echo one"}"#)]),
        text("end"),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let e = engine(home.path(), &server);
    let first = api(e.clone(), "default", None).await;
    let id = start(first, "once").await;
    ended(first, &id).await;
    // Another host on the same home reads the trace, its ledger holding.
    let kinds = |frames: &[Value]| -> Vec<String> {
        frames
            .iter()
            .map(|f| f["type"].as_str().unwrap().to_string())
            .collect()
    };
    let second = api(e.clone(), "default", None).await;
    let frames_now = frames(second, &id).await;
    assert_eq!(kinds(&frames_now), ["step", "done"], "{frames_now:?}");
    assert_eq!(frames_now[0]["output"], "one\n");
    // A line slipped into the trace afterwards is never streamed.
    let trace = home
        .path()
        .join("runs/default")
        .join(&id)
        .join("workdir/_steps.jsonl");
    let mut text = std::fs::read_to_string(&trace).unwrap();
    text.push_str(r#"{"step":2,"agent":"agent","tool":"shell","args":{},"output":"forged","exit_code":0,"error":null,"dur_ms":1,"ts":1}"#);
    text.push('\n');
    std::fs::write(&trace, text).unwrap();
    let third = api(e, "default", None).await;
    let frames_now = frames(third, &id).await;
    assert_eq!(kinds(&frames_now), ["error", "done"], "{frames_now:?}");
    let why = frames_now[0]["error"].as_str().unwrap();
    assert!(
        why.contains("line 2 of _steps.jsonl is not in the ledger"),
        "{why}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_sixteen_live_runs_a_start_is_refused_and_a_full_queue_refuses_more() {
    let server = model_server::start(vec![Answer::Hang]).await;
    let home = tempfile::tempdir().unwrap();
    let addr = api(engine(home.path(), &server), "default", None).await;
    let mut live = Vec::new();
    for _ in 0..16 {
        live.push(start(addr, "wait").await);
    }
    let (status, why) = call(
        addr,
        "POST",
        "/api/run",
        None,
        Some(json!({"task": "one more"})),
    )
    .await;
    assert_eq!(status, 429, "{why}");
    assert!(
        why["error"]
            .as_str()
            .unwrap()
            .contains("too many live runs")
    );
    // An ended run frees its place.
    assert_eq!(
        call(addr, "DELETE", &format!("/api/run/{}", live[0]), None, None)
            .await
            .0,
        200
    );
    let freed = start(addr, "now there is room").await;
    // A review queue holds 1000 items.
    let review = format!("/api/run/{freed}/review");
    for i in 0..1000 {
        assert_eq!(
            call(addr, "POST", &review, None, Some(json!(i))).await.0,
            201,
            "{i}"
        );
    }
    let (status, why) = call(addr, "POST", &review, None, Some(json!("1001st"))).await;
    assert_eq!(status, 409, "{why}");
    assert!(why["error"].as_str().unwrap().contains("full (1000 items)"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_is_granted_over_http_only_where_the_operator_allows_it() {
    let server = model_server::start(vec![text("ok")]).await;
    let home = tempfile::tempdir().unwrap();
    let e = engine(home.path(), &server);
    let allowed = serve_api(e.clone(), "a", None, true).await;
    let refused = api(e, "a", None).await;
    for (addr, asked, granted) in [
        (allowed, true, true),
        (allowed, false, false),
        (refused, true, false),
    ] {
        let body = json!({"task": "t", "exec": asked});
        let (status, run) = call(addr, "POST", "/api/run", None, Some(body)).await;
        assert_eq!((status, &run["exec"]), (202, &json!(granted)), "{run}");
        let id = run["id"].as_str().unwrap();
        let tools = ended(addr, id).await["tools"].clone();
        let has_git = tools.as_array().unwrap().contains(&json!("git"));
        assert_eq!(has_git, granted, "{tools}");
        assert!(!tools.as_array().unwrap().contains(&json!("run")));
    }
}

/// `wbx serve-api` told to stop (SIGINT, as Ctrl-C sends) while a request
/// is in flight: it accepts no new connection, answers that request once
/// its body arrives, and then exits cleanly. Before the drain the process
/// ended at the signal and the request's connection closed unanswered.
#[test]
fn wbx_serve_api_answers_the_request_in_flight_at_ctrl_c_then_exits() {
    use std::io::{BufRead, Read, Write};
    use std::time::Instant;
    let home = tempfile::tempdir().unwrap();
    let mut child = crate::common::wbx_command(home.path())
        .args(["serve-api", "--listen", "127.0.0.1:0"])
        .env_remove("WB_API_TOKEN")
        .spawn()
        .expect("spawn wbx serve-api");
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let addr: SocketAddr = loop {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "no address told");
        if let Some(at) = line.split("http://").nth(1) {
            break at.split('/').next().unwrap().parse().unwrap();
        }
    };
    let body = br#"{"not_a_task": 1}"#;
    let mut request = std::net::TcpStream::connect(addr).unwrap();
    write!(
        request,
        "POST /api/run HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    request.write_all(&body[..4]).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let pid = rustix::process::Pid::from_child(&child);
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let stopped = Instant::now();
    let refused = loop {
        match std::net::TcpStream::connect(addr) {
            Err(e) => break e.kind(),
            Ok(_) if stopped.elapsed() < Duration::from_secs(5) => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Ok(_) => panic!("a new connection was still taken 5 s after the stop"),
        }
    };
    assert_eq!(refused, std::io::ErrorKind::ConnectionRefused);
    request.write_all(&body[4..]).unwrap();
    request
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut answer = String::new();
    let _ = request.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 4"), "{answer:?}");
    let status = child.wait().unwrap();
    let mut rest = String::new();
    let _ = stderr.read_to_string(&mut rest);
    assert!(status.success(), "{status:?}: {rest}");
}
