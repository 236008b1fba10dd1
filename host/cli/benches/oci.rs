//! Components by OCI reference: push and pull against a registry on
//! loopback (the CNCF distribution server), and `wbx exec oci://…` warm
//! (pulled already, compiled already) against `wbx exec file.wasm`, in one
//! run. The component is `WB_BENCH_OCI_COMPONENT` (docs/distribution.md measures the
//! 18 MB componentize-py hello), else the small test hello. With
//! `WB_BENCH_ORAS_PYTHON` (a python that imports `oras`), the same push and
//! pull through oras-py, the peer.

#![expect(
    clippy::disallowed_macros,
    reason = "a bench prints its figures on stdout"
)]

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};
use workbooks_oci::testing::DistributionServer;

const RUNS: usize = 7;

fn wbx(home: &Path, args: &[&str]) -> Output {
    let o = Command::new(env!("CARGO_BIN_EXE_wbx"))
        .args(args)
        .env("WB_HOME", home)
        .env("WB_OPERATOR_ALLOW", "127.0.0.1/32")
        .env(
            "WB_SIGNING_KEY",
            "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=",
        )
        .env_remove("WB_OCI_SIGNERS")
        .output()
        .expect("wbx runs");
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn timed(mut f: impl FnMut(usize)) -> Duration {
    median(
        (0..RUNS)
            .map(|i| {
                let t = Instant::now();
                f(i);
                t.elapsed()
            })
            .collect(),
    )
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// One line: what, its time, and its ratio to the peer's.
fn ratio(what: &str, d: Duration, against: &str, r: f64) {
    println!("{what:<40}{:8.1} ms   {against} {r:.2}", ms(d));
}

const ORAS: &str = r#"
import sys, time, oras.client
op, target, path = sys.argv[1:4]
c = oras.client.OrasClient(hostname=target.split('/')[0], insecure=True)
if op == "push":
    c.push(files=[path], target=target, disable_path_validation=True)
else:
    c.pull(target=target, outdir=path)
"#;

fn main() {
    let component = std::env::var("WB_BENCH_OCI_COMPONENT")
        .unwrap_or_else(|_| guest_artifacts::CLI_HELLO.to_string());
    let size = std::fs::metadata(&component).expect("the component").len();
    println!("component {component} ({:.1} MB)", size as f64 / 1e6);
    let server = DistributionServer::start();
    let reference = |i: usize| server.reference(&format!("bench/c:{i}"));
    // Push: a fresh repository tag each time, the blob new to the registry
    // only the first time (as a re-push is); so push also into fresh repos.
    let author = tempfile::tempdir().expect("home");
    let push = timed(|i| {
        wbx(
            author.path(),
            &[
                "push",
                &component,
                &server.reference(&format!("bench/p{i}:1")),
            ],
        );
    });
    wbx(author.path(), &["push", &component, &reference(0)]);
    let pull = timed(|_| {
        let fresh = tempfile::tempdir().expect("home");
        wbx(fresh.path(), &["pull", &reference(0)]);
    });
    println!(
        "wbx push  (signed, new repository)      {:8.1} ms",
        ms(push)
    );
    println!(
        "wbx pull  (fresh home, digests checked) {:8.1} ms",
        ms(pull)
    );
    if let Ok(python) = std::env::var("WB_BENCH_ORAS_PYTHON") {
        let staging = tempfile::tempdir().expect("dir");
        let file = staging.path().join("component.wasm");
        std::fs::copy(&component, &file).expect("copy");
        let oras = |op: &str, target: &str, path: &Path| {
            let o = Command::new(&python)
                .args(["-c", ORAS, op, target])
                .arg(path)
                .current_dir(staging.path())
                .output()
                .expect("python runs");
            assert!(
                o.status.success(),
                "oras {op}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        };
        let target = |i: usize| format!("{}/oras/p{i}:1", server.registry());
        let oras_push = timed(|i| oras("push", &target(i), &file));
        let oras_pull = timed(|_| {
            let out = tempfile::tempdir().expect("dir");
            oras("pull", &target(0), out.path());
        });
        ratio(
            "oras-py push",
            oras_push,
            "wbx/oras",
            push.as_secs_f64() / oras_push.as_secs_f64(),
        );
        ratio(
            "oras-py pull",
            oras_pull,
            "wbx/oras",
            pull.as_secs_f64() / oras_pull.as_secs_f64(),
        );
    }
    // Exec: one home holding the pull and the compiled component.
    let home = tempfile::tempdir().expect("home");
    let digest_ref = {
        let o = wbx(home.path(), &["pull", &reference(0), "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
        server.reference(&format!(
            "bench/c@{}",
            v["digest"].as_str().expect("digest")
        ))
    };
    // A componentize-py component imports wasi:sockets; its hello uses
    // none, so the deny broker serves them.
    let exec = |target: &str| {
        drop(wbx(
            home.path(),
            &["--stub", "wasi:sockets", "exec", target],
        ))
    };
    exec(&component);
    let file = timed(|_| exec(&component));
    let by_tag = timed(|_| exec(&reference(0)));
    let by_digest = timed(|_| exec(&digest_ref));
    println!(
        "wbx exec file.wasm                      {:8.1} ms",
        ms(file)
    );
    ratio(
        "wbx exec oci://…:tag (warm)",
        by_tag,
        "ratio",
        ms(by_tag) / ms(file),
    );
    ratio(
        "wbx exec oci://…@sha256 (warm)",
        by_digest,
        "ratio",
        ms(by_digest) / ms(file),
    );
}
