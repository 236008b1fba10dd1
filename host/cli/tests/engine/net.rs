//! Network brokers: the SSRF floor on every path, resolve-then-pin,
//! redirects, caps and deadlines, one-shot sockets, revocation and rate
//! limits.

use crate::common::{own_builder, wbx};
use crate::servers;
use guest_artifacts::*;
use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use workbooks::egress::{HttpError, HttpLimits, HttpRequest, NetDenial, Resolver};
use workbooks::{Artifact, Cidr, Engine, EngineBuilder, Grant, SessionOptions};

guest_artifacts::foreach_net!(assert_test_exists);

fn builder(home: &tempfile::TempDir, loopback_allowed: bool) -> EngineBuilder {
    let mut b = own_builder(home.path());
    if loopback_allowed {
        b = b.net_allow(Cidr::parse_list("127.0.0.0/8").unwrap());
    }
    b
}

async fn run_on(e: &Engine, probe: &str, profile: &str, tenant: &str, args: &[&str]) -> String {
    let mut opts = SessionOptions::new("net", tenant);
    opts.args = args.iter().map(|a| a.to_string()).collect();
    run_session(e, probe, profile, opts).await
}

/// `probe` docked under `profile` and run with `opts` (within a minute):
/// its stdout, once it exited 0.
pub async fn run_session(
    e: &Engine,
    probe: &str,
    profile: &str,
    mut opts: SessionOptions,
) -> String {
    let docked = e
        .dock(
            &Artifact::from_file(probe).unwrap(),
            &Grant::profile(profile),
        )
        .unwrap();
    opts.timeout = Some(Duration::from_secs(60));
    let out = e.run(&docked, opts).await.unwrap();
    assert_eq!(out.exit_code, 0, "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// URLs that must never reach anything internal, with whether the floor
/// (rather than a failed lookup) must be what refuses them.
pub const SSRF: &[(&str, bool)] = &[
    ("http://127.0.0.1/", true),
    ("http://127.1/", true),
    ("http://127.0.1/", true),
    ("http://2130706433/", true),
    ("http://0x7f000001/", true),
    ("http://0x7f.0x0.0x0.0x1/", true),
    ("http://0177.0.0.1/", true),
    ("http://0177.1/", true),
    ("http://017700000001/", true),
    ("http://0x7f.1/", true),
    ("http://127.000.000.001/", true),
    ("http://localhost/", true),
    ("http://localhost./", true),
    ("http://LOCALHOST:8080/", true),
    ("http://[::1]/", true),
    ("http://[0:0:0:0:0:0:0:1]/", true),
    ("http://[0000::1]/", true),
    ("http://[::ffff:127.0.0.1]/", true),
    ("http://[::ffff:7f00:1]/", true),
    ("http://[0000:0000:0000:0000:0000:ffff:7f00:0001]/", true),
    ("http://[::127.0.0.1]/", true),
    ("http://[::ffff:0:127.0.0.1]/", true),
    ("http://[64:ff9b::7f00:1]/", true),
    ("http://[2002:7f00:1::]/", true),
    ("http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", true),
    ("http://0.0.0.0/", true),
    ("http://0/", true),
    ("http://[::]/", true),
    ("http://10.0.0.1/", true),
    ("http://10.255.255.255/", true),
    ("http://172.16.0.1/", true),
    ("http://172.31.0.1/", true),
    ("http://192.168.0.1/", true),
    ("http://169.254.169.254/latest/meta-data/", true),
    ("http://169.254.170.2/v2/credentials", true),
    ("http://2852039166/", true),
    ("http://0xa9fea9fe/", true),
    ("http://0251.0376.0251.0376/", true),
    ("http://[::ffff:169.254.169.254]/", true),
    ("http://[::ffff:a9fe:a9fe]/", true),
    ("http://[fd00::1]/", true),
    ("http://[fc00::1]/", true),
    ("http://[fe80::1]/", true),
    ("http://[ff02::1]/", true),
    ("http://100.64.0.1/", true),
    ("http://192.0.0.1/", true),
    ("http://198.18.0.1/", true),
    ("http://224.0.0.1/", true),
    ("http://255.255.255.255/", true),
    ("http://240.0.0.1/", true),
    ("http://user:pass@127.0.0.1/", true),
    ("http://good.example@127.0.0.1/", true),
    ("http://127.0.0.1#@good.example/", true),
    ("http://%31%32%37.0.0.1/", true),
    ("http://①②⑦.0.0.1/", true),
    ("http://127。0。0。1/", true),
    ("https://127.0.0.1/", true),
    ("HTTP://127.0.0.1/", true),
    ("http://127.0.0.1:22/", true),
    ("ftp://127.0.0.1/", true),
    ("file:///etc/passwd", true),
    ("gopher://127.0.0.1:6379/_INFO", true),
    ("dict://127.0.0.1:11211/", true),
    ("ldap://127.0.0.1/", true),
    ("javascript:alert(1)", true),
    ("data:text/plain,hi", true),
    ("http://", true),
    ("http://[::1", true),
    ("http://127.0.0.1:99999/", true),
    ("not a url", true),
    ("http://no-such-host.invalid/", false),
    ("http://127.0.0.1.nip.io/", false),
];

#[test]
fn at_least_sixty_ssrf_encodings_are_denied_by_wbx_net_check() {
    assert!(SSRF.len() >= 60);
    let home = tempfile::tempdir().unwrap();
    for (url, _) in SSRF {
        let out = wbx(home.path(), &["net", "check", "--json", url], b"");
        assert_eq!(out.status.code(), Some(1), "{url} was allowed");
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["allowed"], false, "{url}");
    }
}

#[tokio::test]
async fn net_fetch() {
    // Every SSRF encoding, fetched by a real guest through the net
    // interface: each one refused, IP forms by the floor itself.
    let home = tempfile::tempdir().unwrap();
    let e = builder(&home, false).build().unwrap();
    let urls: Vec<&str> = SSRF.iter().map(|(u, _)| *u).collect();
    let mut args = vec!["fetch"];
    args.extend(&urls);
    let out = run_on(&e, NET_FETCH, "network", "t", &args).await;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), SSRF.len(), "{out}");
    for ((url, by_floor), line) in SSRF.iter().zip(&lines) {
        assert!(
            line.contains("error NetError::"),
            "{url} got through: {line}"
        );
        if *by_floor {
            assert!(
                line.contains("NetError::Denied") || line.contains("NetError::InvalidDestination"),
                "{url}: {line}"
            );
        }
    }
    let audit = e.cadence().audit().summary();
    assert!(
        audit.counts.get("blocked_address").copied().unwrap_or(0) >= 40,
        "{audit:?}"
    );

    // The same guest reaches an allowed local service, with the caps.
    let srv = servers::http().await;
    let e = builder(&home, true).net_max_body(1000).build().unwrap();
    let out = run_on(
        &e,
        NET_FETCH,
        "network",
        "t",
        &["fetch", &srv.url("/bytes/10"), &srv.url("/bytes/1001")],
    )
    .await;
    assert!(out.contains("/bytes/10: 200 10 bytes xxxxxxxxxx"), "{out}");
    assert!(
        out.contains("/bytes/1001: error NetError::TooLarge(1000)"),
        "{out}"
    );
}

#[tokio::test]
async fn every_redirect_hop_is_checked_and_credentials_stay_with_their_origin() {
    let srv = servers::http().await;
    let home = tempfile::tempdir().unwrap();
    let e = builder(&home, true).build().unwrap();
    let to_metadata = srv.url("/redirect?to=http://169.254.169.254/latest/meta-data/");
    // The allow-list opens loopback only: a hop to a private address
    // is judged afresh and refused.
    let to_private = srv.url("/redirect?to=http://10.1.2.3:8080/");
    let out = run_on(
        &e,
        NET_FETCH,
        "network",
        "t",
        &["fetch", &to_metadata, &to_private],
    )
    .await;
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].contains("cloud metadata"), "{out}");
    assert!(lines[1].contains("private (10.0.0.0/8)"), "{out}");
    // Same origin: the credential follows the redirect.
    let same = srv.url(&format!("/redirect?to={}", srv.url("/headers")));
    let out = run_on(&e, NET_FETCH, "network", "t", &["auth", &same]).await;
    assert!(out.contains("authorization: Bearer"), "{out}");
    // Another origin (localhost instead of 127.0.0.1): it is dropped.
    let cross = srv.url(&format!(
        "/redirect?to=http://localhost:{}/headers",
        srv.addr.port()
    ));
    let out = run_on(&e, NET_FETCH, "network", "t", &["auth", &cross]).await;
    assert!(!out.contains("authorization"), "{out}");
    assert!(out.contains("x-plain: kept"), "{out}");
}

#[tokio::test]
async fn a_slow_body_is_cut_at_the_deadline_and_fetch_many_runs_sixteen_at_a_time() {
    let srv = servers::http().await;
    let home = tempfile::tempdir().unwrap();
    let e = builder(&home, true)
        .net_timeout(Duration::from_millis(800))
        .build()
        .unwrap();
    let start = std::time::Instant::now();
    let out = run_on(&e, NET_FETCH, "network", "t", &["fetch", &srv.url("/slow")]).await;
    assert!(out.contains("error NetError::Timeout(800)"), "{out}");
    assert!(start.elapsed() < Duration::from_secs(10));
    // Through wasi:http the head arrives in time; the body is cut at the
    // same deadline (its 100 bytes would take 20 s).
    let start = std::time::Instant::now();
    let out = run_on(&e, NET_FETCH, "network", "t", &["http", &srv.url("/slow")]).await;
    assert!(out.contains(": error body:"), "{out}");
    assert!(start.elapsed() < Duration::from_secs(10));

    let e = builder(&home, true).build().unwrap();
    let url = srv.url("/concurrent");
    let mut args = vec!["many"];
    args.extend(std::iter::repeat_n(url.as_str(), 64));
    let out = run_on(&e, NET_FETCH, "network", "t", &args).await;
    assert_eq!(
        out.lines()
            .filter(|l| l.contains(": 200 2 bytes ok"))
            .count(),
        64,
        "{out}"
    );
    let peak = srv.max_in_flight.load(Ordering::SeqCst);
    assert!(peak > 1 && peak <= 16, "peak concurrency {peak}");
    args.push(url.as_str());
    let out = run_on(&e, NET_FETCH, "network", "t", &args).await;
    assert_eq!(out.trim(), "many: error NetError::TooMany(64)");
}

#[tokio::test]
async fn fetch_many_holds_at_most_thirty_two_mebibytes_in_all() {
    let srv = servers::http().await;
    let home = tempfile::tempdir().unwrap();
    let e = builder(&home, true).build().unwrap();
    // 64 bodies of 4 MiB: 256 MiB asked for, each one under the 8 MiB cap.
    let url = srv.url("/bytes/4194304");
    let mut args = vec!["many"];
    args.extend(std::iter::repeat_n(url.as_str(), 64));
    let out = run_on(&e, NET_FETCH, "network", "t", &args).await;
    let whole = out
        .lines()
        .filter(|l| l.contains(": 200 4194304 bytes"))
        .count();
    let cut = out
        .lines()
        .filter(|l| l.ends_with("error NetError::TooLarge(33554432)"))
        .count();
    assert!(whole * 4 <= 32, "{whole} whole bodies passed the budget");
    assert!(cut >= 64 - 8, "{out}");
    assert_eq!(whole + cut, 64, "{out}");
}

#[tokio::test]
async fn wasi_http_requests_go_through_the_same_floor() {
    let srv = servers::http().await;
    let home = tempfile::tempdir().unwrap();
    let denied = builder(&home, false).build().unwrap();
    let out = run_on(
        &denied,
        NET_FETCH,
        "network",
        "t",
        &["http", &srv.url("/bytes/5")],
    )
    .await;
    assert!(out.contains("DestinationIpProhibited"), "{out}");
    assert_eq!(
        srv.hits.load(Ordering::SeqCst),
        0,
        "the request reached loopback"
    );
    let allowed = builder(&home, true).net_max_body(100).build().unwrap();
    let out = run_on(
        &allowed,
        NET_FETCH,
        "network",
        "t",
        &["http", &srv.url("/bytes/5"), &srv.url("/bytes/101")],
    )
    .await;
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].ends_with(": 200 5 bytes"), "{out}");
    assert!(lines[1].contains("error"), "{out}");
}

/// Answers a public address first and loopback afterwards, counting calls.
struct Rebinder(AtomicUsize);

impl Resolver for Rebinder {
    fn resolve<'a>(
        &'a self,
        _host: &'a str,
    ) -> std::pin::Pin<Box<dyn Future<Output = std::io::Result<Vec<IpAddr>>> + Send + 'a>> {
        let n = self.0.fetch_add(1, Ordering::SeqCst);
        let ip: IpAddr = if n == 0 { "198.51.99.7" } else { "127.0.0.1" }
            .parse()
            .unwrap();
        Box::pin(async move { Ok(vec![ip]) })
    }
}

#[tokio::test]
async fn dns_rebinding_never_yields_a_loopback_connection() {
    let srv = servers::http().await;
    let home = tempfile::tempdir().unwrap();
    let resolver = Arc::new(Rebinder(AtomicUsize::new(0)));
    let e = builder(&home, false)
        .resolver(resolver.clone())
        .build()
        .unwrap();
    let limits = HttpLimits {
        max_body: 1000,
        deadline: Duration::from_secs(1),
        max_redirects: 3,
        shared: None,
    };
    let url = format!("http://rebind.test:{}/bytes/3", srv.addr.port());
    let result = e.http().fetch(HttpRequest::get(url), &limits).await;
    assert!(
        matches!(
            result,
            Err(HttpError::Timeout(_) | HttpError::Connect { .. })
        ),
        "{result:?}"
    );
    assert_eq!(
        resolver.0.load(Ordering::SeqCst),
        1,
        "the name was resolved twice"
    );
    assert_eq!(
        srv.hits.load(Ordering::SeqCst),
        0,
        "a connection reached loopback"
    );
    // The second answer (loopback) is what a rebinder would serve next.
    let second = e
        .http()
        .guard()
        .check_url("http://rebind.test/")
        .await
        .unwrap_err();
    assert!(matches!(second, NetDenial::Blocked { .. }), "{second}");
}

#[tokio::test]
async fn net_browse() {
    let srv = servers::http().await;
    let home = tempfile::tempdir().unwrap();
    let e = builder(&home, true).build().unwrap();
    let out = run_on(&e, NET_BROWSE, "network", "t", &[&srv.url("/html")]).await;
    assert_eq!(
        out,
        "title: Test Page\nHello\nfrom the loopback server & friends\n"
    );
    let d = e
        .dock(
            &Artifact::from_file(NET_BROWSE).unwrap(),
            &Grant::profile("network"),
        )
        .unwrap();
    assert_eq!(
        d.receipt().brokers[0].serves,
        "workbooks:engine/browse@0.1.0"
    );
    let blocked = builder(&home, false).build().unwrap();
    let out = run_on(&blocked, NET_BROWSE, "network", "t", &[&srv.url("/html")]).await;
    assert!(out.contains("error NetError::Denied"), "{out}");
    let err = e
        .dock(
            &Artifact::from_file(NET_BROWSE).unwrap(),
            &Grant::profile("minimal"),
        )
        .unwrap_err();
    assert!(
        err.to_string().contains("capability not granted: browse"),
        "{err}"
    );
}

#[test]
fn an_extra_tls_root_that_is_not_a_certificate_stops_the_engine_being_built() {
    // The TLS configuration is built on the first connection; a bad extra
    // root must still be refused up front, not at that connection.
    let home = tempfile::tempdir().unwrap();
    let err = builder(&home, true)
        .tls_roots(vec![b"not a certificate".to_vec()])
        .build()
        .expect_err("an engine with a bad TLS root was built");
    assert!(err.to_string().contains("bad extra TLS root"), "{err}");
}

/// The operator's roots file is read when a connection first needs TLS:
/// an engine given `/dev/zero` is built and runs, and its first TLS
/// connection fails with an error that tells the guest neither the file
/// nor why (the operator's log does); a file written after the engine was
/// built, holding the peer's certificate, is trusted.
#[tokio::test]
async fn a_tls_roots_file_is_read_only_when_a_connection_first_needs_tls() {
    let (tls, pem) = servers::tls_echo_pem().await;
    let home = tempfile::tempdir().unwrap();
    let port = tls.port().to_string();
    let args = ["tls", "localhost", port.as_str(), "ping"];
    let endless = builder(&home, true)
        .tls_roots_file("/dev/zero")
        .build()
        .expect("the engine read its roots file when built");
    assert_eq!(
        run_on(&endless, CLI_HELLO, "compute", "t", &[]).await,
        "hello\n"
    );
    let refused = run_on(&endless, NET_ONESHOT, "minimal", "t", &args).await;
    assert!(
        refused.contains("the host's extra TLS roots are unusable"),
        "{refused}"
    );
    assert!(!refused.contains("/dev/zero"), "{refused}");
    let path = home.path().join("roots.pem");
    let later = builder(&home, true).tls_roots_file(&path).build().unwrap();
    std::fs::write(&path, pem).unwrap();
    let reply = run_on(&later, NET_ONESHOT, "minimal", "t", &args).await;
    assert_eq!(reply, "reply 13 bytes: tls-echo:ping\n");
}

#[tokio::test]
async fn net_oneshot() {
    let tcp = servers::tcp_echo().await;
    let udp = servers::udp_echo().await;
    let (tls, cert) = servers::tls_echo().await;
    let home = tempfile::tempdir().unwrap();
    let e = builder(&home, true).tls_roots(vec![cert]).build().unwrap();
    let port = |a: std::net::SocketAddr| a.port().to_string();
    let run = |args: Vec<String>| {
        let e = e.clone();
        async move {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run_on(&e, NET_ONESHOT, "minimal", "t", &args).await
        }
    };
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    assert_eq!(
        run(s(&["tcp", "127.0.0.1", &port(tcp), "ping"])).await,
        "reply 9 bytes: echo:ping\n"
    );
    assert_eq!(
        run(s(&["udp", "127.0.0.1", &port(udp), "ping"])).await,
        "reply 9 bytes: echo:ping\n"
    );
    assert_eq!(
        run(s(&["tls", "localhost", &port(tls), "ping"])).await,
        "reply 13 bytes: tls-echo:ping\n"
    );
    // The certificate names localhost, not 127.0.0.1: the peer is refused.
    assert!(
        run(s(&["tls", "127.0.0.1", &port(tls), "ping"]))
            .await
            .contains("NetError::Tls")
    );
    assert!(
        run(s(&["tcp", "127.0.0.1", &port(tcp), "big"]))
            .await
            .contains("TooLarge(1048576)")
    );
    let blocked = builder(&home, false).build().unwrap();
    let docked = blocked
        .dock(
            &Artifact::from_file(NET_ONESHOT).unwrap(),
            &Grant::profile("minimal"),
        )
        .unwrap();
    let mut opts = SessionOptions::new("net", "t");
    opts.args = s(&["tcp", "127.0.0.1", &port(tcp), "ping"]);
    let out = blocked.run(&docked, opts).await.unwrap();
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("NetError::Denied(\"127.0.0.1 is loopback")
    );
}

#[tokio::test]
async fn revocation_stops_a_tenant_mid_session_and_rate_limits_cut_it_off() {
    let srv = servers::http().await;
    let home = tempfile::tempdir().unwrap();
    let e = builder(&home, true)
        .rate_limit(4, Duration::from_secs(3600))
        .build()
        .unwrap();
    let url = srv.url("/bytes/1");
    let out = run_on(&e, NET_FETCH, "network", "acme", &["fetch", &url, &url]).await;
    assert_eq!(out.matches(": 200 1 bytes").count(), 2, "{out}");
    let out = run_on(
        &e,
        NET_FETCH,
        "network",
        "acme",
        &["fetch", &url, &url, &url],
    )
    .await;
    assert_eq!(out.matches(": 200 1 bytes").count(), 2, "{out}");
    assert!(out.contains("NetError::RateLimited"), "{out}");
    // Another tenant is not affected.
    let out = run_on(&e, NET_FETCH, "network", "other", &["fetch", &url]).await;
    assert!(out.contains(": 200"), "{out}");

    // Revoked from another process's view of the home, while docked.
    let e = builder(&home, true).build().unwrap();
    let docked = e
        .dock(
            &Artifact::from_file(NET_FETCH).unwrap(),
            &Grant::profile("network"),
        )
        .unwrap();
    workbooks::cadence::Revocations::new(Some(home.path().join("revoked.json")))
        .revoke("acme")
        .unwrap();
    let mut opts = SessionOptions::new("net", "acme");
    opts.args = vec!["fetch".into(), url.clone()];
    let out = e.run(&docked, opts).await.unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("NetError::Revoked"));
    assert!(e.cadence().audit().summary().counts.contains_key("revoked"));
}

/// A guest granted `llm` asks the operator's model through the llm broker
/// (the key added by the host); below `network`, or narrowed without
/// `llm`, the import is refused by name.
#[tokio::test]
async fn net_llm() {
    use crate::agent::{KEY, engine_for, quick_bounds};
    use crate::model_server::{self, text};
    use workbooks::{Cap, CapSet, DockError};
    let server = model_server::start(vec![text("forty-two")]).await;
    let home = tempfile::tempdir().unwrap();
    let engine = engine_for(home.path(), &server, quick_bounds());
    let probe = Artifact::from_file(NET_LLM).unwrap();
    let docked = engine.dock(&probe, &Grant::profile("network")).unwrap();
    let mut opts = SessionOptions::new("asker", "acme");
    opts.args = vec!["six times seven?".into(), "picked-model".into()];
    let out = engine.run(&docked, opts).await.unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "answer: forty-two\n");
    let seen = server.requests();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].body["model"], "picked-model");
    assert_eq!(
        seen[0].header("authorization"),
        Some(&*format!("Bearer {KEY}"))
    );
    assert_eq!(seen[0].messages()[0]["content"], "six times seven?");
    assert!(
        docked
            .receipt()
            .brokers
            .iter()
            .any(|b| b.name == "workbooks:llm-broker")
    );
    // Below network, or narrowed without llm, the import is refused by name.
    let narrowed = Grant::narrowed("network", CapSet::of(&[Cap::Net])).unwrap();
    for grant in [
        Grant::profile("minimal"),
        Grant::profile("compute"),
        narrowed,
    ] {
        match engine.dock(&probe, &grant) {
            Err(DockError::NotGranted {
                cap: Cap::Llm,
                interface,
                ..
            }) => {
                assert!(
                    interface.starts_with("workbooks:engine/llm@"),
                    "{interface}"
                )
            }
            other => panic!("{grant:?}: {other:?}"),
        }
    }
    assert_eq!(server.requests().len(), 1);
}

/// The attack through a listener: a guest accepts every connection its
/// peers make (300 here) and keeps each one. Accepted sockets count
/// toward the store's 256: it holds 255 beside its listener, and each
/// connection past them is reset by the host before it is handed over. A
/// guest that drops each connection once done with it takes all 300.
#[test]
fn net_accepts_hold() {
    crate::knock::assert_accepts_hold_at_the_socket_cap(NET_ACCEPTS_HOLD);
}

/// The attack of issue 54 on descriptors: a guest with network holds a
/// descriptor per `wasi:sockets` socket it makes, and the table let it make
/// 10 000. Under a service's usual soft limit (here 256, under a larger
/// hard limit) that ran the process out of descriptors. Now a store holds
/// at most 256 sockets, TCP or UDP (the 257th fails with
/// `new-socket-limit`), and
/// `wbx` raises its soft limit to the hard one at start, so the guest's
/// 256 fit beside the engine's own descriptors.
#[test]
fn net_sockets_hold() {
    let hard = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .maximum
        .unwrap_or(u64::MAX);
    assert!(
        hard > 512,
        "this machine's hard descriptor limit ({hard}) is too low to hold the attack's sockets"
    );
    let home = tempfile::tempdir().unwrap();
    for kind in ["tcp", "udp"] {
        let out = std::process::Command::new("sh")
            .args(["-c", "ulimit -S -n 256 && exec \"$@\"", "sh"])
            .arg(env!("CARGO_BIN_EXE_wbx"))
            .args(["--home"])
            .arg(home.path())
            .args([
                "exec",
                "--profile",
                "network",
                NET_SOCKETS_HOLD,
                "--",
                "1000",
                kind,
            ])
            .env_remove("WB_NET_ALLOW")
            .env_remove("WB_LOG")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.starts_with("created 256\nerror ") && stdout.contains("new-socket-limit"),
            "{kind}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A 0.2 guest binds the wildcard address at a port of the system's
/// choosing and listens, as a server that means to be reached from
/// everywhere would. Where loopback is closed it may not listen at all;
/// with 127.0.0.1 opened the host puts the listener there, so another
/// address of this host (where another host would connect) finds no port
/// open, and a loopback peer is served.
#[test]
fn net_listen() {
    use crate::knock::{assert_seen_only_on_loopback, listen_in_wbx};
    let shut = listen_in_wbx(NET_LISTEN, &[], "");
    assert!(
        shut.first.starts_with("listen ") && shut.first.contains("access-denied"),
        "{}{}",
        shut.first,
        shut.rest
    );
    let seen = listen_in_wbx(NET_LISTEN, &[], "127.0.0.1/32");
    let all = format!("{}{}", seen.first, seen.rest);
    assert_eq!(seen.knocked.answer.as_deref(), Some("echo:hello"), "{all}");
    assert_seen_only_on_loopback(&seen.knocked);
    assert!(seen.first.starts_with("bound 127.0.0.1:"), "{all}");
    assert!(seen.rest.contains("accepted hello"), "{all}");
}

/// The attack of issue 54 on descriptors through `wasi:http`: a request a
/// guest sends holds a connection (a descriptor) from its send until its
/// response is dropped, and `outgoing-handler.handle` returns before the
/// request is answered, so a guest sending without waiting held one per
/// request, as many as its table took (the server took all 1 000 before).
/// See [`crate::requests`].
#[test]
fn net_requests_hold() {
    crate::requests::assert_requests_hold_at_the_store_cap(NET_REQUESTS_HOLD);
}

/// A loopback server that answers every read on a connection with the
/// same bytes, counting the reads it answered.
async fn line_echo() -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let answered = Arc::new(AtomicUsize::new(0));
    let counted = answered.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = listener.accept().await {
            let counted = counted.clone();
            tokio::spawn(async move {
                let mut buf = [0u8; 256];
                while let Ok(n @ 1..) = s.read(&mut buf).await {
                    if s.write_all(&buf[..n]).await.is_err() {
                        return;
                    }
                    counted.fetch_add(1, Ordering::SeqCst);
                }
            });
        }
    });
    (addr, answered)
}

/// An open `wasi:sockets` connection under a stored grant, attacked: the
/// guest keeps talking on a connection it opened while the grant allowed
/// it; the operator narrows the grant from another handle on the book;
/// the guest's next write or read on the same connection fails, naming
/// the refusal, long before its hundred rounds.
#[tokio::test]
async fn net_talk() {
    use workbooks::grants::{Expiry, GRANTS_FILE, GrantBook, GrantRecord, Lists};
    let home = tempfile::tempdir().unwrap();
    let e = crate::scope::engine(&home);
    let (addr, answered) = line_echo().await;
    let allowed = format!("tcp://127.0.0.1:{}", addr.port());
    let book = Arc::new(GrantBook::new(Some(home.path().join(GRANTS_FILE))));
    let mut record = GrantRecord::new("t", "test");
    record.net = Some(vec![allowed.clone()]);
    let id = book.add(record).unwrap().id;
    let scope = e.granted_scope(&id, "t", "line").unwrap();
    let narrowing = {
        let (book, id, answered) = (book.clone(), id.clone(), answered.clone());
        tokio::spawn(async move {
            while answered.load(Ordering::SeqCst) < 3 {
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
            let drop = Lists {
                net: vec![allowed],
                ..Lists::default()
            };
            book.narrow(&id, &Lists::default(), &drop, Expiry::Keep, "test")
                .unwrap();
        })
    };
    let port = addr.port().to_string();
    let out = crate::scope::run_scoped(&e, NET_TALK, Some(scope), &[&port, "100"]).await;
    narrowing.await.unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.first(), Some(&"connected"), "{out}");
    let failed = lines.last().unwrap();
    assert!(
        failed.contains("failed: out_of_scope: the grant no longer allows tcp 127.0.0.1:"),
        "{out}"
    );
    let rounds = lines.len() - 2;
    assert!(rounds >= 3, "{out}");
    // A write judged just before the narrowing may have been answered.
    assert!(answered.load(Ordering::SeqCst) <= rounds + 1, "{out}");
}
