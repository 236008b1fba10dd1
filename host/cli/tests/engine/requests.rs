//! Requests a guest sends and holds (issue 54), at either version: the
//! assertion a `*_requests_hold` probe meets.

use crate::common::Silent;
use crate::servers;
use std::sync::atomic::Ordering;

/// Against a loopback server that accepts and never answers, a thousand
/// requests `probe` sends at once: the store holds 256 connections, and
/// the rest are answered `connection-limit-reached` without one. A guest
/// that waits for each answer and drops it before the next sends 300:
/// each connection leaves the count once its response is dropped.
pub fn assert_requests_hold_at_the_store_cap(probe: &str) {
    use std::io::BufRead;
    let silent = Silent::start();
    let home = tempfile::tempdir().unwrap();
    let mut child = crate::common::wbx_command(home.path())
        .env("WB_NET_ALLOW", "127.0.0.1/32")
        .args(["exec", "--profile", "network", probe, "--"])
        .args(["1000", &silent.addr.to_string()])
        .spawn()
        .expect("spawn wbx");
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("the probe's report");
    let connections = silent.accepted();
    drop(child.stdin.take());
    let out = child.wait_with_output().expect("wbx ends");
    drop(silent);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        line, "pending 256; refused 744\n",
        "the server took {connections} connections: {stderr}"
    );
    assert!(
        connections <= 256,
        "the server took {connections} connections: {line}"
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let server = rt.block_on(servers::http());
    let each = crate::common::wbx_command(home.path())
        .env("WB_NET_ALLOW", "127.0.0.1/32")
        .args(["exec", "--profile", "network", probe, "--"])
        .args(["300", &server.addr.to_string(), "each"])
        .output()
        .expect("wbx");
    assert_eq!(
        String::from_utf8_lossy(&each.stdout),
        "answered 300; refused 0\n",
        "{}",
        String::from_utf8_lossy(&each.stderr)
    );
    assert_eq!(server.hits.load(Ordering::SeqCst), 300);
}
