//! `wbx serve` as a process: it answers on its port (HTTP and `--tcp`),
//! keeps serving after running out of descriptors, and writes out the
//! denials it coalesced when stopped. The serving itself
//! (`Server`, `TcpServer`) is tested in the core.

use guest_artifacts::*;
use std::time::Duration;

/// A `GET` of `path` on `addr`: its status and body.
async fn get(addr: std::net::SocketAddr, path: &str) -> (u16, String) {
    crate::common::http_request(addr, "GET", path, "")
        .await
        .unwrap()
}

/// A `wbx serve` child, killed when dropped (a failing test leaves none
/// behind).
pub(crate) struct ServeChild(std::process::Child);

impl Drop for ServeChild {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `wbx serve` of the handler on a free loopback port with `extra`
/// flags, under a file-descriptor limit when given.
fn spawn_wbx_serve(
    home: &std::path::Path,
    extra: &[&str],
    fd_limit: Option<u32>,
) -> (ServeChild, std::net::SocketAddr) {
    spawn_wbx_serving(home, extra, SERVE_HANDLER, fd_limit, &[])
}

/// Starts `wbx serve` of `component` on a free loopback port with `extra`
/// flags and `env` set, under a file-descriptor limit when given.
pub(crate) fn spawn_wbx_serving(
    home: &std::path::Path,
    extra: &[&str],
    component: &str,
    fd_limit: Option<u32>,
    env: &[(&str, &str)],
) -> (ServeChild, std::net::SocketAddr) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let limit = fd_limit.map_or(String::new(), |n| format!("ulimit -n {n} && "));
    let child = std::process::Command::new("sh")
        .args(["-c", &format!("{limit}exec \"$@\""), "sh"])
        .arg(env!("CARGO_BIN_EXE_wbx"))
        .args(["serve", "--listen", &addr.to_string()])
        .args(extra)
        .arg(component)
        .env("WB_HOME", home)
        .envs(env.iter().copied())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    (ServeChild(child), addr)
}

/// `GET /hello` on `addr`, tried up to `tries` times 100 ms apart: the
/// first answer, if any.
pub(crate) fn hello_within(addr: std::net::SocketAddr, tries: u32) -> Option<(u16, String)> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for _ in 0..tries {
        if std::net::TcpStream::connect(addr).is_ok() {
            let got = rt.block_on(async {
                tokio::time::timeout(Duration::from_secs(2), get(addr, "/hello")).await
            });
            if let Ok(answer) = got {
                return Some(answer);
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    None
}

#[test]
fn wbx_serve_answers_on_its_port() {
    let home = tempfile::tempdir().unwrap();
    let (_child, addr) = spawn_wbx_serve(home.path(), &[], None);
    assert_eq!(
        hello_within(addr, 100),
        Some((200, "hello from wasm\n".to_string()))
    );
}

#[test]
fn wbx_serve_keeps_serving_after_running_out_of_file_descriptors() {
    let home = tempfile::tempdir().unwrap();
    // A small descriptor limit, and connection caps far above it, so the
    // accepts themselves fail.
    let caps = [
        "--max-connections",
        "5000",
        "--max-connections-per-client",
        "5000",
    ];
    let (mut child, addr) = spawn_wbx_serve(home.path(), &caps, Some(64));
    assert_eq!(hello_within(addr, 100).map(|a| a.0), Some(200));
    let idle: Vec<std::net::TcpStream> = (0..200)
        .filter_map(|_| std::net::TcpStream::connect(addr).ok())
        .collect();
    assert!(idle.len() > 64, "could not open enough connections");
    std::thread::sleep(Duration::from_millis(500));
    drop(idle);
    let after = hello_within(addr, 100);
    assert_eq!(
        child.0.try_wait().unwrap(),
        None,
        "wbx serve exited when accepting failed"
    );
    assert_eq!(after.map(|a| a.0), Some(200), "wbx serve stopped answering");
}

#[test]
fn wbx_serve_writes_out_coalesced_denials_when_stopped() {
    let home = tempfile::tempdir().unwrap();
    let (child, addr) = spawn_wbx_serve(home.path(), &["--per-client", "1"], None);
    assert_eq!(hello_within(addr, 100).map(|a| a.0), Some(200));
    // Four more requests over the limit: one audit line at once, three
    // repeats held for the coalescing window.
    for _ in 0..4 {
        assert_eq!(hello_within(addr, 1).map(|a| a.0), Some(429));
    }
    let pid = child.0.id().to_string();
    let stopped = std::process::Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap();
    assert!(stopped.success());
    let mut child = child;
    let status = child.0.wait().unwrap();
    assert!(status.success(), "{status}");
    let out = crate::common::wbx(home.path(), &["audit", "--json"], b"");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["counts"]["rate_limited"], 4, "{v}");
}

#[test]
fn wbx_serve_tcp_answers_on_its_port() {
    let home = tempfile::tempdir().unwrap();
    let (_child, addr) = spawn_wbx_serving(home.path(), &["--tcp"], SERVE_TCP, None, &[]);
    let mut reply = String::new();
    for _ in 0..100 {
        if let Ok(mut s) = std::net::TcpStream::connect(addr) {
            use std::io::{Read, Write};
            s.write_all(b"cli").unwrap();
            s.shutdown(std::net::Shutdown::Write).unwrap();
            s.read_to_string(&mut reply).unwrap();
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(reply, "got 3: CLI");
}
