//! What a run may spend on the operator's model, against a model that
//! never stops talking: every request leaves with `max_tokens`, a run
//! stops at its token budget (from the reply's usage, or estimated when
//! the endpoint sends none), the record and `_steps.jsonl` show each
//! turn's tokens, and the API refuses a tenant whose window is spent.

use crate::agent::{KEY, quick_bounds, task};
use crate::model_server::{self, Answer};
use serde_json::Value;
use workbooks::LlmEndpoint;
use workbooks_agent::LoopStatus;

/// An engine whose model is `server`, answering at most `max_tokens`.
fn engine(
    home: &std::path::Path,
    server: &model_server::ModelServer,
    max_tokens: u64,
) -> workbooks::Engine {
    let mut endpoint = LlmEndpoint::new(&server.base_url(), Some(KEY.into()), "m");
    endpoint.bounds = quick_bounds();
    endpoint.max_tokens = max_tokens;
    crate::common::own_builder(home)
        .llm(endpoint)
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_model_that_never_stops_talking_is_capped_per_request_and_stopped_at_the_budget() {
    let server = model_server::start(vec![Answer::Ramble { usage: true }]).await;
    let home = tempfile::tempdir().unwrap();
    let e = engine(home.path(), &server, 500);
    let opts = workbooks_agent::AgentOptions {
        token_budget: Some(2000),
        ..task("talk")
    };
    let record = workbooks_agent::Agents::new(e.clone())
        .run(opts)
        .await
        .unwrap();
    assert_eq!(record.status, LoopStatus::Stopped, "{}", record.result);
    assert_eq!(
        record.result,
        "stopped: token budget spent (2100 of 2000 tokens)"
    );
    // Every request named max_tokens: the operator's 500, then what was
    // left of the budget.
    let asked: Vec<u64> = server
        .requests()
        .iter()
        .map(|r| r.body["max_tokens"].as_u64().expect("max_tokens"))
        .collect();
    assert_eq!(asked, [500, 500, 500, 200]);
    // The record and the trace show each turn's tokens.
    let totals: Vec<u64> = record
        .turns
        .iter()
        .map(|t| t.tokens.unwrap().total_tokens)
        .collect();
    assert_eq!(totals, [600, 600, 600, 300]);
    assert_eq!(record.tokens, 2100);
    // Each step's line in the trace carries its turn's tokens.
    let trace = std::fs::read_to_string(record.workdir.join("_steps.jsonl")).unwrap();
    let steps: Vec<Value> = trace
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .collect();
    assert_eq!(steps.len(), 4, "{trace}");
    let spent: Vec<u64> = steps
        .iter()
        .map(|s| s["tokens"]["total_tokens"].as_u64().unwrap())
        .collect();
    assert_eq!(spent, [600, 600, 600, 300], "{trace}");
    assert_eq!(steps[3]["tokens"]["completion_tokens"], 200);
    // The signed ledger holds over the lines with the tokens in them.
    let o = crate::common::wbx(
        home.path(),
        &["ledger", "verify", record.workdir.to_str().unwrap()],
        b"",
    );
    assert!(o.status.success(), "{}", crate::common::text(&o.stdout));
}

#[tokio::test]
async fn without_usage_the_host_estimates_and_still_stops_the_run() {
    let server = model_server::start(vec![Answer::Ramble { usage: false }]).await;
    let home = tempfile::tempdir().unwrap();
    let e = engine(home.path(), &server, 300);
    let opts = workbooks_agent::AgentOptions {
        token_budget: Some(1500),
        ..task("talk")
    };
    let record = workbooks_agent::Agents::new(e.clone())
        .run(opts)
        .await
        .unwrap();
    assert_eq!(record.status, LoopStatus::Stopped, "{}", record.result);
    assert!(
        record.result.starts_with("stopped: token budget spent"),
        "{}",
        record.result
    );
    assert!(!record.turns.is_empty(), "no turn recorded");
    for (i, t) in record.turns.iter().enumerate() {
        assert!(
            t.tokens.unwrap().estimated,
            "turn {i}: its tokens were not estimated"
        );
    }
    assert!(record.tokens >= 1500);
    // Far fewer turns than the step budget allowed.
    assert!(record.turns.len() < 12, "{} turns", record.turns.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_api_stops_a_tenant_whose_window_is_spent_and_refuses_its_next_run() {
    use workbooks_agent::Sessions;
    use workbooks_agent::api::{ApiOptions, router, serve};
    let server = model_server::start(vec![Answer::Ramble { usage: true }]).await;
    let home = tempfile::tempdir().unwrap();
    let e = engine(home.path(), &server, 500);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let opts = ApiOptions {
        tenant_tokens: Some((1000, std::time::Duration::from_secs(3600))),
        ..ApiOptions::new("acme", addr)
    };
    let front = e.clone();
    tokio::spawn(async move {
        let app = router(
            Sessions::open(workbooks_agent::Agents::new(front.clone())),
            opts,
        );
        serve(&front, "acme", listener, app, std::future::pending()).await
    });
    let post = |body: &'static str| async move {
        let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
        let req = format!(
            "POST /api/run HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        tokio::io::AsyncWriteExt::write_all(&mut s, req.as_bytes())
            .await
            .unwrap();
        let mut out = String::new();
        tokio::io::AsyncReadExt::read_to_string(&mut s, &mut out)
            .await
            .unwrap();
        out
    };
    let first = post(r#"{"task": "talk", "max_steps": 40}"#).await;
    assert!(first.starts_with("HTTP/1.1 202"), "{first}");
    // The first run spends the window and is stopped by it.
    let home_runs = home.path().join("runs/acme");
    let mut record = Value::Null;
    for _ in 0..2000 {
        let id = std::fs::read_dir(&home_runs)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        record = serde_json::from_slice(&std::fs::read(id.join("record.json")).unwrap()).unwrap();
        if record["status"] != "running" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    assert_eq!(record["status"], "stopped", "{record}");
    assert!(
        record["result"]
            .as_str()
            .unwrap()
            .starts_with("stopped: token budget of tenant acme spent"),
        "{record}"
    );
    assert!(record["tokens"].as_u64().unwrap() >= 1000, "{record}");
    let second = post(r#"{"task": "talk more"}"#).await;
    assert!(second.starts_with("HTTP/1.1 429"), "{second}");
    assert!(
        second.contains("token budget of tenant acme spent"),
        "{second}"
    );
}
