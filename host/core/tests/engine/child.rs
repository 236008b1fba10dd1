//! The tiers' one child protocol, from the core alone: an `os_process`
//! command and an `os_process` plugin run in the core's own child binary
//! (`workbooks-child`, no `wbx`), and the child refuses what a parent of
//! another build, or a forger, would send it.

use crate::CHILD;
use crate::tier::{engine_running, reading, register};
use bytes::Bytes;
use guest_artifacts::{CLI_CAT, INSTANCE_PLUGIN, NET_FETCH};
use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use workbooks::child::{CHILD_ARGV, CHILD_PROTOCOL, ChildJob, ChildRequest};
use workbooks::commands::frames::{self, Verdict};
use workbooks::commands::{ArgMode, Tier};
use workbooks::{Artifact, CommandError, Engine, LineError, LineOptions, Stdin};

/// An engine homed in `home` whose `os_process` command `kat` (a cat)
/// runs in the core's child.
fn kat_engine(home: &Path) -> Engine {
    let e = engine_running(home, Path::new(CHILD));
    register(&e, "kat", CLI_CAT, Tier::OsProcess);
    e
}

/// A request to run `CLI_CAT` under `compute`, as a parent would send it,
/// naming `sha256` as its bytes.
fn cat_request(home: &Path, sha256: String) -> ChildRequest {
    ChildRequest {
        protocol: CHILD_PROTOCOL,
        home: home.to_path_buf(),
        job: ChildJob::Exec {
            file: CLI_CAT.into(),
            sha256,
            args: Vec::new(),
            handed: None,
        },
        profile: "compute".into(),
        caps: None,
        tenant: "default".into(),
        id: "cat".into(),
        timeout_ms: Some(10_000),
        fuel: None,
        memory: None,
        env: Vec::new(),
        brokers: Vec::new(),
        stubs: Vec::new(),
        dirs: Vec::new(),
        home_shares: Vec::new(),
        scope: None,
        scope_live: false,
        scope_feed_fd: None,
    }
}

fn cat_sha256() -> String {
    Artifact::from_file(CLI_CAT).unwrap().sha256_hex()
}

/// Starts the child binary, writes `stdin` and reads its answer.
async fn answer(stdin: Vec<u8>) -> frames::Received {
    let mut child = Command::new(CHILD)
        .args(CHILD_ARGV)
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(&stdin).unwrap();
    let out = child.wait_with_output().unwrap();
    frames::read(&out.stdout[..]).await.unwrap()
}

/// Sends `request` with stdin the guest would echo, and checks that the
/// child refused it, saying `why`, and ran nothing.
async fn refused_saying(request: &ChildRequest, why: &str) {
    let mut stdin = request.to_frame().unwrap();
    stdin.extend_from_slice(b"never echoed");
    let said = refused_on(stdin).await;
    assert!(said.contains(why), "{said}");
}

/// Writes `stdin` to a child and checks that it refused and ran nothing:
/// what it said.
async fn refused_on(stdin: Vec<u8>) -> String {
    let received = answer(stdin).await;
    assert!(received.stdout.is_empty(), "the guest ran");
    match received.verdict {
        Some(Verdict::Failed(CommandError::Refused(said))) => said,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn an_os_process_command_runs_in_the_cores_own_child_on_the_rest_of_stdin() {
    let home = tempfile::tempdir().unwrap();
    let e = kat_engine(home.path());
    let opts = LineOptions {
        stdin: Stdin::Bytes(Bytes::from_static(b"through the child\n")),
        ..LineOptions::default()
    };
    let out = e.commands().run("kat", Vec::new(), opts).await.unwrap();
    assert_eq!(out.exit_code, 0, "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(&out.stdout[..], b"through the child\n");

    // The same home with no child to start: the tier is refused, so the
    // run above went through the child.
    let e = engine_running(home.path(), &home.path().join("no-such-child"));
    let err = e
        .commands()
        .run("kat", Vec::new(), LineOptions::default())
        .await
        .unwrap_err();
    let LineError::Command { error, .. } = err else {
        panic!("expected a command error, got {err}");
    };
    assert!(error.to_string().contains("cannot start"), "{error}");
}

#[tokio::test]
async fn an_os_process_plugin_is_called_in_the_cores_own_child() {
    let home = tempfile::tempdir().unwrap();
    let e = engine_running(home.path(), Path::new(CHILD));
    let entry = e
        .registry()
        .register(
            "plug",
            std::fs::read(INSTANCE_PLUGIN).unwrap(),
            ArgMode::Argv,
            Tier::OsProcess,
        )
        .unwrap();
    let opts = LineOptions {
        profile: "minimal".into(),
        ..LineOptions::default()
    };
    let answer = e
        .commands()
        .call_plugin_in_child(&entry, "echo:registered", "p", &opts)
        .await
        .unwrap();
    assert_eq!(answer, Ok("registered".to_string()));
}

#[tokio::test]
async fn a_request_of_another_protocol_is_refused_by_name_and_nothing_runs() {
    let home = tempfile::tempdir().unwrap();
    let mut request = cat_request(home.path(), cat_sha256());
    request.protocol = CHILD_PROTOCOL + 1;
    refused_saying(&request, "different builds").await;
}

#[tokio::test]
async fn a_request_whose_network_scope_cannot_be_read_is_refused_not_run_unscoped() {
    let home = tempfile::tempdir().unwrap();
    let mut request = cat_request(home.path(), cat_sha256());
    request.scope = Some(workbooks::grants::ScopeSnapshot {
        grant: None,
        net: Some(vec!["api.example.com".into()]),
        prefixes: Default::default(),
        names: Default::default(),
        expires_ms: None,
        llm_tokens: None,
        llm_spent: 0,
    });
    refused_saying(
        &request,
        "the network scope: \"api.example.com\" has no scheme",
    )
    .await;
}

#[tokio::test]
async fn a_request_naming_other_bytes_than_the_files_is_an_integrity_failure() {
    let home = tempfile::tempdir().unwrap();
    // The same request with the file's own sha256 runs: the refusal below
    // is the forged sha256's alone.
    let mut stdin = cat_request(home.path(), cat_sha256()).to_frame().unwrap();
    stdin.extend_from_slice(b"echoed");
    let received = answer(stdin).await;
    assert_eq!(received.verdict, Some(Verdict::Exit(0)));
    assert_eq!(&received.stdout[..], b"echoed");

    let mut stdin = cat_request(home.path(), "00".repeat(32))
        .to_frame()
        .unwrap();
    stdin.extend_from_slice(b"never echoed");
    let received = answer(stdin).await;
    assert!(received.stdout.is_empty(), "the guest ran");
    assert!(
        matches!(
            received.verdict,
            Some(Verdict::Failed(CommandError::Integrity(_)))
        ),
        "{:?}",
        received.verdict
    );
}

#[tokio::test]
async fn stdin_that_is_not_a_request_is_refused_and_nothing_runs() {
    let why = refused_on(b"hello.wasm --profile posix\n".to_vec()).await;
    assert!(why.starts_with("child request:"), "{why}");
}

#[test]
fn the_child_started_by_hand_says_what_it_is() {
    let out = Command::new(CHILD).arg("hello.wasm").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("not meant to be run by hand"), "{said}");
}

#[tokio::test]
async fn a_part_of_the_home_the_parent_shares_is_shared_in_its_child_and_no_other() {
    let home = tempfile::tempdir().unwrap();
    let e = kat_engine(home.path());
    let work = home.path().join("runs/acme/r1/workdir");
    std::fs::create_dir_all(&work).unwrap();
    let with = reading;
    let refused = |err: LineError| {
        let said = err.to_string();
        assert!(said.contains("engine home"), "{said}");
    };
    // Nothing of the home is shared until host code shares it.
    refused(
        e.commands()
            .run("kat", vec![], with(work.clone()))
            .await
            .unwrap_err(),
    );
    e.share_home("runs/*/*/workdir").unwrap();
    let out = e.commands().run("kat", vec![], with(work)).await.unwrap();
    assert_eq!(out.exit_code, 0, "{}", String::from_utf8_lossy(&out.stderr));
    // The database beside it, and the home itself, stay refused.
    for other in [home.path().join("db"), home.path().to_path_buf()] {
        refused(
            e.commands()
                .run("kat", vec![], with(other))
                .await
                .unwrap_err(),
        );
    }
    assert!(e.share_home("runs/../db").is_err());
}

#[tokio::test]
async fn a_request_naming_a_relay_socket_the_child_was_not_handed_is_refused() {
    let home = tempfile::tempdir().unwrap();
    // Stdout, and a descriptor nobody opened: neither is a relay socket
    // the child may take for its storage calls.
    for fd in [1, 99] {
        let mut request = cat_request(home.path(), cat_sha256());
        let ChildJob::Exec { handed, .. } = &mut request.job else {
            unreachable!("cat_request is an exec");
        };
        *handed = Some(workbooks::child::Handed {
            handoff: workbooks::dock::handoff::Handoff {
                fd: 98,
                compiled: "00".repeat(32),
                module: false,
                concurrent: false,
                composition: None,
            },
            relay_fd: fd,
        });
        refused_saying(&request, "no socket was handed").await;
    }
}

/// A child in its parent's home (`scope_live`, as an `os_process` child
/// under a stored grant is) judges each call by the grant the home's book
/// holds, not the view it was handed: here the view still allows
/// `api.test`, which a narrowing has since dropped, and the child refuses
/// it naming the grant. A child that holds its view (`scope_live` false: a
/// container's private home, a replay's recorded view) goes on by it.
#[tokio::test]
async fn a_child_in_its_parents_home_judges_by_the_grant_in_the_book_not_the_view_it_was_handed() {
    use workbooks::grants::{Expiry, GRANTS_FILE, GrantBook, GrantRecord, Lists, ScopeSnapshot};
    let home = tempfile::tempdir().unwrap();
    let book = GrantBook::new(Some(home.path().join(GRANTS_FILE)));
    let (api, other) = (
        "http://api.test".to_string(),
        "http://other.test".to_string(),
    );
    let mut record = GrantRecord::new("default", "test");
    record.net = Some(vec![api.clone(), other.clone()]);
    let id = book.add(record).unwrap().id;
    let handed = ScopeSnapshot {
        grant: Some(id.clone()),
        net: Some(vec![api.clone(), other.clone()]),
        prefixes: Default::default(),
        names: Default::default(),
        expires_ms: None,
        llm_tokens: None,
        llm_spent: 0,
    };
    let drop = Lists {
        net: vec![api.clone()],
        ..Lists::default()
    };
    book.narrow(&id, &Lists::default(), &drop, Expiry::Keep, "test")
        .unwrap();
    let sha256 = Artifact::from_file(NET_FETCH).unwrap().sha256_hex();
    for live in [true, false] {
        let mut request = cat_request(home.path(), sha256.clone());
        request.job = ChildJob::Exec {
            file: NET_FETCH.into(),
            sha256: sha256.clone(),
            args: vec!["fetch".into(), format!("{api}/")],
            handed: None,
        };
        request.profile = "network".into();
        request.scope = Some(handed.clone());
        request.scope_live = live;
        let received = answer(request.to_frame().unwrap()).await;
        let out = String::from_utf8_lossy(&received.stdout).into_owned();
        let refused = format!("grant {id}: net scope allows {other}; refused {api}/");
        assert_eq!(out.contains(&refused), live, "scope_live {live}: {out}");
        assert!(out.contains("api.test"), "scope_live {live}: {out}");
    }
}
