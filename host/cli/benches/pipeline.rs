//! The engine's main job against its native peers, same run, ratios
//! printed:
//! 1. a 4-stage pipeline in process vs `sh -c` with native coreutils;
//! 2. the whole process: `wbx run '<pipeline>'` vs `sh -c '<pipeline>'`,
//!    and `wbx run true` vs `sh -c true`; the same for the compiler-less
//!    `wbr` when it is built (`cargo build --release -p wbr`, on its own),
//!    and the thin client `wb` (which hands a line no daemon serves to
//!    `wbx`); then all of it again as clients of a `wbx daemon`; and all
//!    of section 2 again for the static musl build, when it is built;
//! 3. `jq` on a 50 MB JSON file: the sandboxed built-in vs the same jq
//!    crate (same jaq crates, same code) compiled natively;
//! 4. what one more stage costs the host: a line of 9 `true`s against a
//!    line of one, and the parts of a stage (dock, run) on their own.
//!
//! `cargo bench -p workbooks-cli --bench pipeline` runs them all;
//! `cargo bench -p workbooks-cli --bench pipeline -- stages jq` runs those named
//! (`inprocess`, `process`, `jq`, `stages`).
//! `WB_PROFILE_LOOP=5 perf record … --bench` runs only the in-process line
//! (`WB_PROFILE_LINE`, default the 4-stage one) for five seconds, for a
//! profiler (see `profile_loop`).

#![expect(
    clippy::disallowed_macros,
    reason = "a bench prints its figures on stdout"
)]

mod support;
use support::median;
#[path = "support/installed.rs"]
mod installed;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use workbooks::{Artifact, Engine, Grant, LineOptions, Preopen, SessionOptions};

/// Runs of one side in a row before switching to the other.
const BLOCK: usize = 10;

const PIPELINE: &str = "seq 1 2000 | sort -r | head -n 5 | wc -l";

/// Runs `a` and `b` in alternating blocks of [`BLOCK`] (after a warm-up)
/// `n` times each and returns their medians, so drift on a shared machine
/// falls on both alike. Blocks rather than strict alternation: right after
/// a process spawn the in-process side runs on cold caches, a cost that
/// belongs to the spawn, not to the pipeline (criterion would run each side
/// entirely alone).
fn interleave<A: FnMut(), B: FnMut()>(n: usize, mut a: A, mut b: B) -> (Duration, Duration) {
    for _ in 0..n.div_ceil(10) {
        a();
        b();
    }
    let (mut xs, mut ys) = (Vec::with_capacity(n), Vec::with_capacity(n));
    while xs.len() < n {
        let block = BLOCK.min(n - xs.len());
        for _ in 0..block {
            let t = Instant::now();
            a();
            xs.push(t.elapsed());
        }
        for _ in 0..block {
            let t = Instant::now();
            b();
            ys.push(t.elapsed());
        }
    }
    (median(xs), median(ys))
}

fn sh(line: &str) -> Vec<u8> {
    let out = Command::new("sh")
        .args(["-c", line])
        .stdin(Stdio::null())
        .output()
        .expect("sh");
    assert!(out.status.success(), "sh -c {line}");
    out.stdout
}

fn report(what: &str, ours: Duration, theirs: Duration, peer: &str) {
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!("{what}");
    println!("  workbooks  median {:>12.1} µs", us(ours));
    println!("  {peer:<10} median {:>12.1} µs", us(theirs));
    let ratio = theirs.as_secs_f64() / ours.as_secs_f64();
    if ratio >= 1.0 {
        println!("  workbooks is {ratio:.1}x faster");
    } else {
        println!("  workbooks takes {:.2}x the time", 1.0 / ratio);
    }
}

/// The repository root (benches run with the crate dir as cwd).
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Builds the jq guest crate for the host: the native peer.
fn native_jq() -> PathBuf {
    let target = root().join("target").join("native-guests");
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "-p", "jq", "--manifest-path"])
        .arg(root().join("guests").join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .status()
        .expect("cargo");
    assert!(status.success(), "building native jq");
    target.join("release").join("jq")
}

/// A JSON array of objects, about `bytes` long.
fn big_json(path: &Path, bytes: usize) {
    use std::io::Write;
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).expect("create"));
    f.write_all(b"[").expect("write");
    let mut n = 0usize;
    let mut written = 1;
    while written < bytes {
        let item = format!(
            "{}{{\"id\":{n},\"name\":\"user-{}\",\"tags\":[\"a\",\"b{}\"],\"score\":{}.5,\"active\":{}}}",
            if n == 0 { "" } else { "," },
            n % 977,
            n % 13,
            n % 1000,
            n.is_multiple_of(2)
        );
        written += item.len();
        f.write_all(item.as_bytes()).expect("write");
        n += 1;
    }
    f.write_all(b"]\n").expect("write");
}

/// The sections named on the command line, or all of them.
fn wanted(section: &str) -> bool {
    const SECTIONS: [&str; 4] = ["inprocess", "process", "jq", "stages"];
    let named: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| SECTIONS.contains(&a.as_str()))
        .collect();
    named.is_empty() || named.iter().any(|a| a == section)
}

fn main() {
    let full = support::start();
    let n = if full { 100 } else { 2 };
    let home = tempfile::tempdir().expect("home");
    // Pooled like an embedding host, on the defaults.
    let engine = Engine::builder().home(home.path()).build().expect("engine");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("rt");
    if let Ok(secs) = std::env::var("WB_PROFILE_LOOP") {
        return profile_loop(&engine, &rt, &secs);
    }
    if wanted("inprocess") {
        in_process(&engine, &rt, n);
    }
    if wanted("process") {
        whole_process(home.path(), n);
    }
    if wanted("jq") {
        jq_big(home.path(), &rt, full);
    }
    if wanted("stages") {
        stage_cost(&engine, &rt, n);
    }
}

/// Runs only our side of section 1 for `secs` seconds (the line in
/// `WB_PROFILE_LINE`, default [`PIPELINE`]), for a profiler to watch, and
/// prints the mean time per line.
fn profile_loop(engine: &Engine, rt: &tokio::runtime::Runtime, secs: &str) {
    let secs: u64 = secs.parse().expect("WB_PROFILE_LOOP: whole seconds");
    let line = std::env::var("WB_PROFILE_LINE").unwrap_or_else(|_| PIPELINE.to_string());
    rt.block_on(engine.commands().run_line(&line, LineOptions::default()))
        .expect("line");
    let start = Instant::now();
    let mut runs = 0u32;
    while start.elapsed() < Duration::from_secs(secs) {
        rt.block_on(engine.commands().run_line(&line, LineOptions::default()))
            .expect("line");
        runs += 1;
    }
    let mean = start.elapsed() / runs.max(1);
    println!(
        "`{line}`: {runs} runs, mean {:.1} µs",
        mean.as_secs_f64() * 1e6
    );
}

/// 1. In process vs sh -c.
fn in_process(engine: &Engine, rt: &tokio::runtime::Runtime, n: usize) {
    let expected = sh(PIPELINE);
    let (ours, native) = interleave(
        n * 4,
        || {
            let out = rt
                .block_on(engine.commands().run_line(PIPELINE, LineOptions::default()))
                .expect("pipeline");
            assert_eq!(&out.stdout[..], &expected[..]);
        },
        || {
            sh(PIPELINE);
        },
    );
    report(
        &format!("4-stage pipeline `{PIPELINE}`, in process vs sh -c"),
        ours,
        native,
        "sh -c",
    );
}

/// Section 2, the whole process: a pipeline and the smallest line through
/// installed runners, alone and then as clients of a `wbx daemon`; for
/// this build, and again for the static musl build when it is built.
fn whole_process(home: &Path, n: usize) {
    for (build, wbx) in installed::builds() {
        whole_process_of(build, &wbx, home, n);
    }
}

/// Section 2 for the build whose `wbx` is `wbx`, named by `build`.
fn whole_process_of(build: &str, wbx: &Path, home: &Path, n: usize) {
    let (_installed, runners) = installed::runners(wbx);
    let measure_all = |how: &str| {
        for (name, bin) in &runners {
            for line in [PIPELINE, "true"] {
                let expected = sh(line);
                let (ours, native) = interleave(
                    n,
                    || {
                        let out = Command::new(bin)
                            .args(["run", line])
                            .env("WB_HOME", home)
                            .stdin(Stdio::null())
                            .output()
                            .expect("runner");
                        assert_eq!(out.stdout, expected);
                        assert!(out.status.success(), "{name} run {line}");
                    },
                    || {
                        sh(line);
                    },
                );
                let what = format!("whole process{build}{how}: `{name} run '{line}'` vs `sh -c`");
                report(&what, ours, native, "sh -c");
            }
        }
    };
    measure_all("");
    let wbx = &runners[0].1;
    let mut daemon = Command::new(wbx)
        .arg("daemon")
        .env("WB_HOME", home)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("wbx daemon");
    let start = Instant::now();
    while std::os::unix::net::UnixStream::connect(home.join("daemon.sock")).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the daemon never listened"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    measure_all(" through `wbx daemon`");
    let _ = daemon.kill();
    let _ = daemon.wait();
}

/// 3. jq on 50 MB.
fn jq_big(home: &Path, rt: &tokio::runtime::Runtime, full: bool) {
    let data = tempfile::tempdir().expect("data");
    let size = if full { 50 << 20 } else { 1 << 20 };
    big_json(&data.path().join("big.json"), size);
    let filter = "[.[] | select(.active) | .score] | add";
    let jq = native_jq();
    let native_out = Command::new(&jq)
        .args(["-c", filter])
        .arg(data.path().join("big.json"))
        .output()
        .expect("native jq");
    assert!(native_out.status.success());
    let opts = || LineOptions {
        dirs: vec![Preopen {
            host: data.path().into(),
            guest: "/data".into(),
            read_only: true,
        }],
        // jaq's values take several times the JSON text (natively too): a
        // 50 MB document needs more than any profile's cap and 5e9 fuel.
        stage_fuel: Some(u64::MAX),
        stage_memory: Some(2 << 30),
        ..LineOptions::default()
    };
    // A second engine whose pool slots have room for the 2 GiB jq needs.
    let big = Engine::builder()
        .home(home)
        .max_memory(2 << 30)
        .build()
        .expect("engine");
    let (ours, theirs) = interleave(
        if full { 7 } else { 1 },
        || {
            let out = rt
                .block_on(big.commands().run(
                    "jq",
                    vec!["-c".into(), filter.into(), "/data/big.json".into()],
                    opts(),
                ))
                .expect("sandboxed jq");
            assert_eq!(out.stdout, native_out.stdout);
        },
        || {
            Command::new(&jq)
                .args(["-c", filter])
                .arg(data.path().join("big.json"))
                .output()
                .expect("native jq");
        },
    );
    report(
        &format!("jq `{filter}` on {} MB", size >> 20),
        ours,
        theirs,
        "native jq",
    );
}

/// Median of `n` timed calls of `f`, after `n / 10 + 1` untimed ones.
fn timed(n: usize, mut f: impl FnMut()) -> Duration {
    for _ in 0..n / 10 + 1 {
        f();
    }
    let samples = (0..n)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    median(samples)
}

/// 4. What one more stage costs the host, and its parts.
fn stage_cost(engine: &Engine, rt: &tokio::runtime::Runtime, n: usize) {
    const STAGES: usize = 9;
    let n = n * 4;
    let line = |stages: usize| vec!["true"; stages].join(" | ");
    let run = |l: &str| {
        let out = rt
            .block_on(engine.commands().run_line(l, LineOptions::default()))
            .expect("line");
        assert_eq!(out.stages.len(), l.split('|').count());
    };
    let (one, many) = (line(1), line(STAGES));
    let t_one = timed(n, || run(&one));
    let t_many = timed(n, || run(&many));
    let per_stage = t_many.saturating_sub(t_one) / (STAGES as u32 - 1);

    // The parts of a stage, on the smallest command component.
    let artifact = Artifact::from_file(guest_artifacts::CLI_HELLO).expect("probe");
    let grant = Grant::profile("compute");
    let docked = engine.dock(&artifact, &grant).expect("dock");
    let t_dock = timed(n * 10, || {
        engine.dock(&artifact, &grant).expect("dock");
    });
    let t_run = timed(n * 10, || {
        let out = rt
            .block_on(engine.run(&docked, SessionOptions::new("hello", "default")))
            .expect("run");
        assert_eq!(&out.stdout[..], b"hello\n");
    });
    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!("host cost of one more stage");
    println!(
        "  line `true` (shell + 1 stage)     median {:>10.1} µs",
        us(t_one)
    );
    println!(
        "  line of {STAGES} `true`s               median {:>10.1} µs",
        us(t_many)
    );
    println!(
        "  each stage past the first          {:>17.1} µs",
        us(per_stage)
    );
    println!("parts of a stage (`hello` component)");
    println!(
        "  dock, cached                       median {:>10.1} µs",
        us(t_dock)
    );
    println!(
        "  store + instantiate + run + drop   median {:>10.1} µs",
        us(t_run)
    );
}
