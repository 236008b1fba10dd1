//! Deny brokers: a guest that imports `wasi:sockets` docks under a profile
//! without `net` only when the operator opts in, and then every socket it
//! tries to open is refused by a component, with nothing of the host's
//! network linked. A granted `net` is never replaced by the refusal.

use crate::common::{engine, own_builder, run_with, text, wbx};
use guest_artifacts::SANDBOX_NETWORK;
use workbooks::{DockError, Grant, SessionOptions, Stub};

guest_artifacts::foreach_stub!(assert_test_exists);

/// A loopback listener the probe is told to connect to, and its port.
fn listener() -> (std::net::TcpListener, String) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    (listener, port)
}

/// Whether the probe saw its lookup and its socket refused with
/// `access-denied`, and nothing else.
fn both_refused(stdout: &str) -> bool {
    let denied = "denied: ErrorCode { code: 1, name: \"access-denied\"";
    let lines: Vec<&str> = stdout.lines().collect();
    lines.len() == 2
        && lines[0].starts_with(&format!("lookup: {denied}"))
        && lines[1].starts_with(&format!("socket: {denied}"))
}

fn probe_opts(port: &str) -> SessionOptions {
    let mut opts = SessionOptions::new("probe", "default");
    opts.args = vec![port.to_string()];
    opts
}

#[tokio::test]
async fn without_the_stub_a_sockets_import_is_refused_naming_the_profiles_and_the_stub() {
    let (_listener, port) = listener();
    let e = run_with(
        SANDBOX_NETWORK,
        &Grant::profile("compute"),
        probe_opts(&port),
    )
    .await
    .unwrap_err()
    .dock();
    let text = e.to_string();
    assert!(matches!(e, DockError::NotGranted { .. }), "{text}");
    assert!(
        text.contains("under profile compute; granted by network, posix; or serve it with the deny broker that refuses every call: --stub wasi:sockets"),
        "{text}"
    );
}

#[tokio::test]
async fn with_the_stub_every_socket_and_lookup_is_refused_and_no_connection_is_made() {
    let (listener, port) = listener();
    for grant in [
        Grant::profile("compute").with_stub(Stub::Sockets),
        Grant::profile("minimal").with_stub(Stub::Sockets),
    ] {
        let docked = engine()
            .dock(&crate::common::artifact(SANDBOX_NETWORK), &grant)
            .unwrap();
        let receipt = docked.receipt();
        let sockets: Vec<_> = receipt
            .imports
            .iter()
            .filter(|i| i.name.starts_with("wasi:sockets/"))
            .collect();
        assert!(sockets.len() >= 4, "{receipt:#?}");
        for import in &sockets {
            assert_eq!(import.served_by, "deny broker workbooks:deny-sockets");
        }
        assert!(
            receipt
                .linked
                .iter()
                .all(|l| !l.starts_with("wasi:sockets/") && !l.starts_with("wasi:http/")),
            "the host linked network for a stub: {:?}",
            receipt.linked
        );
        assert!(!receipt.linked.is_empty());
        assert!(
            receipt
                .brokers
                .iter()
                .any(|b| b.name == "workbooks:deny-sockets")
        );
        let out = engine().run(&docked, probe_opts(&port)).await.unwrap();
        let stdout = text(&out.stdout);
        assert_eq!(out.exit_code, 0, "{}", text(&out.stderr));
        assert!(both_refused(&stdout), "{grant:?}: {stdout}");
        assert!(listener.accept().is_err(), "a stubbed socket connected");
    }
}

#[tokio::test]
async fn a_granted_net_is_served_by_the_host_not_by_the_refusal() {
    let (listener, port) = listener();
    let grant = Grant::profile("network").with_stub(Stub::Sockets);
    let docked = engine()
        .dock(&crate::common::artifact(SANDBOX_NETWORK), &grant)
        .unwrap();
    let receipt = docked.receipt();
    assert!(
        receipt
            .brokers
            .iter()
            .all(|b| b.name != "workbooks:deny-sockets")
    );
    assert!(
        receipt
            .imports
            .iter()
            .filter(|i| i.name.starts_with("wasi:sockets/"))
            .all(|i| i.served_by == "host"),
        "{receipt:#?}"
    );
    // The host's sockets exist, and its floor refuses loopback.
    let out = engine().run(&docked, probe_opts(&port)).await.unwrap();
    let stdout = text(&out.stdout);
    assert!(stdout.contains("connect: denied"), "{stdout}");
    assert!(!stdout.contains("socket: denied"), "{stdout}");
    assert!(listener.accept().is_err());
}

#[tokio::test]
async fn an_engine_wide_stub_applies_to_every_grant_it_docks() {
    let home = tempfile::tempdir().unwrap();
    let engine = own_builder(home.path())
        .stub(Stub::Sockets)
        .build()
        .unwrap();
    assert!(engine.stubs().contains(Stub::Sockets));
    let (_listener, port) = listener();
    let docked = engine
        .dock(
            &crate::common::artifact(SANDBOX_NETWORK),
            &Grant::profile("compute"),
        )
        .unwrap();
    assert!(docked.grant().stubs.contains(Stub::Sockets));
    let out = engine.run(&docked, probe_opts(&port)).await.unwrap();
    assert!(both_refused(&text(&out.stdout)), "{}", text(&out.stdout));
}

#[test]
fn the_cli_stub_flag_runs_the_guest_under_compute_and_refuses_unknown_families() {
    let home = tempfile::tempdir().unwrap();
    let (listener, port) = listener();
    let refused = wbx(home.path(), &["exec", SANDBOX_NETWORK, "--", &port], b"");
    assert_eq!(
        refused.status.code(),
        Some(120),
        "{}",
        text(&refused.stderr)
    );
    assert!(
        text(&refused.stderr).contains("granted by network, posix"),
        "{}",
        text(&refused.stderr)
    );
    let out = wbx(
        home.path(),
        &[
            "exec",
            "--stub",
            "wasi:sockets",
            SANDBOX_NETWORK,
            "--",
            &port,
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(both_refused(&text(&out.stdout)), "{}", text(&out.stdout));
    assert!(listener.accept().is_err());
    let unknown = wbx(
        home.path(),
        &["exec", "--stub", "wasi:keyboard", SANDBOX_NETWORK],
        b"",
    );
    assert_eq!(unknown.status.code(), Some(64), "{}", text(&unknown.stderr));
    assert!(
        text(&unknown.stderr).contains(
            "unknown stub `wasi:keyboard` (deny brokers exist for: wasi:sockets, wasi:http)"
        ),
        "{}",
        text(&unknown.stderr)
    );
}

/// With the http stub no request leaves, and the `wasi:http/types`
/// values are the host's as data only.
#[tokio::test]
async fn stub_http_out() {
    let (listener, port) = listener();
    let authority = format!("127.0.0.1:{port}");
    let refused = run_with(
        guest_artifacts::STUB_HTTP_OUT,
        &Grant::profile("compute"),
        probe_opts(&authority),
    )
    .await
    .unwrap_err()
    .dock();
    assert!(
        refused.to_string().contains("--stub wasi:http"),
        "{refused}"
    );
    // A sockets stub does not cover http.
    let grant = Grant::profile("compute").with_stub(Stub::Sockets);
    let other = run_with(
        guest_artifacts::STUB_HTTP_OUT,
        &grant,
        probe_opts(&authority),
    )
    .await
    .unwrap_err()
    .dock();
    assert!(matches!(other, DockError::NotGranted { .. }), "{other}");

    let grant = Grant::profile("compute").with_stub(Stub::Http);
    let docked = engine()
        .dock(
            &crate::common::artifact(guest_artifacts::STUB_HTTP_OUT),
            &grant,
        )
        .unwrap();
    let receipt = docked.receipt();
    let served = |prefix: &str| {
        receipt
            .imports
            .iter()
            .find(|i| i.name.starts_with(prefix))
            .map(|i| i.served_by.clone())
    };
    assert_eq!(
        served("wasi:http/outgoing-handler@").as_deref(),
        Some("deny broker workbooks:deny-http")
    );
    assert_eq!(
        served("wasi:http/types@").as_deref(),
        Some("host: values only, under --stub wasi:http")
    );
    assert!(
        !receipt
            .linked
            .iter()
            .any(|l| l.starts_with("wasi:http/outgoing-handler") || l.starts_with("wasi:sockets")),
        "{:?}",
        receipt.linked
    );
    let out = engine().run(&docked, probe_opts(&authority)).await.unwrap();
    assert_eq!(
        text(&out.stdout),
        "http: denied: ErrorCode::HttpRequestDenied\n"
    );
    assert!(listener.accept().is_err(), "a stubbed request connected");
}

/// A toolkit whose command's toolchain imports sockets, built with and
/// without `#+STUB: wasi:sockets`.
fn netprobe_root(stub: bool) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("netprobe");
    std::fs::create_dir_all(dir.join("skills")).unwrap();
    std::fs::create_dir_all(dir.join("dist")).unwrap();
    let manifest = format!(
        "#+TITLE: Net probe\n#+TOOLKIT: netprobe\n#+VERSION: 0.1.0\n#+STATUS: experimental\n#+TAGLINE: Tries the network.\n#+EXEC: command\n#+CLI_BIN: netprobe\n#+BUILD_SRC: path:dist\n{}\n* Net probe :toolkit:\n:PROPERTIES:\n:ID: netprobe\n:CLI_BIN: netprobe\n:STATUS: experimental\n:END:\nA probe.\n",
        if stub { "#+STUB: wasi:sockets\n" } else { "" }
    );
    std::fs::write(dir.join("manifest.org"), manifest).unwrap();
    std::fs::write(dir.join("skills/overview.org"), "* Overview\nA probe.\n").unwrap();
    std::fs::copy(SANDBOX_NETWORK, dir.join("dist/netprobe.wasm")).unwrap();
    root
}

#[test]
fn a_toolkits_stub_line_travels_with_its_built_command_into_the_shell() {
    let (listener, port) = listener();
    for stub in [false, true] {
        let home = tempfile::tempdir().unwrap();
        let root = netprobe_root(stub);
        let r = root.path().to_str().unwrap();
        let built = wbx(
            home.path(),
            &["toolkit", "--root", r, "build", "netprobe"],
            b"",
        );
        assert!(built.status.success(), "{}", text(&built.stderr));
        let shown = wbx(home.path(), &["command", "show", "netprobe"], b"");
        assert_eq!(
            text(&shown.stdout).contains("wasi:sockets"),
            stub,
            "{}",
            text(&shown.stdout)
        );
        let line = format!("netprobe {port}");
        let out = wbx(home.path(), &["run", &line], b"");
        if stub {
            assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
            assert!(both_refused(&text(&out.stdout)), "{}", text(&out.stdout));
        } else {
            assert!(!out.status.success());
            assert!(
                text(&out.stderr).contains("capability not granted: net"),
                "{}",
                text(&out.stderr)
            );
        }
        assert!(listener.accept().is_err(), "a connection was made");
    }
}

#[test]
fn a_tool_whose_sockets_a_stub_serves_is_described_as_runnable() {
    let home = tempfile::tempdir().unwrap();
    let e = crate::common::own_engine(home.path());
    e.registry()
        .register(
            "netprobe",
            std::fs::read(SANDBOX_NETWORK).unwrap(),
            workbooks::commands::ArgMode::Argv,
            workbooks::commands::Tier::Instance,
        )
        .unwrap();
    let describe = |grant: &Grant| {
        workbooks_toolkit::tools::Tools::new(e.clone())
            .list(grant, &workbooks_toolkit::Toolkits::new(None))
            .into_iter()
            .find(|t| t.name == "netprobe")
            .map(|t| t.description)
            .unwrap()
    };
    let plain = describe(&Grant::profile("compute"));
    assert!(
        plain.ends_with("refused under profile compute (missing `net`)."),
        "{plain}"
    );
    let stubbed = describe(&Grant::profile("compute").with_stub(Stub::Sockets));
    assert!(
        stubbed.ends_with("runs under profile compute (deny brokers: wasi:sockets)."),
        "{stubbed}"
    );
}

#[tokio::test]
async fn a_toolkit_built_tool_is_described_by_its_manifest_and_runs_with_its_stub() {
    let home = tempfile::tempdir().unwrap();
    let root = netprobe_root(true);
    let kits = workbooks_toolkit::Toolkits::new(Some(root.path().to_path_buf())).vouched(
        workbooks_toolkit::Vouch {
            roots: vec![root.path().to_path_buf()],
            signers: Vec::new(),
        },
    );
    let e = own_builder(home.path()).build().unwrap();
    let tk = kits.get("netprobe").unwrap();
    workbooks_toolkit::Builds::new(e.clone())
        .toolkit(&tk, false)
        .await
        .unwrap();
    let grant = Grant::profile("compute");
    let tool = workbooks_toolkit::tools::Tools::new(e.clone())
        .list(&grant, &kits)
        .into_iter()
        .find(|t| t.name == "netprobe")
        .unwrap();
    assert!(
        tool.description
            .starts_with("Toolkit `netprobe`: Tries the network. Registered command `netprobe`"),
        "{}",
        tool.description
    );
    assert!(
        tool.description
            .ends_with("runs under profile compute (deny brokers: wasi:sockets)."),
        "{}",
        tool.description
    );
    let (listener, port) = listener();
    let args = serde_json::json!({"args": [port]});
    let out = workbooks_toolkit::tools::Tools::new(e.clone())
        .call(
            &tool.kind,
            args.as_object().unwrap(),
            workbooks::LineOptions::default(),
        )
        .await;
    assert!(!out.is_error, "{}", out.text);
    assert!(both_refused(&out.text), "{}", out.text);
    assert!(listener.accept().is_err());
}

#[test]
fn what_command_register_is_given_is_kept_shown_and_holds_on_every_run() {
    let home = tempfile::tempdir().unwrap();
    let (listener, port) = listener();
    let out = wbx(
        home.path(),
        &[
            "--stub",
            "wasi:sockets",
            "command",
            "register",
            "net",
            SANDBOX_NETWORK,
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = wbx(home.path(), &["command", "show", "net"], b"");
    assert!(
        text(&shown.stdout).contains("\"wasi:sockets\""),
        "{}",
        text(&shown.stdout)
    );
    // No --stub on the run: the registration's is used.
    let out = wbx(home.path(), &["command", "run", "net", "--", &port], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(both_refused(&text(&out.stdout)), "{}", text(&out.stdout));
    assert!(listener.accept().is_err());
}

#[test]
fn a_caller_with_a_wider_profile_cannot_widen_a_registered_commands_caps() {
    let home = tempfile::tempdir().unwrap();
    let kv = guest_artifacts::DOCK_KV;
    let out = wbx(
        home.path(),
        &["command", "register", "kvp", kv, "--caps", "vfs"],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&wbx(home.path(), &["command", "show", "kvp"], b"").stdout);
    assert!(shown.contains("\"caps\": [\n    \"vfs\"\n  ]"), "{shown}");
    // posix grants kv; the registration allows vfs only.
    for profile in ["minimal", "posix"] {
        let out = wbx(
            home.path(),
            &["command", "run", "--profile", profile, "kvp"],
            b"",
        );
        assert_eq!(
            out.status.code(),
            Some(120),
            "{profile}: {}",
            text(&out.stderr)
        );
        assert!(text(&out.stderr).contains("kv"), "{}", text(&out.stderr));
    }
    // Through a line too.
    let out = wbx(home.path(), &["run", "--profile", "posix", "kvp"], b"");
    assert_eq!(out.status.code(), Some(120), "{}", text(&out.stderr));
    // Without the ceiling it runs: the refusal was the ceiling's.
    let out = wbx(
        home.path(),
        &["command", "register", "kvp", kv, "--replace"],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = wbx(
        home.path(),
        &["command", "run", "--profile", "minimal", "kvp"],
        b"",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "kv works");
}

#[test]
fn a_ceiling_wider_than_its_profile_is_refused_and_registers_nothing() {
    let home = tempfile::tempdir().unwrap();
    let out = wbx(
        home.path(),
        &[
            "command",
            "register",
            "k",
            guest_artifacts::DOCK_KV,
            "--profile",
            "compute",
            "--caps",
            "kv",
        ],
        b"",
    );
    assert_eq!(out.status.code(), Some(64), "{}", text(&out.stderr));
    let shown = wbx(home.path(), &["command", "show", "k"], b"");
    assert_eq!(shown.status.code(), Some(127), "{}", text(&shown.stdout));
}
