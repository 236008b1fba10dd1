//! The agent loop against a model endpoint that misbehaves: transient and
//! final failures, a hang, malformed replies, redirects, oversized
//! replies, no endpoint, a revoked tenant. Every failure is the run's
//! result as text, and every bound holds.

use crate::agent::{engine_for, quick_bounds, run, run_bounded, task};
use crate::common::own_builder;
use crate::model_server::{self, Answer, completion, text};
use serde_json::json;
use std::time::Duration;
use workbooks::LlmBounds;
use workbooks_agent::{AgentOptions, LoopStatus};

#[tokio::test]
async fn a_429_with_retry_after_is_retried_and_a_spent_quota_is_not() {
    let script = vec![
        Answer::Raw(
            429,
            "Retry-After: 1\r\n".into(),
            r#"{"error":{"message":"slow down"}}"#.into(),
        ),
        text("after the wait"),
    ];
    let (record, seen, _home) = run(script, task("t")).await;
    assert_eq!(record.result, "after the wait");
    assert_eq!(seen.len(), 2);

    let spent =
        r#"{"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}}"#;
    let script = vec![Answer::Raw(429, String::new(), spent.into()), text("never")];
    let (record, seen, _home) = run(script, task("t")).await;
    assert_eq!(record.status, LoopStatus::Failed);
    assert_eq!(
        record.result,
        "error: llm status 429: You exceeded your current quota"
    );
    assert_eq!(seen.len(), 1);

    let script = vec![
        Answer::Raw(402, String::new(), r#"{"error":"pay up"}"#.into()),
        text("never"),
    ];
    let (record, seen, _home) = run(script, task("t")).await;
    assert_eq!(record.result, "error: llm status 402: pay up");
    assert_eq!(seen.len(), 1);
}

#[tokio::test]
async fn a_5xx_three_times_spends_both_retries_and_fails_the_run_as_text() {
    let script = vec![Answer::Raw(500, String::new(), "upstream exploded".into())];
    let (record, seen, _home) = run(script, task("t")).await;
    assert_eq!(seen.len(), 3);
    assert_eq!(record.status, LoopStatus::Failed);
    assert_eq!(record.result, "error: llm status 500: upstream exploded");
    assert_eq!(record.steps, 0);
}

#[tokio::test]
async fn a_model_that_hangs_is_cut_off_by_the_outer_deadline() {
    let bounds = LlmBounds {
        request_timeout: Duration::from_millis(400),
        hard_deadline: Duration::from_millis(900),
        ..quick_bounds()
    };
    let (record, seen, _home) = run_bounded(vec![Answer::Hang], task("t"), bounds).await;
    assert_eq!(record.status, LoopStatus::Failed);
    assert_eq!(record.result, "error: llm_hard_timeout");
    assert!(
        seen.len() >= 2,
        "the first attempt was not retried: {}",
        seen.len()
    );

    // With room for every attempt, the last one's timeout is the error.
    let bounds = LlmBounds {
        request_timeout: Duration::from_millis(200),
        ..quick_bounds()
    };
    let (record, seen, _home) = run_bounded(vec![Answer::Hang], task("t"), bounds).await;
    assert_eq!(record.result, "error: llm timeout after 200 ms");
    assert_eq!(seen.len(), 3);
}

#[tokio::test]
async fn a_malformed_reply_and_an_unknown_finish_reason_are_handled_as_the_wire_says() {
    let script = vec![Answer::Raw(200, String::new(), "{\"choices\": [".into())];
    let (record, _, _home) = run(script, task("t")).await;
    assert_eq!(record.status, LoopStatus::Failed);
    assert!(
        record
            .result
            .starts_with("error: llm reply malformed: not JSON"),
        "{}",
        record.result
    );

    let odd = completion(
        json!({"role": "assistant", "content": "fine"}),
        "weird_reason",
    );
    let (record, _, _home) = run(vec![odd], task("t")).await;
    assert_eq!(record.status, LoopStatus::Finished);
    assert_eq!(record.result, "fine");
    assert_eq!(record.turns[0].finish_reason, "weird_reason");
}

#[tokio::test]
async fn without_an_endpoint_the_run_fails_as_text() {
    let home = tempfile::tempdir().unwrap();
    let engine = own_builder(home.path()).build().unwrap();
    let record = workbooks_agent::Agents::new(engine.clone())
        .run(task("t"))
        .await
        .unwrap();
    assert_eq!(record.status, LoopStatus::Failed);
    assert_eq!(record.result, "error: llm not configured");
}

#[tokio::test]
async fn the_key_never_follows_a_redirect_and_a_reply_past_its_cap_is_refused() {
    let elsewhere = model_server::start(vec![text("stolen")]).await;
    let to = format!("Location: {}/steal\r\n", elsewhere.base_url());
    let (record, seen, _home) = run(vec![Answer::Raw(302, to, String::new())], task("t")).await;
    assert_eq!(record.status, LoopStatus::Failed);
    assert!(
        record.result.contains("more than 0 redirects"),
        "{}",
        record.result
    );
    assert_eq!(seen.len(), 1, "a redirect is not a transient failure");
    assert!(
        elsewhere.requests().is_empty(),
        "the key followed a redirect"
    );

    let huge = json!({"choices": [{"message": {"content": "x".repeat(9 << 20)}}]});
    let (record, _, _home) = run(
        vec![Answer::Raw(200, String::new(), huge.to_string())],
        task("t"),
    )
    .await;
    assert_eq!(
        record.result,
        "error: llm exchange larger than 8388608 bytes"
    );
}

#[tokio::test]
async fn a_revoked_tenants_run_cannot_ask_the_model() {
    let server = model_server::start(vec![text("never")]).await;
    let home = tempfile::tempdir().unwrap();
    let engine = engine_for(home.path(), &server, quick_bounds());
    engine.cadence().revocations().revoke("acme").unwrap();
    let opts = AgentOptions {
        tenant: "acme".into(),
        ..task("t")
    };
    let record = workbooks_agent::Agents::new(engine.clone())
        .run(opts)
        .await
        .unwrap();
    assert_eq!(record.result, "error: llm: tenant revoked");
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn a_retry_after_past_the_longest_honoured_is_cut_to_it() {
    // An hour asked for; the bounds honour 2 s, and the outer deadline is
    // 20 s: only a wait cut to 2 s lets the second answer arrive in time.
    let script = vec![
        Answer::Raw(503, "Retry-After: 3600\r\n".into(), "busy".into()),
        text("after the wait"),
    ];
    let (record, seen, _home) = run(script, task("t")).await;
    assert_eq!(record.result, "after the wait");
    assert_eq!(seen.len(), 2);
}
