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
