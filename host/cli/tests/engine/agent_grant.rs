//! An agent run under a stored grant, attacked: a narrowing, an expiry
//! and a revocation reach the run at its next tool call and model request,
//! each change it saw is on its step lines and so in its signed ledger,
//! a replay judges by what was recorded, not the book; the model cannot
//! change its own grant by any tool; the operator changes it over the
//! agent API, behind its token, for its tenant only.

use crate::agent::{engine_for, quick_bounds, task, tool_answers};
use crate::api::{call, serve_api};
use crate::model_server::{self, text, tool_calls};
use serde_json::json;
use std::sync::Arc;
use workbooks::Engine;
use workbooks::grants::{Expiry, GrantRecord, Lists, now_ms};
use workbooks_agent::{AgentOptions, Agents, LoopStatus, StepEvent, StepObserver};

/// A grant for agent `waldo` of tenant `default` whose shell may run
/// `seq`, `wc` and `cat`; its id.
fn shell_grant(engine: &Engine) -> String {
    let mut r = GrantRecord::new("default", "operator");
    r.subject = Some("agent:waldo".into());
    r.names.insert(
        "commands".into(),
        vec!["seq".into(), "wc".into(), "cat".into()],
    );
    engine.grants().add(r).unwrap().id
}

/// `opts` under grant `id`, calling `change` with the grants once, when
/// the first tool call has ended.
fn under(
    id: &str,
    opts: AgentOptions,
    engine: &Engine,
    change: impl Fn(&workbooks::grants::GrantBook) + Send + Sync + 'static,
) -> AgentOptions {
    let book = engine.grants().clone();
    let done = std::sync::atomic::AtomicBool::new(false);
    let observer = move |_: &StepEvent| {
        if !done.swap(true, std::sync::atomic::Ordering::SeqCst) {
            change(&book);
        }
    };
    AgentOptions {
        grant: Some(id.to_string()),
        on_step: Some(StepObserver(Arc::new(observer))),
        ..opts
    }
}

fn seq_dropped() -> Lists {
    let mut drop = Lists::default();
    drop.names.insert("commands".into(), vec!["seq".into()]);
    drop
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_narrowing_reaches_a_run_at_its_next_tool_call_and_is_in_its_ledger_and_replay() {
    let server = model_server::start(vec![
        tool_calls(&[("a", "shell", r#"{"pipeline":"seq 1 3 | wc -l"}"#)]),
        tool_calls(&[("b", "shell", r#"{"pipeline":"seq 1 3 | wc -l"}"#)]),
        text("finished"),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let engine = engine_for(home.path(), &server, quick_bounds());
    let id = shell_grant(&engine);
    let narrow = {
        let id = id.clone();
        move |book: &workbooks::grants::GrantBook| {
            book.narrow(
                &id,
                &Lists::default(),
                &seq_dropped(),
                Expiry::Keep,
                "ops-alice",
            )
            .unwrap();
        }
    };
    let opts = under(&id, task("count"), &engine, narrow);
    let agents = Agents::new(engine.clone());
    let record = agents.run(opts).await.unwrap();
    assert_eq!(record.status, LoopStatus::Finished, "{record:?}");
    assert_eq!(record.events.len(), 2);
    // Step 1 ran under the grant as added, and says so.
    let first = &record.events[0];
    assert_eq!(first.output.trim(), "3", "{first:?}");
    let seen = first
        .grant
        .as_ref()
        .expect("the first call records its grant");
    assert_eq!(seen.id, id);
    let scopes = seen.scopes.as_ref().unwrap();
    assert_eq!(scopes.names["commands"], ["seq", "wc", "cat"]);
    assert!(seen.changes.is_empty() && seen.refused.is_none());
    // Step 2 saw the narrowing: who, before, after; `seq` was refused.
    let second = &record.events[1];
    let seen = second.grant.as_ref().expect("a change is recorded");
    assert_eq!(seen.changes.len(), 1, "{seen:?}");
    let change = &seen.changes[0];
    assert_eq!(
        (change.what.as_str(), change.by.as_str()),
        ("narrowed", "ops-alice")
    );
    assert!(
        change.before.contains("seq") && !change.after.contains("seq"),
        "{change:?}"
    );
    assert_eq!(
        seen.scopes.as_ref().unwrap().names["commands"],
        ["wc", "cat"]
    );
    assert!(
        second.output.contains(&format!(
            "grant {id}: commands scope allows wc, cat; refused command seq"
        )),
        "{second:?}"
    );
    // The ledger seals the lines that carry both views.
    let ledger = record.ledger.as_ref().expect("a sealed ledger");
    assert_eq!(ledger.size, 2);
    let steps = std::fs::read_to_string(record.workdir.join("_steps.jsonl")).unwrap();
    assert!(
        steps.contains("\"ops-alice\"") && steps.contains("\"narrowed\""),
        "{steps}"
    );
    // A replay judges by the recorded views, not the book: the grant is
    // revoked first, and the replay still writes the same lines.
    engine.grants().revoke(&id).unwrap();
    let report = agents.replay(&record.workdir).await.unwrap();
    assert!(report.same, "{:?}", report.first_different_line);
    assert_eq!(report.record.events[1].output, second.output);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_after_the_grant_expired_does_not_run_the_model_is_not_asked_again_and_it_replays() {
    let server = model_server::start(vec![
        tool_calls(&[
            ("a", "shell", r#"{"pipeline":"seq 1 2"}"#),
            ("b", "shell", r#"{"pipeline":"seq 1 2"}"#),
        ]),
        text("finished"),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let engine = engine_for(home.path(), &server, quick_bounds());
    let id = shell_grant(&engine);
    let expire = {
        let id = id.clone();
        move |book: &workbooks::grants::GrantBook| {
            // It expires this millisecond: the next call is past it.
            let at = Expiry::At(now_ms());
            book.narrow(&id, &Lists::default(), &Lists::default(), at, "ops")
                .unwrap();
        }
    };
    let opts = under(&id, task("count"), &engine, expire);
    let record = Agents::new(engine.clone()).run(opts).await.unwrap();
    assert_eq!(record.events.len(), 2, "{record:?}");
    assert_eq!(record.events[0].output, "1\n2\n");
    let second = &record.events[1];
    let seen = second.grant.as_ref().unwrap();
    let refused = seen.refused.as_deref().unwrap();
    assert!(
        refused.contains(&format!("grant {id} expired at")),
        "{refused}"
    );
    assert!(
        second
            .output
            .starts_with(&format!("tool error: shell not run: grant {id} expired at")),
        "{second:?}"
    );
    // The model request after it was refused by the host, never sent.
    assert_eq!(server.requests().len(), 1);
    assert_eq!(record.status, LoopStatus::Failed);
    assert!(
        record
            .result
            .starts_with(&format!("error: llm status 403: grant {id} expired at")),
        "{}",
        record.result
    );
    // The refused request is on the run's tape like any answer: a replay
    // is given the same refusal and writes the same lines (it diverged
    // when the refusal was not recorded).
    let report = Agents::new(engine.clone())
        .replay(&record.workdir)
        .await
        .unwrap();
    assert!(report.same, "{:?}", report.first_different_line);
    assert_eq!(report.record.result, record.result);
}

#[tokio::test]
async fn a_run_is_refused_a_grant_for_another_agent_or_tenant_and_an_unknown_one() {
    let server = model_server::start(vec![text("never")]).await;
    let home = tempfile::tempdir().unwrap();
    let engine = engine_for(home.path(), &server, quick_bounds());
    let id = shell_grant(&engine);
    let agents = Agents::new(engine.clone());
    for (agent, tenant, grant, says) in [
        (
            "mallory",
            "default",
            id.as_str(),
            format!("grant {id} is for agent:waldo, not agent:mallory"),
        ),
        (
            "waldo",
            "other",
            id.as_str(),
            format!("grant {id} is tenant default's, not other's"),
        ),
        (
            "waldo",
            "default",
            "g-00000000",
            "no grant g-00000000".to_string(),
        ),
    ] {
        let opts = AgentOptions {
            agent: agent.into(),
            tenant: tenant.into(),
            grant: Some(grant.into()),
            ..task("anything")
        };
        let refused = agents.run(opts).await.unwrap_err();
        assert!(refused.to_string().contains(&says), "{refused}");
    }
    assert!(
        server.requests().is_empty(),
        "a refused run asked the model"
    );
}

#[tokio::test]
async fn a_model_the_run_grant_does_not_name_is_never_asked() {
    let server = model_server::start(vec![text("never")]).await;
    let home = tempfile::tempdir().unwrap();
    let engine = engine_for(home.path(), &server, quick_bounds());
    let mut r = GrantRecord::new("default", "operator");
    r.names.insert("llm".into(), vec!["small-model".into()]);
    let id = engine.grants().add(r).unwrap().id;
    let opts = AgentOptions {
        grant: Some(id.clone()),
        model: Some("big-model".into()),
        ..task("anything")
    };
    let record = Agents::new(engine).run(opts).await.unwrap();
    assert_eq!(record.status, LoopStatus::Failed);
    assert!(record.result.contains("403"), "{}", record.result);
    assert!(server.requests().is_empty(), "the model was asked");
}

/// The model tries every tool it has to widen its own grant: the `wb`
/// verb, a shell line, a file write to the home's grants file, a shell
/// redirection to it, and the agent API's grant route on loopback. Each is
/// refused, and the stored grants are the same bytes after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_cannot_widen_its_own_grant_by_any_tool() {
    let home = tempfile::tempdir().unwrap();
    let placeholder = model_server::start(vec![text("unused")]).await;
    let engine = engine_for(home.path(), &placeholder, quick_bounds());
    let mut r = GrantRecord::new("default", "operator");
    r.net = Some(vec!["https://api.example.com".into()]);
    let id = engine.grants().add(r).unwrap().id;
    let api = serve_api(engine.clone(), "default", None, false).await;
    let grants_file = home.path().join(workbooks::grants::GRANTS_FILE);
    let before = std::fs::read(&grants_file).unwrap();
    let widen_url = format!("http://{api}/api/grants/{id}/widen");
    let widened = json!({"grants": [{"id": id, "net": ["https://evil.example"]}]}).to_string();
    let escape = "../".repeat(8) + &grants_file.display().to_string();
    let calls = [
        (
            "w",
            "wb",
            json!({"args": format!("grant widen {id} --host https://evil.example")}),
        ),
        (
            "s",
            "shell",
            json!({"pipeline": format!("wbx grant widen {id} --host https://evil.example")}),
        ),
        (
            "v",
            "vfs_write",
            json!({"path": escape, "content": widened}),
        ),
        (
            "r",
            "shell",
            json!({"pipeline": format!("echo x > {escape}")}),
        ),
        ("f", "fetch", json!({"url": widen_url})),
    ];
    let calls: Vec<(&str, &str, String)> = calls
        .iter()
        .map(|(c, t, a)| (*c, *t, a.to_string()))
        .collect();
    let borrowed: Vec<(&str, &str, &str)> =
        calls.iter().map(|(c, t, a)| (*c, *t, a.as_str())).collect();
    let server = model_server::start(vec![tool_calls(&borrowed), text("tried")]).await;
    let engine = engine_for(home.path(), &server, quick_bounds());
    let opts = AgentOptions {
        grant: Some(id.clone()),
        ..task("widen your grant")
    };
    let record = Agents::new(engine.clone()).run(opts).await.unwrap();
    assert_eq!(record.events.len(), 5, "{record:?}");
    let answers = tool_answers(&server.requests()[1]);
    let said = |call: &str| answers.iter().find(|(c, _)| c == call).unwrap().1.clone();
    assert!(
        said("w").contains("is not a read-only verb"),
        "{}",
        said("w")
    );
    assert_eq!(said("s"), "shell error: wbx: unknown_command: `wbx`");
    assert_eq!(said("v"), "write blocked: path escapes your working dir");
    assert!(
        said("r").starts_with("shell error: outside_sandbox: "),
        "{}",
        said("r")
    );
    assert!(
        said("f").contains(&format!(
            "grant {id}: net scope allows https://api.example.com"
        )),
        "{}",
        said("f")
    );
    assert_eq!(
        std::fs::read(&grants_file).unwrap(),
        before,
        "the grants changed"
    );
    let now = engine.grants().get(&id).unwrap();
    assert_eq!(
        now.net.as_deref(),
        Some(&["https://api.example.com".to_string()][..])
    );
    assert!(now.history.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_changes_grants_over_the_api_only_with_its_token_and_for_its_tenant_only() {
    let home = tempfile::tempdir().unwrap();
    let server = model_server::start(vec![text("unused")]).await;
    let engine = engine_for(home.path(), &server, quick_bounds());
    let foreign = engine
        .grants()
        .add(GrantRecord::new("other", "operator"))
        .unwrap()
        .id;
    // Without a token the API serves no grant route at all: any local
    // process may call a loopback API.
    let open = serve_api(engine.clone(), "default", None, false).await;
    let (status, _) = call(open, "GET", "/api/grants", None, None).await;
    assert_eq!(status, 404);
    let (status, _) = call(
        open,
        "DELETE",
        &format!("/api/grants/{foreign}"),
        None,
        None,
    )
    .await;
    assert_eq!(status, 404);
    let api = serve_api(engine.clone(), "default", Some("s3cret"), false).await;
    let token = Some("s3cret");
    // No token, no route.
    let (status, _) = call(api, "GET", "/api/grants", None, None).await;
    assert_eq!(status, 401);
    let (status, added) = call(
        api,
        "POST",
        "/api/grants",
        token,
        Some(json!({"subject": "agent:waldo", "reach": {"net": ["https://a.example", "https://b.example"]}, "for": "1h"})),
    )
    .await;
    assert_eq!(status, 201, "{added}");
    let id = added["id"].as_str().unwrap().to_string();
    assert_eq!(added["tenant"], "default");
    assert_eq!(added["by"], "api");
    let (status, narrowed) = call(
        api,
        "POST",
        &format!("/api/grants/{id}/narrow"),
        token,
        Some(json!({"drop": {"net": ["https://b.example"]}})),
    )
    .await;
    assert_eq!(status, 200, "{narrowed}");
    assert_eq!(narrowed["net"], json!(["https://a.example"]));
    assert_eq!(narrowed["history"][0]["by"], "api");
    // A widening past what the grant names is refused when the body does
    // not read, and a bad list is named.
    let (status, bad) = call(
        api,
        "POST",
        &format!("/api/grants/{id}/widen"),
        token,
        Some(json!({"add": {"hosts": ["https://c.example"]}})),
    )
    .await;
    assert_eq!(status, 422, "{bad}");
    // A list under a word no cap honours would narrow nothing: refused.
    let (status, bad) = call(
        api,
        "POST",
        "/api/grants",
        token,
        Some(json!({"reach": {"names": {"command": ["jq"]}}})),
    )
    .await;
    assert_eq!(status, 400, "{bad}");
    assert!(
        bad["error"]
            .as_str()
            .unwrap()
            .contains("names under \"command\": no cap has that word"),
        "{bad}"
    );
    // Another tenant's grant is not this API's: not shown, not changed.
    for (method, path, body) in [
        ("GET", format!("/api/grants/{foreign}"), None),
        (
            "POST",
            format!("/api/grants/{foreign}/widen"),
            Some(json!({"add": {"net": ["https://x.example"]}})),
        ),
        ("DELETE", format!("/api/grants/{foreign}"), None),
    ] {
        let (status, said) = call(api, method, &path, token, body).await;
        assert_eq!(status, 404, "{method} {path}: {said}");
    }
    assert!(engine.grants().get(&foreign).unwrap().history.is_empty());
    let (status, listed) = call(api, "GET", "/api/grants", token, None).await;
    assert_eq!(status, 200);
    let ids: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [id.as_str()]);
    let (status, _) = call(api, "DELETE", &format!("/api/grants/{id}"), token, None).await;
    assert_eq!(status, 200);
    assert!(engine.grants().get(&id).is_none());
    let audit = std::fs::read_to_string(home.path().join(workbooks::cadence::AUDIT_FILE)).unwrap();
    for what in ["grant_added", "grant_narrowed", "grant_revoked"] {
        assert!(audit.contains(what), "{what} not audited: {audit}");
    }
    assert!(
        audit.contains(&format!(
            "{id} by api: net: https://a.example, https://b.example;"
        )) && audit.contains("-> net: https://a.example; expires"),
        "{audit}"
    );
}
