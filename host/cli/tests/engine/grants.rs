//! Grants as stored values, attacked: a guest under a stored grant (`wbx
//! grant add`, `exec --grant`) reaches what the grant names and nothing
//! else, and the refusal names the grant; a narrowing, an expiry and a
//! revocation made by another handle on the home's book (as `wbx grant`
//! in another process) reach the guest while it runs, at its next call, on
//! every network path; a grant is refused to another tenant, another
//! subject and a verb that cannot hold it.

use crate::common::{text, wbx};
use crate::scope::{engine, run_scoped, served};
use guest_artifacts::{NET_FETCH, NET_ONESHOT, SANDBOX_NETWORK};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use workbooks::grants::{Expiry, GRANTS_FILE, GrantBook, GrantRecord, Lists, Scope, now_ms};

/// A second handle on `home`'s book, as `wbx grant` in another process
/// opens it.
pub(crate) fn operator_book(home: &tempfile::TempDir) -> GrantBook {
    GrantBook::new(Some(home.path().join(GRANTS_FILE)))
}

fn none() -> Lists {
    Lists::default()
}

fn hosts(net: &[String]) -> Lists {
    Lists {
        net: net.to_vec(),
        ..Lists::default()
    }
}

fn record(tenant: &str, net: &[String]) -> GrantRecord {
    let mut r = GrantRecord::new(tenant, "test");
    r.net = Some(net.to_vec());
    r
}

#[tokio::test]
async fn a_guest_under_a_stored_grant_is_refused_by_name_of_the_grant() {
    let (srv, home, e) = served().await;
    let port = srv.addr.port();
    let id = operator_book(&home)
        .add(record("t", &[format!("http://api.test:{port}")]))
        .unwrap()
        .id;
    let scope = e.granted_scope(&id, "t", "sha256:any").unwrap();
    let out = run_scoped(
        &e,
        NET_FETCH,
        Some(scope),
        &[
            "fetch",
            &format!("http://api.test:{port}/bytes/3"),
            &format!("http://evil.test:{port}/bytes/3"),
        ],
    )
    .await;
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].ends_with(": 200 3 bytes xxx"), "{out}");
    assert!(
        lines[1].contains(&format!(
            "grant {id}: net scope allows http://api.test:{port}; refused http://evil.test:{port}/bytes/3"
        )),
        "{out}"
    );
    assert_eq!(srv.hits.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_grant_is_refused_to_another_tenant_another_subject_and_after_its_expiry() {
    let home = tempfile::tempdir().unwrap();
    let e = engine(&home);
    let book = operator_book(&home);
    let mut r = record("acme", &["https://api.example".into()]);
    r.subject = Some("sha256:00".into());
    let id = book.add(r).unwrap().id;
    let other_tenant = e.granted_scope(&id, "globex", "sha256:00").unwrap_err();
    assert!(
        other_tenant
            .to_string()
            .contains("is tenant acme's, not globex's")
    );
    let other_subject = e.granted_scope(&id, "acme", "sha256:ff").unwrap_err();
    assert!(other_subject.to_string().contains("is for sha256:00"));
    assert!(e.granted_scope(&id, "acme", "sha256:00").is_ok());
    book.narrow(&id, &none(), &none(), Expiry::At(now_ms()), "test")
        .unwrap();
    let expired = e.granted_scope(&id, "acme", "sha256:00").unwrap_err();
    assert!(
        expired
            .to_string()
            .contains(&format!("grant {id} expired at"))
    );
    assert!(e.granted_scope("g-00000000", "acme", "sha256:00").is_err());
}

/// The guest's first fetch is held by the server for 200 ms; while it is,
/// the operator narrows (then revokes) the grant from another handle. The
/// answer in flight is cut when it comes, and the guest's next call is
/// judged by the grant as it is then.
#[tokio::test]
async fn a_narrowing_and_a_revocation_reach_a_running_guest_at_its_next_call() {
    let (srv, home, e) = served().await;
    let port = srv.addr.port();
    let (api, other) = (
        format!("http://api.test:{port}"),
        format!("http://other.test:{port}"),
    );
    let book = Arc::new(operator_book(&home));
    let id = book
        .add(record("t", &[api.clone(), other.clone()]))
        .unwrap()
        .id;
    let scope = e.granted_scope(&id, "t", "line").unwrap();
    let narrowing = {
        let (book, id, api, hits) = (book.clone(), id.clone(), api.clone(), srv.hits.clone());
        tokio::spawn(async move {
            while hits.load(Ordering::SeqCst) == 0 {
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            book.narrow(&id, &none(), &hosts(&[api]), Expiry::Keep, "test")
                .unwrap();
        })
    };
    let out = run_scoped(
        &e,
        NET_FETCH,
        Some(scope.clone()),
        &[
            "fetch",
            &format!("{api}/concurrent"),
            &format!("{api}/bytes/1"),
            &format!("{other}/bytes/2"),
        ],
    )
    .await;
    narrowing.await.unwrap();
    let lines: Vec<&str> = out.lines().collect();
    // The answer in flight when the grant narrowed is cut, not handed on.
    for (line, path) in lines.iter().zip(["concurrent", "bytes/1"]) {
        let why = format!("grant {id}: net scope allows {other}; refused {api}/{path}");
        assert!(line.contains(&why), "{out}");
    }
    assert!(lines[2].ends_with(": 200 2 bytes xx"), "{out}");
    // Revoked: the same session's next call is refused, naming the grant.
    book.revoke(&id).unwrap();
    tokio::time::sleep(workbooks::limits::GRANT_REFRESH_INTERVAL * 2).await;
    let out = run_scoped(
        &e,
        NET_FETCH,
        Some(scope),
        &["fetch", &format!("{other}/bytes/2")],
    )
    .await;
    assert!(out.contains(&format!("grant {id} was revoked")), "{out}");
    assert_eq!(srv.hits.load(Ordering::SeqCst), 2);
    let audit = e.cadence().audit().summary();
    assert_eq!(
        audit.counts.get("grant_revoked").copied(),
        Some(1),
        "{audit:?}"
    );
}

/// Past its expiry a grant refuses every network path: a fetch, wasi:http,
/// a one-shot socket, a wasi:sockets lookup and connect.
#[tokio::test]
async fn every_network_path_is_refused_once_the_grant_has_expired() {
    let (srv, home, e) = served().await;
    let tcp = crate::servers::tcp_echo().await;
    let port = srv.addr.port();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let sock = listener.local_addr().unwrap().port();
    let book = operator_book(&home);
    let id = book
        .add(record(
            "t",
            &[
                format!("http://api.test:{port}"),
                format!("tcp://db.test:{}", tcp.port()),
                format!("tcp://localhost:{sock}"),
                format!("tcp://127.0.0.1:{sock}"),
            ],
        ))
        .unwrap()
        .id;
    let scope = e.granted_scope(&id, "t", "line").unwrap();
    // Each path once: a fetch, wasi:http, a one-shot, wasi:sockets.
    let paths = |scope: Scope| {
        let e = e.clone();
        async move {
            let mut out = Vec::new();
            for (probe, args) in [
                (
                    NET_FETCH,
                    vec!["fetch".into(), format!("http://api.test:{port}/bytes/3")],
                ),
                (
                    NET_FETCH,
                    vec!["http".into(), format!("http://api.test:{port}/bytes/5")],
                ),
                (
                    NET_ONESHOT,
                    vec![
                        "tcp".into(),
                        "db.test".into(),
                        tcp.port().to_string(),
                        "ping".into(),
                    ],
                ),
                (SANDBOX_NETWORK, vec![sock.to_string()]),
            ] {
                let args: Vec<&str> = args.iter().map(String::as_str).collect();
                out.push(run_scoped(&e, probe, Some(scope.clone()), &args).await);
            }
            out
        }
    };
    let before = paths(scope.clone()).await;
    assert!(before[0].ends_with(": 200 3 bytes xxx\n"), "{before:?}");
    assert!(before[1].ends_with(": 200 5 bytes\n"), "{before:?}");
    assert_eq!(before[2], "reply 9 bytes: echo:ping\n");
    assert!(before[3].contains("connect: connected"), "{before:?}");
    let hits = srv.hits.load(Ordering::SeqCst);
    // Expired a millisecond ago, by another handle.
    let expiry = Expiry::At(now_ms().saturating_sub(1));
    book.narrow(&id, &none(), &none(), expiry, "test").unwrap();
    tokio::time::sleep(workbooks::limits::GRANT_REFRESH_INTERVAL * 2).await;
    let expired = format!("grant {id} expired at");
    let after = paths(scope).await;
    assert!(after[0].contains(&expired), "{after:?}");
    assert!(after[1].contains("HttpRequestDenied"), "{after:?}");
    assert!(after[2].contains(&expired), "{after:?}");
    assert!(after[3].contains("lookup: denied"), "{after:?}");
    assert!(after[3].contains("connect: denied"), "{after:?}");
    assert_eq!(srv.hits.load(Ordering::SeqCst), hits);
    let audit = e.cadence().audit().summary();
    assert!(
        audit.counts.get("grant_expired").copied().unwrap_or(0) >= 3,
        "{audit:?}"
    );
}

/// A scope handed to a child process carries the grant's expiry: a child
/// started before it refuses after it.
#[tokio::test]
async fn a_grant_already_expired_starts_no_child() {
    let home = tempfile::tempdir().unwrap();
    let e = engine(&home);
    let id = operator_book(&home)
        .add(record("t", &["https://api.example".into()]))
        .unwrap()
        .id;
    let scope = Scope::stored(e.grants().clone(), &id);
    operator_book(&home)
        .narrow(&id, &none(), &none(), Expiry::At(now_ms()), "test")
        .unwrap();
    tokio::time::sleep(workbooks::limits::GRANT_REFRESH_INTERVAL * 2).await;
    let refused = scope.snapshot().unwrap_err();
    assert_eq!(refused.reason(), "grant_expired");
}

/// The id `wbx --json grant add` printed, once it exited 0.
pub(crate) fn grant_id(out: &std::process::Output) -> String {
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let record: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    record["id"].as_str().unwrap().to_string()
}

#[test]
fn wbx_grant_adds_narrows_widens_and_revokes_and_exec_runs_under_it() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let add = wbx(
        h,
        &[
            "--json",
            "grant",
            "add",
            "--tenant",
            "acme",
            "--profile",
            "network",
            "--allow-host",
            "https://api.example.com",
            "--for",
            "1h",
        ],
        b"",
    );
    let id = grant_id(&add);
    let exec = |url: &str| wbx(h, &["exec", "--grant", &id, NET_FETCH, "fetch", url], b"");
    // The grant's profile (network) and scope, without a flag for either.
    let out = exec("https://evil.example/");
    assert!(
        text(&out.stdout).contains(&format!(
            "grant {id}: net scope allows https://api.example.com; refused https://evil.example/"
        )),
        "{} {}",
        text(&out.stdout),
        text(&out.stderr)
    );
    // A narrowing that would widen, and a widening that would narrow.
    let out = wbx(
        h,
        &[
            "grant",
            "narrow",
            &id,
            "--only-host",
            "https://other.example",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(120), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("has no destination https://other.example"));
    let out = wbx(
        h,
        &["grant", "widen", &id, "--until", "2000-01-01T00:00:00Z"],
        b"",
    );
    assert_eq!(out.status.code(), Some(120), "{}", text(&out.stderr));
    let out = wbx(
        h,
        &[
            "grant",
            "widen",
            &id,
            "--allow-host",
            "https://evil.example",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = wbx(
        h,
        &[
            "grant",
            "narrow",
            &id,
            "--drop-host",
            "https://evil.example",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = wbx(h, &["grant", "show", &id], b"");
    let shown = text(&shown.stdout);
    assert!(
        shown.contains("widened by") && shown.contains("narrowed by"),
        "{shown}"
    );
    // Another tenant cannot borrow it; a verb that cannot hold it refuses it.
    let out = wbx(
        h,
        &[
            "exec",
            "--grant",
            &id,
            "--tenant",
            "globex",
            NET_FETCH,
            "fetch",
            "https://api.example.com/",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(120), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("is tenant acme's, not globex's"));
    let out = wbx(h, &["mcp", "--grant", &id, "--tenant", "globex"], b"");
    assert_eq!(out.status.code(), Some(120), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("is tenant acme's, not globex's"));
    // Revoked: gone, and exec refuses it.
    let out = wbx(h, &["grant", "revoke", &id], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = exec("https://api.example.com/");
    assert_eq!(out.status.code(), Some(120), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains(&format!("no grant {id}")));
    let out = wbx(h, &["run", "--grant", &id, "true"], b"");
    assert_eq!(out.status.code(), Some(120), "{}", text(&out.stderr));
    // Every change is in the audit log.
    let audit = wbx(h, &["--json", "audit"], b"");
    let audit: serde_json::Value = serde_json::from_slice(&audit.stdout).unwrap();
    for what in [
        "grant_added",
        "grant_widened",
        "grant_narrowed",
        "grant_revoked",
    ] {
        assert_eq!(audit["counts"][what], 1, "{what}: {audit}");
    }
}

#[test]
fn a_run_line_under_a_grant_takes_its_tenant_and_refuses_a_component_s_grant() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let run_under = |subject: &str| {
        let add = [
            "--json",
            "grant",
            "add",
            "--tenant",
            "acme",
            "--subject",
            subject,
        ];
        let id = grant_id(&wbx(h, &add, b""));
        wbx(h, &["run", "--grant", &id, "echo hi"], b"")
    };
    let out = run_under("sha256:00");
    assert_eq!(out.status.code(), Some(120), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("is for sha256:00, not line"));
    let out = run_under("line");
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(0), "hi\n".to_string()),
        "{}",
        text(&out.stderr)
    );
}

/// An `os_process` child under a stored grant is refused by a narrowing
/// and by a revocation, naming the grant (the core's child tests show it
/// reads the book itself rather than the view it was handed).
#[tokio::test]
async fn an_os_process_child_is_refused_by_a_narrowing_and_a_revocation_of_its_grant() {
    use workbooks::commands::{ArgMode, Tier};
    let (srv, home, e) = served().await;
    let port = srv.addr.port();
    let (api, other) = (
        format!("http://api.test:{port}"),
        format!("http://other.test:{port}"),
    );
    let book = operator_book(&home);
    let id = book
        .add(record("t", &[api.clone(), other.clone()]))
        .unwrap()
        .id;
    let scope = e.granted_scope(&id, "t", "line").unwrap();
    book.narrow(
        &id,
        &none(),
        &hosts(std::slice::from_ref(&api)),
        Expiry::Keep,
        "test",
    )
    .unwrap();
    let bytes = std::fs::read(NET_FETCH).unwrap();
    e.registry()
        .register("fetch-child", bytes, ArgMode::Argv, Tier::OsProcess)
        .unwrap();
    let opts = || workbooks::shell::LineOptions {
        profile: "network".into(),
        tenant: "t".into(),
        scope: Some(scope.clone()),
        ..Default::default()
    };
    let fetch = |url: String| {
        let line = format!("fetch-child fetch {url}");
        let e = e.clone();
        // What the child said, or why no child was started.
        async move {
            match e.commands().run_line(&line, opts()).await {
                Ok(out) => String::from_utf8_lossy(&out.stdout).into_owned(),
                Err(refused) => refused.to_string(),
            }
        }
    };
    let said = fetch(format!("{api}/bytes/3")).await;
    assert!(
        said.contains(&format!(
            "grant {id}: net scope allows {other}; refused {api}/bytes/3"
        )),
        "{said}"
    );
    book.revoke(&id).unwrap();
    let said = fetch(format!("{other}/bytes/3")).await;
    assert!(said.contains(&format!("grant {id} was revoked")), "{said}");
    assert_eq!(srv.hits.load(Ordering::SeqCst), 0);
}

/// `wbx grant import` of a real Spin manifest and a real Wassette policy,
/// then `exec --grant` under the Wassette one: the variable it names is
/// passed from wbx's environment, another is not, and `--dir` beside a
/// grant that names the directories is refused.
#[test]
fn wbx_grant_import_reads_a_spin_manifest_and_a_wassette_policy_and_exec_runs_under_it() {
    let home = tempfile::tempdir().unwrap();
    let h = home.path();
    let peers = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers");
    // `wbx --json grant import FILE --tenant T`: its exit code, the grants
    // it added and what it said on stderr.
    let import = |file: &str, tenant: &str| {
        let file = peers.join(file);
        let args = [
            "--json",
            "grant",
            "import",
            file.to_str().unwrap(),
            "--tenant",
            tenant,
        ];
        let out = wbx(h, &args, b"");
        let added = serde_json::from_slice(&out.stdout).unwrap_or_default();
        (out.status.code(), added, text(&out.stderr))
    };
    let (code, grants, said): (_, serde_json::Value, _) =
        import("spin/http-middleware.spin.toml", "web");
    assert_eq!(code, Some(0), "{said}");
    assert_eq!(grants.as_array().map(Vec::len), Some(3), "{grants}");
    assert!(said.contains("note: triggers"), "{said}");
    // Refused by name, and nothing added.
    let (code, refused, _) = import("wassette/network-defaults.policy.yaml", "web");
    assert_eq!(code, Some(120), "{refused}");
    let why = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(why.contains("defaults"), "{refused}");
    let listed = wbx(h, &["--json", "grant", "list"], b"");
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed.as_array().map(Vec::len), Some(3), "{listed}");
    let (code, added, said) = import("wassette/get-weather-dotnet.policy.yaml", "w");
    assert_eq!(code, Some(0), "{said}");
    let id = added[0]["id"].as_str().unwrap().to_string();
    let env_probe = guest_artifacts::SANDBOX_ENV;
    let out = crate::common::wbx_env(
        h,
        &["exec", "--grant", &id, env_probe],
        b"",
        &[("OPENWEATHER_API_KEY", "k-123"), ("OTHER_SECRET", "nope")],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(said.contains("env OPENWEATHER_API_KEY=k-123"), "{said}");
    assert!(!said.contains("OTHER_SECRET"), "{said}");
    let out = wbx(
        h,
        &["exec", "--grant", &id, "--dir", "/tmp::/tmp", env_probe],
        b"",
    );
    assert_eq!(out.status.code(), Some(64), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!("--dir: grant {id} names the directories")),
        "{}",
        text(&out.stderr)
    );
    // Exported and imported back: the same scopes under a new id.
    let exported = wbx(h, &["grant", "export", &id], b"");
    let file = h.join("exported.json");
    std::fs::write(&file, &exported.stdout).unwrap();
    // (An absolute path joined to `peers` is itself.)
    let (code, back, said) = import(file.to_str().unwrap(), "w");
    assert_eq!(code, Some(0), "{said}");
    assert_ne!(back[0]["id"], added[0]["id"]);
    assert_eq!(back[0]["net"], added[0]["net"]);
    assert_eq!(back[0]["env"], added[0]["env"]);
}

/// A long download begun under a grant, through `net` and through
/// `wasi:http`: the server sends a byte every 200 ms for 20 s, the
/// operator narrows the grant from another handle while it streams, and
/// the guest's body is cut at its next chunk, not at its end.
#[tokio::test]
async fn a_long_download_is_cut_at_its_next_chunk_once_the_grant_narrows_under_it() {
    let (srv, home, e) = served().await;
    let port = srv.addr.port();
    let api = format!("http://api.test:{port}");
    let book = Arc::new(operator_book(&home));
    for (round, mode) in ["fetch", "http"].into_iter().enumerate() {
        let id = book
            .add(record("t", std::slice::from_ref(&api)))
            .unwrap()
            .id;
        let scope = e.granted_scope(&id, "t", "line").unwrap();
        let narrowing = {
            let (book, id, api, hits) = (book.clone(), id.clone(), api.clone(), srv.hits.clone());
            tokio::spawn(async move {
                while hits.load(Ordering::SeqCst) == round {
                    tokio::time::sleep(Duration::from_millis(2)).await;
                }
                tokio::time::sleep(Duration::from_millis(300)).await;
                book.narrow(&id, &none(), &hosts(&[api]), Expiry::Keep, "test")
                    .unwrap();
            })
        };
        let out = run_scoped(&e, NET_FETCH, Some(scope), &[mode, &format!("{api}/slow")]).await;
        narrowing.await.unwrap();
        let cut = match mode {
            "fetch" => out.contains(&format!("grant {id}: net scope")),
            _ => out.contains("error body: HTTP request denied"),
        };
        assert!(cut && !out.contains("200"), "{mode}: {out}");
    }
    let audit = e.cadence().audit().summary();
    assert_eq!(
        audit.counts.get("out_of_scope").copied(),
        Some(2),
        "{audit:?}"
    );
}
