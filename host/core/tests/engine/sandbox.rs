//! What a guest cannot see: host environment variables, host files outside
//! its preopens, the network.

use crate::common::{ok_stdout, run, run_with};
use guest_artifacts::*;
use workbooks::{Cap, DockError, Grant, Preopen, Profile, SessionOptions};

guest_artifacts::foreach_sandbox!(assert_test_exists);

#[tokio::test]
async fn sandbox_env() {
    // The test process certainly has PATH and HOME; the guest sees no
    // variable at all, and only the arguments it was given.
    assert!(std::env::var_os("PATH").is_some());
    let out = ok_stdout(run(SANDBOX_ENV, Profile::Posix, &["one", "two"]).await);
    assert!(!out.contains("env "), "{out}");
    assert_eq!(out, "arg probe\narg one\narg two\n");
}

#[tokio::test]
async fn sandbox_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("inside.txt"), "in").unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "secret").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), dir.path().join("link")).unwrap();

    // No preopens: nothing on the host is reachable.
    let out = ok_stdout(
        run(
            SANDBOX_FILES,
            Profile::Posix,
            &["/etc/passwd", "Cargo.toml", "/data/inside.txt"],
        )
        .await,
    );
    assert_eq!(out.matches("denied").count(), 3, "{out}");

    // One preopen: its files are reachable; nothing outside it is, by
    // `..`, by absolute path or through a symlink.
    let mut opts = SessionOptions::new("probe", "default");
    opts.dirs = vec![Preopen {
        host: dir.path().into(),
        guest: "/data".into(),
        read_only: true,
    }];
    opts.args = [
        "/data/inside.txt",
        "/data/../etc/passwd",
        "/data/link",
        "/etc/passwd",
    ]
    .map(String::from)
    .to_vec();
    let out = ok_stdout(run_with(SANDBOX_FILES, &Grant::profile("compute"), opts).await);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "/data/inside.txt: read 2 bytes");
    for line in &lines[1..] {
        assert!(line.contains("denied"), "{out}");
    }
}

#[tokio::test]
async fn preopens_need_the_vfs_cap() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = SessionOptions::new("probe", "default");
    opts.dirs = vec![Preopen {
        host: dir.path().into(),
        guest: "/d".into(),
        read_only: false,
    }];
    let grant = Grant::narrowed("minimal", workbooks::CapSet::of(&[Cap::Kv])).unwrap();
    let e = run_with(CLI_HELLO, &grant, opts).await.unwrap_err().run();
    assert!(e.to_string().contains("capability not granted: vfs"), "{e}");
}

#[tokio::test]
async fn sandbox_network() {
    // No profile reaches a socket or a resolver in the component lane
    // without the net cap, and the refusal names it.
    for profile in [Profile::Compute, Profile::Minimal] {
        let e = run(SANDBOX_NETWORK, profile, &["80"])
            .await
            .unwrap_err()
            .dock();
        assert!(
            matches!(e, DockError::NotGranted { cap: Cap::Net, .. }),
            "{e}"
        );
        assert!(
            e.to_string()
                .contains("capability not granted: net (import wasi:sockets/"),
            "{e}"
        );
    }
    // Under net the sockets exist, and the floor refuses loopback: a
    // listener on 127.0.0.1 never sees the connection.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    for profile in [Profile::Network, Profile::Posix] {
        let out = ok_stdout(run(SANDBOX_NETWORK, profile, &[&port]).await);
        assert!(out.contains("connect: denied"), "{out}");
        assert!(listener.accept().is_err(), "a connection reached loopback");
    }
}

/// An engine of its own that lets guests reach loopback (the operator's
/// allow-list), so the cadence, not the floor, is what a test meets.
fn loopback_engine(home: &tempfile::TempDir, calls: u64) -> workbooks::Engine {
    crate::common::own_builder(home.path())
        .net_allow(workbooks::Cidr::parse_list("127.0.0.0/8").unwrap())
        .rate_limit(calls, std::time::Duration::from_secs(3600))
        .build()
        .unwrap()
}

/// Whether the probe's lookup came back with at least one address.
fn resolved_some(out: &str) -> bool {
    out.lines()
        .next()
        .and_then(|l| l.strip_prefix("lookup: "))
        .and_then(|l| l.strip_suffix(" addresses"))
        .and_then(|n| n.parse::<u32>().ok())
        .is_some_and(|n| n > 0)
}

#[tokio::test]
async fn a_lookup_never_tells_a_guest_an_address_the_floor_refuses() {
    let home = tempfile::tempdir().unwrap();
    // No allow-list: loopback is internal, so `localhost` resolves to
    // nothing the guest is told about.
    let e = crate::common::own_engine(home.path());
    let out = sockets_probe(&e, SANDBOX_NETWORK, "sock-map", &["9"]).await;
    assert_eq!(out.lines().next(), Some("lookup: 0 addresses"), "{out}");
    // With the operator's allow-list, the same lookup answers.
    let open_home = tempfile::tempdir().unwrap();
    let e = loopback_engine(&open_home, 1_000);
    let out = sockets_probe(&e, SANDBOX_NETWORK, "sock-map", &["9"]).await;
    assert!(resolved_some(&out), "{out}");
}

async fn sockets_probe(e: &workbooks::Engine, probe: &str, tenant: &str, args: &[&str]) -> String {
    let docked = e
        .dock(&crate::common::artifact(probe), &Grant::profile("network"))
        .unwrap();
    let mut opts = SessionOptions::new("sockets", tenant);
    opts.args = args.iter().map(|a| a.to_string()).collect();
    let out = e.run(&docked, opts).await.unwrap();
    crate::common::stdout(&out)
}

#[tokio::test]
async fn a_revoked_tenant_can_neither_connect_nor_look_a_name_up() {
    let home = tempfile::tempdir().unwrap();
    let e = loopback_engine(&home, 1_000);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let out = sockets_probe(&e, SANDBOX_NETWORK, "sock-tenant", &[&port]).await;
    assert!(
        resolved_some(&out) && out.ends_with("connect: connected\n"),
        "{out}"
    );
    e.cadence().revocations().revoke("sock-tenant").unwrap();
    let out = sockets_probe(&e, SANDBOX_NETWORK, "sock-tenant", &[&port]).await;
    assert!(out.contains("lookup: denied"), "{out}");
    assert!(out.contains("connect: denied"), "{out}");
    // Another tenant is untouched.
    let out = sockets_probe(&e, SANDBOX_NETWORK, "sock-other", &[&port]).await;
    assert!(
        resolved_some(&out) && out.ends_with("connect: connected\n"),
        "{out}"
    );
    assert!(e.cadence().audit().summary().counts["revoked"] >= 2);
}

#[tokio::test]
async fn socket_connects_and_lookups_count_against_the_rate_limit() {
    let home = tempfile::tempdir().unwrap();
    // Three calls: one run's lookup and connect, then the next run's lookup.
    let e = loopback_engine(&home, 3);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let first = sockets_probe(&e, SANDBOX_NETWORK, "sock-busy", &[&port]).await;
    assert!(
        resolved_some(&first) && first.ends_with("connect: connected\n"),
        "{first}"
    );
    let second = sockets_probe(&e, SANDBOX_NETWORK, "sock-busy", &[&port]).await;
    assert!(resolved_some(&second), "{second}");
    assert!(second.contains("connect: denied"), "{second}");
    let third = sockets_probe(&e, SANDBOX_NETWORK, "sock-busy", &[&port]).await;
    assert!(
        third.contains("lookup: denied") && third.contains("connect: denied"),
        "{third}"
    );
    assert!(e.cadence().audit().summary().counts["rate_limited"] >= 3);
}

#[tokio::test]
async fn sandbox_udp_peer() {
    let home = tempfile::tempdir().unwrap();
    // The operator opens 127.0.0.1 alone: the stranger writes from
    // 127.0.0.2, a loopback address guests were not given (from an opened
    // one, as from any address the guest wrote to, a datagram is taken).
    let e = crate::common::own_builder(home.path())
        .net_allow(workbooks::Cidr::parse_list("127.0.0.1/32").unwrap())
        .build()
        .unwrap();
    let server = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let stranger = tokio::net::UdpSocket::bind("127.0.0.2:0").await.unwrap();
    let port = server.local_addr().unwrap().port().to_string();
    let exchange = tokio::spawn(async move {
        let mut buf = [0u8; 64];
        let (n, guest) = server.recv_from(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"hello");
        // A host the guest never wrote to aims at its port first.
        stranger.send_to(b"intruder", guest).await.unwrap();
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        server.send_to(b"reply", guest).await.unwrap();
        server.send_to(b"done", guest).await.unwrap();
    });
    let out = sockets_probe(&e, SANDBOX_UDP_PEER, "udp-tenant", &[&port]).await;
    exchange.await.unwrap();
    assert!(
        out.contains(&format!("from 127.0.0.1:{port}: reply")),
        "{out}"
    );
    assert!(
        !out.contains("intruder"),
        "an unsolicited datagram got in: {out}"
    );
    assert!(e.cadence().audit().summary().counts["udp_unsolicited"] >= 1);
}

#[tokio::test]
async fn sandbox_symlink() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("shared");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("notes.txt"), "inside").unwrap();
    let mut opts = SessionOptions::new("probe", "default");
    opts.dirs = vec![Preopen {
        host: dir.clone(),
        guest: "/w".into(),
        read_only: false,
    }];
    opts.args = [
        "up",
        "..",
        "out",
        "../../etc/passwd",
        "sneaky",
        "sub/../../x",
        "abs",
        "/etc/passwd",
        "fine",
        "notes.txt",
    ]
    .map(String::from)
    .to_vec();
    let out = ok_stdout(run_with(SANDBOX_SYMLINK, &Grant::profile("compute"), opts).await);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 5, "{out}");
    for line in &lines[..4] {
        assert!(line.contains("error"), "an escaping link was made: {out}");
    }
    assert_eq!(lines[4], "fine: ok");
    for link in ["up", "out", "sneaky", "abs"] {
        assert!(
            std::fs::symlink_metadata(dir.join(link)).is_err(),
            "{link} exists"
        );
    }
    assert_eq!(std::fs::read_to_string(dir.join("fine")).unwrap(), "inside");
}

#[tokio::test]
async fn a_preopen_that_holds_the_engine_home_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join(".workbooks");
    let e = crate::common::own_engine(&home);
    let docked = e
        .dock(
            &crate::common::artifact(SANDBOX_FILES),
            &Grant::profile("compute"),
        )
        .unwrap();
    // The home is where a default `wbx` keeps it: inside the directory a
    // user is likely to preopen.
    for host in [root.path().to_path_buf(), home.clone(), home.join("db")] {
        std::fs::create_dir_all(&host).unwrap();
        let mut opts = SessionOptions::new("probe", "default");
        opts.dirs = vec![Preopen {
            host: host.clone(),
            guest: "/w".into(),
            read_only: true,
        }];
        let err = e.run(&docked, opts).await.unwrap_err();
        assert!(
            err.to_string()
                .contains("would show the guest the engine home"),
            "{}: {err}",
            host.display()
        );
    }
}

/// A guest with a preopened directory opens one file a thousand times and
/// keeps every descriptor: it gets the store's 512 descriptors (its
/// preopen is one of them), then `quota`. (`wbx` under a soft descriptor
/// limit of 256 gives it the same: the CLI's tests.)
#[tokio::test]
async fn sandbox_files_hold() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "x").unwrap();
    let mut opts = SessionOptions::new("probe", "default");
    opts.args = vec!["1000".into(), "/data/f".into()];
    opts.dirs = vec![Preopen {
        host: dir.path().to_path_buf(),
        guest: "/data".into(),
        read_only: true,
    }];
    let out = run_with(SANDBOX_FILES_HOLD, &Grant::profile("compute"), opts)
        .await
        .unwrap();
    let stdout = crate::common::stdout(&out);
    assert!(
        stdout.starts_with("opened 511\nerror ") && stdout.to_lowercase().contains("quota"),
        "{stdout}{}",
        crate::common::text(&out.stderr)
    );
}
