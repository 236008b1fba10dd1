//! A stored grant on the `call` and `serve` lanes, attacked as `wbx` runs
//! them: a plugin called under a grant and a handler served under one
//! each try a name the grant does not allow for the very address it does
//! (the floor would let both through: guests may reach loopback here), a
//! narrowing made by `wbx grant` while the handler serves reaches its next
//! request, and once the grant is revoked every request is refused, naming
//! it. Only the scope can tell the two names apart. `wbx mcp` under a
//! grant sees a narrowing and a revocation at its next tool call.

use crate::common::{text, wbx, wbx_env};
use crate::grants::grant_id;
use crate::serve::{hello_within, spawn_wbx_serving};
use guest_artifacts::{INSTANCE_FETCH, INSTANCE_PLUGIN, SERVE_FETCH};
use std::sync::atomic::Ordering;

/// Guests may reach loopback, where the test server listens.
const LOOPBACK: (&str, &str) = ("WB_NET_ALLOW", "127.0.0.0/8");

/// `sha256:<hex>` of a probe's bytes, the subject a grant for it names.
fn subject(probe: &str) -> String {
    let artifact = workbooks::Artifact::from_file(probe).unwrap();
    format!("sha256:{}", artifact.sha256_hex())
}

/// `wbx grant add` of a `network` grant for tenant acme reaching only
/// `allowed`, for `probe`: its id.
fn add_grant(home: &std::path::Path, allowed: &str, probe: &str) -> String {
    let out = wbx(
        home,
        &[
            "--json",
            "grant",
            "add",
            "--tenant",
            "acme",
            "--profile",
            "network",
            "--subject",
            &subject(probe),
            "--allow-host",
            allowed,
        ],
        b"",
    );
    grant_id(&out)
}

/// What a lane's test runs against: the loopback server (on its own
/// runtime), a home, the one destination allowed and the grant for the
/// probe reaching only it.
struct Lane {
    rt: tokio::runtime::Runtime,
    srv: crate::servers::Http,
    home: tempfile::TempDir,
    port: u16,
    allowed: String,
    id: String,
}

fn lane(probe: &str) -> Lane {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let srv = rt.block_on(crate::servers::http());
    let home = tempfile::tempdir().unwrap();
    let port = srv.addr.port();
    let allowed = format!("http://127.0.0.1:{port}");
    let id = add_grant(home.path(), &allowed, probe);
    Lane {
        rt,
        srv,
        home,
        port,
        allowed,
        id,
    }
}

#[test]
fn a_plugin_called_under_a_grant_reaches_its_destination_and_no_other_name_for_it() {
    let Lane {
        rt: _rt,
        srv,
        home,
        port,
        allowed,
        id,
    } = lane(INSTANCE_FETCH);
    let h = home.path();
    let call = |url: &str| {
        let args = ["call", "--grant", &id, "--input", url, INSTANCE_FETCH];
        wbx_env(h, &args, b"", &[LOOPBACK])
    };
    let out = call(&format!("{allowed}/bytes/3"));
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(0), "200 3\n".to_string()),
        "{}",
        text(&out.stderr)
    );
    let other = format!("http://localhost:{port}/bytes/3");
    let out = call(&other);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!(
            "grant {id}: net scope allows {allowed}; refused {other}"
        )),
        "{}",
        text(&out.stderr)
    );
    // A grant for this plugin is not a grant for another component.
    let args = ["call", "--grant", &id, "--input", "count", INSTANCE_PLUGIN];
    let out = wbx_env(h, &args, b"", &[LOOPBACK]);
    assert_eq!(out.status.code(), Some(120), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains(&format!("grant {id} is for sha256:")));
    assert_eq!(srv.hits.load(Ordering::SeqCst), 1);
}

#[test]
fn a_handler_served_under_a_grant_sees_its_narrowing_and_revocation_at_the_next_request() {
    let Lane {
        rt,
        srv,
        home,
        port,
        allowed,
        id,
    } = lane(SERVE_FETCH);
    let h = home.path();
    let (_child, addr) = spawn_wbx_serving(h, &["--grant", &id], SERVE_FETCH, None, &[LOOPBACK]);
    assert_eq!(hello_within(addr, 100).map(|a| a.0), Some(200));
    let get = |path: &str| {
        rt.block_on(crate::common::http_request(addr, "GET", path, ""))
            .unwrap()
    };
    let inside = format!("/fetch/127.0.0.1:{port}/bytes/3");
    assert_eq!(get(&inside), (200, "200 3\n".to_string()));
    let outside = format!("/fetch/localhost:{port}/bytes/3");
    let denied =
        |(status, body): (u16, String)| status == 502 && body.contains("HttpRequestDenied");
    let answer = get(&outside);
    assert!(denied(answer.clone()), "{answer:?}");
    // Narrowed by `wbx grant` in another process while it serves.
    let out = wbx(h, &["grant", "narrow", &id, "--drop-host", &allowed], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    std::thread::sleep(workbooks::limits::GRANT_REFRESH_INTERVAL * 3);
    let answer = get(&inside);
    assert!(denied(answer.clone()), "{answer:?}");
    // Revoked: no request runs at all, and the refusal names the grant.
    let out = wbx(h, &["grant", "revoke", &id], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    std::thread::sleep(workbooks::limits::GRANT_REFRESH_INTERVAL * 3);
    assert_eq!(get("/hello"), (403, format!("grant {id} was revoked\n")));
    assert_eq!(srv.hits.load(Ordering::SeqCst), 1);
}

/// The fabric under a grant: `wbx fabric run --grant` of a command the
/// grant does not name is refused for every input, naming the grant.
#[test]
fn wbx_fabric_under_a_grant_runs_no_command_the_grant_does_not_name() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let add = [
        "--json",
        "grant",
        "add",
        "--tenant",
        "default",
        "--command",
        "sort",
    ];
    let id = &grant_id(&wbx(h, &add, b""));
    let inputs = h.join("in.jsonl");
    std::fs::write(
        &inputs,
        "{\"args\": [\".\"], \"stdin\": \"[1]\"}\n".repeat(2),
    )
    .unwrap();
    let inputs = inputs.to_str().unwrap();
    let run = [
        "--json", "fabric", "run", "jq", "--grant", id, "--inputs", inputs,
    ];
    let out = wbx(h, &run, b"");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let rows: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let why = format!("grant {id}: commands scope allows sort; refused command jq");
    for row in &rows[..2] {
        assert!(
            row["error"].as_str().is_some_and(|e| e.contains(&why)),
            "{row}"
        );
    }
}

/// A kernel fanned out under a grant that has since expired makes no
/// call: each input's result is the grant's refusal.
#[tokio::test]
async fn a_kernel_fanned_out_under_an_expired_grant_makes_no_call() {
    use workbooks::grants::{Expiry, GRANTS_FILE, GrantBook, GrantRecord, Lists, now_ms};
    use workbooks_fabric::{Fabric, FabricOptions, Target, TaskInput};
    let home = tempfile::tempdir().unwrap();
    let e = crate::scope::engine(&home);
    let kernel = std::fs::read(guest_artifacts::TEST_KERNEL).unwrap();
    workbooks::kernel::Kernels::of(&e)
        .register("k", kernel, workbooks::kernel::KERNEL_ENTRY, false)
        .unwrap();
    let book = GrantBook::new(Some(home.path().join(GRANTS_FILE)));
    let id = book.add(GrantRecord::new("t", "test")).unwrap().id;
    let scope = e.granted_scope(&id, "t", "line").unwrap();
    let none = Lists::default();
    book.narrow(&id, &none, &none, Expiry::At(now_ms()), "test")
        .unwrap();
    tokio::time::sleep(workbooks::limits::GRANT_REFRESH_INTERVAL * 2).await;
    let opts = workbooks::shell::LineOptions {
        tenant: "t".into(),
        scope: Some(scope),
        ..Default::default()
    };
    let input = TaskInput {
        stdin: "abc".into(),
        ..TaskInput::default()
    };
    let results = Fabric::new(e.clone())
        .fan_out_as_host(
            opts,
            &Target::Kernel("k".into()),
            vec![input; 2],
            &FabricOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(results.len(), 2);
    for r in &results {
        let refused = r.error.as_deref();
        let why = format!("grant {id} expired at");
        assert!(refused.is_some_and(|e| e.contains(&why)), "{r:?}");
    }
}

/// The `llm` scope, attacked from a guest: under a grant naming one model,
/// a request for another (and one naming none, which would get the
/// endpoint's default) is answered 403 by the host, naming the grant, and
/// never reaches the model server; the named model is asked as usual.
#[tokio::test]
async fn a_model_the_grant_does_not_name_is_refused_by_the_host_and_never_asked() {
    use crate::model_server::{self, text};
    use workbooks::grants::{GRANTS_FILE, GrantBook, GrantRecord};
    let server = model_server::start(vec![text("forty-two")]).await;
    let home = tempfile::tempdir().unwrap();
    let e = crate::agent::engine_for(home.path(), &server, crate::agent::quick_bounds());
    let book = GrantBook::new(Some(home.path().join(GRANTS_FILE)));
    let mut record = GrantRecord::new("acme", "test");
    record
        .names
        .insert("llm".into(), vec!["picked-model".into()]);
    let id = book.add(record).unwrap().id;
    let ask = |model: Option<&str>| {
        let mut opts = workbooks::SessionOptions::new("asker", "acme");
        opts.args = std::iter::once("six times seven?")
            .chain(model)
            .map(str::to_string)
            .collect();
        opts.scope = Some(e.granted_scope(&id, "acme", "line").unwrap());
        crate::net::run_session(&e, guest_artifacts::NET_LLM, "network", opts)
    };
    for (model, shown) in [
        (Some("other-model"), "other-model"),
        (None, "default-model"),
    ] {
        let out = ask(model).await;
        let why = format!("grant {id}: llm scope allows picked-model; refused model {shown}");
        assert!(out.contains("Status((403") && out.contains(&why), "{out}");
    }
    assert_eq!(server.requests().len(), 0);
    assert_eq!(ask(Some("picked-model")).await, "answer: forty-two\n");
    assert_eq!(server.requests().len(), 1);
    let audit = e.cadence().audit().summary();
    assert_eq!(
        audit.counts.get("out_of_scope").copied(),
        Some(2),
        "{audit:?}"
    );
}

/// `wbx grant add --tenant acme` with `reach`: the grant's id.
fn acme_grant(home: &std::path::Path, reach: &[&str]) -> String {
    let mut args = vec!["--json", "grant", "add", "--tenant", "acme"];
    args.extend_from_slice(reach);
    grant_id(&wbx(home, &args, b""))
}

/// One JSON-RPC exchange with a `wbx mcp` child over stdio: writes
/// `request` (newline-delimited, as the MCP stdio transport is), reads
/// lines until the answer to its id.
fn rpc(
    stdin: &mut std::process::ChildStdin,
    lines: &mut impl Iterator<Item = std::io::Result<String>>,
    request: serde_json::Value,
) -> serde_json::Value {
    use std::io::Write as _;
    writeln!(stdin, "{request}").unwrap();
    stdin.flush().unwrap();
    let Some(id) = request.get("id") else {
        return serde_json::Value::Null;
    };
    loop {
        let line = lines.next().expect("the server answers").unwrap();
        let answer: serde_json::Value = serde_json::from_str(&line).unwrap();
        if answer.get("id") == Some(id) {
            return answer;
        }
    }
}

/// `wbx mcp --grant` serves under the stored grant as it is at each
/// call: a shell line the grant allows runs; after `wbx grant narrow` in
/// another process drops `seq`, the same line is a tool error naming the
/// grant and the command; once revoked, every call is refused naming it.
#[test]
fn wbx_mcp_under_a_grant_sees_its_narrowing_and_revocation_at_the_next_call() {
    use serde_json::json;
    use std::io::BufRead as _;
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let id = acme_grant(
        h,
        &["--subject", "mcp", "--command", "seq", "--command", "wc"],
    );
    let mut child = crate::common::wbx_command(h)
        .args(["mcp", "--grant", &id])
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let init = rpc(
        &mut stdin,
        &mut lines,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "grant-lane-test", "version": "0"}}}),
    );
    assert!(init["result"]["serverInfo"].is_object(), "{init}");
    rpc(
        &mut stdin,
        &mut lines,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    let mut next = 1;
    let mut shell = |stdin: &mut std::process::ChildStdin, line: &str| {
        next += 1;
        let answer = rpc(
            stdin,
            &mut lines,
            json!({"jsonrpc": "2.0", "id": next, "method": "tools/call",
                   "params": {"name": "shell", "arguments": {"line": line}}}),
        );
        let result = &answer["result"];
        let said = result["content"][0]["text"].as_str().unwrap_or_default();
        (
            said.to_string(),
            result["isError"].as_bool().unwrap_or(false),
        )
    };
    let (said, failed) = shell(&mut stdin, "seq 1 3 | wc -l");
    assert_eq!((said.trim(), failed), ("3", false), "{said}");
    let out = wbx(h, &["grant", "narrow", &id, "--drop-command", "seq"], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (said, failed) = shell(&mut stdin, "seq 1 3 | wc -l");
    assert!(failed, "{said}");
    assert!(
        said.contains(&format!(
            "grant {id}: commands scope allows wc; refused command seq"
        )),
        "{said}"
    );
    let out = wbx(h, &["grant", "revoke", &id], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (said, failed) = shell(&mut stdin, "wc -l");
    assert!(failed, "{said}");
    assert!(said.contains(&format!("grant {id} was revoked")), "{said}");
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    // A grant for another subject is refused before anything is served.
    let other = acme_grant(h, &["--subject", "line"]);
    let out = wbx(h, &["mcp", "--grant", &other], b"");
    assert_eq!(out.status.code(), Some(120), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!("grant {other} is for line, not mcp")),
        "{}",
        text(&out.stderr)
    );
}

/// A grant's token allowance is counted across sessions from each reply's
/// usage (18 tokens a reply here): each request asks for no more than is
/// left, the spend is kept in the home (so another process sees it), and
/// once the allowance is spent the host answers 403 naming the grant and
/// never posts; widening it lets requests through again.
#[tokio::test]
async fn a_grants_token_allowance_is_counted_across_sessions_and_refuses_once_spent() {
    use crate::model_server::{self, text};
    use workbooks::grants::{Expiry, GRANTS_FILE, GrantBook, GrantRecord, Lists};
    let server = model_server::start(vec![text("forty-two")]).await;
    let home = tempfile::tempdir().unwrap();
    let e = crate::agent::engine_for(home.path(), &server, crate::agent::quick_bounds());
    let book = GrantBook::new(Some(home.path().join(GRANTS_FILE)));
    let mut record = GrantRecord::new("acme", "test");
    record.llm_tokens = Some(30);
    let id = book.add(record).unwrap().id;
    let ask = || {
        let mut opts = workbooks::SessionOptions::new("asker", "acme");
        opts.args = vec!["six times seven?".into()];
        opts.scope = Some(e.granted_scope(&id, "acme", "line").unwrap());
        crate::net::run_session(&e, guest_artifacts::NET_LLM, "network", opts)
    };
    assert_eq!(ask().await, "answer: forty-two\n");
    assert_eq!(ask().await, "answer: forty-two\n");
    let seen = server.requests();
    assert_eq!(seen.len(), 2);
    // The second asked for at most what was left: 30 - 18.
    assert!(
        seen[1].body["max_tokens"].as_u64().unwrap() <= 12,
        "{}",
        seen[1].body
    );
    // Another handle on the home sees the spend.
    assert_eq!(book.get(&id).unwrap().llm_spent, 36);
    let out = ask().await;
    let why = format!("grant {id}: llm allowance of 30 tokens is spent");
    assert!(out.contains("Status((403") && out.contains(&why), "{out}");
    assert_eq!(server.requests().len(), 2, "a spent grant posted");
    // Narrowing may only lower it; widening raises it, and requests go on.
    let more = Lists {
        llm_tokens: Some(100),
        ..Lists::default()
    };
    let refused = book.narrow(&id, &more, &Lists::default(), Expiry::Keep, "test");
    assert!(refused.is_err(), "a narrowing raised the allowance");
    book.widen(&id, &more, Expiry::Keep, "test").unwrap();
    assert_eq!(ask().await, "answer: forty-two\n");
    assert_eq!(server.requests().len(), 3);
}

/// `wbx mcp --operator` serves the operator's grant verbs for one tenant,
/// and nothing else: its tools are the six grant verbs (no sandbox tool
/// beside them), a change is kept and audited `by mcp`, another tenant's
/// grant is unknown, a request that does not read is a tool error naming
/// it, and over HTTP it will not start without a bearer token, even on
/// loopback.
#[test]
fn wbx_mcp_operator_changes_one_tenants_grants_and_needs_a_token_over_http() {
    use serde_json::json;
    use std::io::BufRead as _;
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let foreign = grant_id(&wbx(
        h,
        &["--json", "grant", "add", "--tenant", "other"],
        b"",
    ));
    let mut child = crate::common::wbx_command(h)
        .args(["mcp", "--operator", "--tenant", "acme"])
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    rpc(
        &mut stdin,
        &mut lines,
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "operator-test", "version": "0"}}}),
    );
    rpc(
        &mut stdin,
        &mut lines,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    );
    let listed = rpc(
        &mut stdin,
        &mut lines,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    );
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "grant_list",
            "grant_show",
            "grant_add",
            "grant_narrow",
            "grant_widen",
            "grant_revoke"
        ]
    );
    let mut next = 2;
    let mut tool = |stdin: &mut std::process::ChildStdin, name: &str, args: serde_json::Value| {
        next += 1;
        let answer = rpc(
            stdin,
            &mut lines,
            json!({"jsonrpc": "2.0", "id": next, "method": "tools/call",
                   "params": {"name": name, "arguments": args}}),
        );
        let result = &answer["result"];
        let said = result["content"][0]["text"].as_str().unwrap_or_default();
        (
            said.to_string(),
            result["isError"].as_bool().unwrap_or(false),
        )
    };
    let reach = json!({"net": ["https://a.example", "https://b.example"]});
    let (said, failed) = tool(
        &mut stdin,
        "grant_add",
        json!({"subject": "line", "reach": reach}),
    );
    assert!(!failed, "{said}");
    let added: serde_json::Value = serde_json::from_str(&said).unwrap();
    let id = added["id"].as_str().unwrap().to_string();
    assert_eq!(
        (added["tenant"].as_str(), added["by"].as_str()),
        (Some("acme"), Some("mcp"))
    );
    let (said, failed) = tool(
        &mut stdin,
        "grant_narrow",
        json!({"id": id, "drop": {"net": ["https://b.example"]}}),
    );
    assert!(!failed, "{said}");
    let narrowed: serde_json::Value = serde_json::from_str(&said).unwrap();
    assert_eq!(narrowed["net"], json!(["https://a.example"]));
    assert_eq!(narrowed["history"][0]["by"], "mcp");
    // A widening that does not read, and another tenant's grant.
    let (said, failed) = tool(&mut stdin, "grant_widen", json!({"id": id, "hosts": []}));
    assert!(
        failed && said.contains("arguments: unknown field `hosts`"),
        "{said}"
    );
    for verb in ["grant_show", "grant_revoke"] {
        let (said, failed) = tool(&mut stdin, verb, json!({"id": foreign}));
        assert!(
            failed && said.contains(&format!("no grant {foreign}")),
            "{verb}: {said}"
        );
    }
    let (said, failed) = tool(&mut stdin, "grant_list", json!({}));
    assert!(
        !failed && said.contains(&id) && !said.contains(&foreign),
        "{said}"
    );
    let (said, failed) = tool(&mut stdin, "grant_revoke", json!({"id": id}));
    assert!(!failed, "{said}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
    let shown = wbx(h, &["grant", "show", &foreign], b"");
    assert_eq!(
        shown.status.code(),
        Some(0),
        "the foreign grant was touched"
    );
    let shown = wbx(h, &["grant", "show", &id], b"");
    assert_eq!(
        shown.status.code(),
        Some(127),
        "the revoked grant is still there"
    );
    let audit = text(&wbx(h, &["audit"], b"").stdout);
    for what in ["grant_added", "grant_narrowed", "grant_revoked"] {
        assert!(audit.contains(what), "{what}: {audit}");
    }
    // Over HTTP, no token, no server (loopback too).
    let out = wbx(h, &["mcp", "--operator", "--listen", "127.0.0.1:0"], b"");
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("--operator over HTTP changes grants: set a bearer token"),
        "{}",
        text(&out.stderr)
    );
}
