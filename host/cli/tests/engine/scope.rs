//! Network scopes, attacked: a guest whose grant names its destinations
//! (`SessionOptions::scope`, `wbx exec --allow-host`) tries every other
//! way out: another name, the literal address of the name it may reach, a
//! redirect, `wasi:http`, a one-shot socket, `wasi:sockets` (a lookup of a
//! name not in scope, a connect to an address no allowed name answered, the
//! right host on another port) and a command it starts, in process and in
//! an `os_process` child. Every loopback name below resolves to the same
//! server, so only the scope can tell them apart.

use crate::common::own_builder;
use crate::servers;
use guest_artifacts::{NET_FETCH, NET_ONESHOT, SANDBOX_NETWORK};
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use workbooks::commands::{ArgMode, Tier};
use workbooks::egress::{Destinations, Resolver};
use workbooks::grants::{Scope, Scoped};
use workbooks::shell::LineOptions;
use workbooks::{Cidr, Engine, SessionOptions};

/// Every name resolves to loopback, where the test servers listen.
pub(crate) struct Loopback;

impl Resolver for Loopback {
    fn resolve<'a>(
        &'a self,
        _host: &'a str,
    ) -> std::pin::Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send + 'a>> {
        Box::pin(async { Ok(vec![IpAddr::from([127, 0, 0, 1])]) })
    }
}

/// An engine homed in `home` whose every name resolves to loopback, which
/// its floor opens.
pub(crate) fn engine(home: &tempfile::TempDir) -> Engine {
    own_builder(home.path())
        .net_allow(Cidr::parse_list("127.0.0.0/8").unwrap())
        .resolver(Arc::new(Loopback))
        .child_binary(crate::CHILD)
        .build()
        .unwrap()
}

fn scope(patterns: &[&str]) -> Option<Scope> {
    let destinations = Destinations::parse(patterns).unwrap();
    Some(Scope::fixed(Scoped::destinations(destinations)))
}

pub(crate) async fn run_scoped(
    e: &Engine,
    probe: &str,
    scope: Option<Scope>,
    args: &[&str],
) -> String {
    let mut opts = SessionOptions::new("scoped", "t");
    opts.args = args.iter().map(|a| a.to_string()).collect();
    opts.scope = scope;
    crate::net::run_session(e, probe, "network", opts).await
}

/// The loopback HTTP server, a home and an engine whose every name
/// resolves to it.
pub(crate) async fn served() -> (servers::Http, tempfile::TempDir, Engine) {
    let srv = servers::http().await;
    let home = tempfile::tempdir().unwrap();
    let e = engine(&home);
    (srv, home, e)
}

#[tokio::test]
async fn a_scoped_guest_reaches_its_host_and_no_other_name_address_or_redirect() {
    let (srv, _home, e) = served().await;
    let port = srv.addr.port();
    let allowed = format!("http://api.test:{port}/bytes/3");
    let other = format!("http://evil.test:{port}/bytes/3");
    let literal = srv.url("/bytes/3");
    let redirect = format!("http://api.test:{port}/redirect?to={other}");
    let out = run_scoped(
        &e,
        NET_FETCH,
        scope(&[&format!("http://api.test:{port}")]),
        &["fetch", &allowed, &other, &literal, &redirect],
    )
    .await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    assert!(lines[0].ends_with(": 200 3 bytes xxx"), "{out}");
    for refused in &lines[1..] {
        assert!(
            refused.contains(&format!(
                "out of scope: the net scope allows http://api.test:{port}; refused"
            )),
            "{out}"
        );
    }
    assert!(lines[3].contains("refused http://evil.test"), "{out}");
    // The allowed fetch and the redirect's first hop reached the server;
    // nothing else did.
    assert_eq!(srv.hits.load(Ordering::SeqCst), 2);
    let audit = e.cadence().audit().summary();
    assert_eq!(
        audit.counts.get("out_of_scope").copied(),
        Some(3),
        "{audit:?}"
    );
}

#[tokio::test]
async fn wasi_http_and_one_shot_sockets_are_held_to_the_same_scope() {
    let (srv, _home, e) = served().await;
    let tcp = servers::tcp_echo().await;
    let (port, echo) = (srv.addr.port(), tcp.port().to_string());
    let s = scope(&[
        &format!("http://api.test:{port}"),
        &format!("tcp://db.test:{echo}"),
    ]);
    let out = run_scoped(
        &e,
        NET_FETCH,
        s.clone(),
        &[
            "http",
            &format!("http://api.test:{port}/bytes/5"),
            &format!("http://evil.test:{port}/bytes/5"),
        ],
    )
    .await;
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].ends_with(": 200 5 bytes"), "{out}");
    assert!(lines[1].contains("HttpRequestDenied"), "{out}");
    assert_eq!(srv.hits.load(Ordering::SeqCst), 1);
    let reply = run_scoped(
        &e,
        NET_ONESHOT,
        s.clone(),
        &["tcp", "db.test", &echo, "ping"],
    )
    .await;
    assert_eq!(reply, "reply 9 bytes: echo:ping\n");
    for (host, port) in [
        ("evil.test", echo.as_str()),
        ("127.0.0.1", &echo),
        ("db.test", "1"),
    ] {
        let out = run_scoped(&e, NET_ONESHOT, s.clone(), &["tcp", host, port, "ping"]).await;
        assert!(out.contains("out of scope"), "{host}:{port}: {out}");
    }
    // The one-shot's scheme is its transport: udp is not tcp.
    let out = run_scoped(&e, NET_ONESHOT, s, &["udp", "db.test", &echo, "ping"]).await;
    assert!(out.contains("out of scope"), "{out}");
}

#[tokio::test]
async fn a_socket_connects_only_to_an_address_an_allowed_name_answered() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let home = tempfile::tempdir().unwrap();
    let e = engine(&home);
    let run = |s: Option<Scope>| {
        let e = e.clone();
        async move { run_scoped(&e, SANDBOX_NETWORK, s, &[&port.to_string()]).await }
    };
    // `localhost` is in scope: its lookup is answered and its address
    // connects.
    let out = run(scope(&[&format!("tcp://localhost:{port}")])).await;
    assert!(out.contains("connect: connected"), "{out}");
    assert!(!out.contains("lookup: denied"), "{out}");
    // Another name: the lookup of `localhost` is refused, and 127.0.0.1
    // (which no allowed name answered) does not connect.
    let out = run(scope(&[&format!("tcp://db.test:{port}")])).await;
    assert!(out.contains("lookup: denied"), "{out}");
    assert!(out.contains("connect: denied"), "{out}");
    // The right name on another port.
    let out = run(scope(&[&format!(
        "tcp://localhost:{}",
        port.wrapping_add(1)
    )]))
    .await;
    assert!(out.contains("connect: denied"), "{out}");
    // An address pattern reaches the address, with no lookup needed.
    let out = run(scope(&[&format!("tcp://127.0.0.1:{port}")])).await;
    assert!(out.contains("connect: connected"), "{out}");
    // Unscoped, the floor alone judges (loopback is opened here).
    let out = run(None).await;
    assert!(out.contains("connect: connected"), "{out}");
}

#[tokio::test]
async fn a_command_a_scoped_line_starts_runs_under_its_scope_in_process_and_in_a_child() {
    let (srv, _home, e) = served().await;
    let port = srv.addr.port();
    let bytes = std::fs::read(NET_FETCH).unwrap();
    for (name, tier) in [
        ("fetch-here", Tier::Instance),
        ("fetch-child", Tier::OsProcess),
    ] {
        e.registry()
            .register(name, bytes.clone(), ArgMode::Argv, tier)
            .unwrap();
        let opts = LineOptions {
            profile: "network".into(),
            scope: scope(&[&format!("http://api.test:{port}")]),
            ..LineOptions::default()
        };
        let line = format!("{name} fetch http://evil.test:{port}/bytes/3");
        let out = e.commands().run_line(&line, opts).await.unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("out of scope: the net scope allows"),
            "{name}: {stdout} {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(srv.hits.load(Ordering::SeqCst), 0);
}

#[test]
fn wbx_exec_refuses_a_destination_it_cannot_read_and_holds_the_guest_to_the_rest() {
    let home = tempfile::tempdir().unwrap();
    let exec = |scope: &str, url: &str| {
        let args = [
            "exec",
            "--profile",
            "network",
            "--allow-host",
            scope,
            NET_FETCH,
            "fetch",
            url,
        ];
        crate::common::wbx(home.path(), &args, b"")
    };
    let out = exec("api.example.com", "https://api.example.com/");
    assert_eq!(out.status.code(), Some(64), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--allow-host") && err.contains("has no scheme"),
        "{err}"
    );
    let out = exec("https://api.example.com", "https://evil.example/");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(
            "out of scope: the net scope allows https://api.example.com; refused https://evil.example/"
        ),
        "{said} {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
