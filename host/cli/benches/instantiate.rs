//! Instantiate-and-call of a trivial command component, in process from the
//! cached artifact, against spawning `wbx exec` as a child process that runs
//! the same component; and the same command built for WASI 0.3 (an async
//! `run`, driven by the store's event loop) against the 0.2 one. Same run,
//! the medians and the ratios.
//!
//! `cargo bench -p workbooks-cli --bench instantiate`

#![expect(
    clippy::disallowed_macros,
    reason = "a bench prints its figures on stdout"
)]

mod support;
use support::median;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use workbooks::{Artifact, Engine, Grant, SessionOptions};

fn in_process(engine: &Engine, probe: &str, iterations: usize) -> Duration {
    let artifact = Artifact::from_file(probe).expect("probe");
    let docked = engine
        .dock(&artifact, &Grant::profile("compute"))
        .expect("dock");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let run = || async {
            let out = engine
                .run(&docked, SessionOptions::new("hello", "default"))
                .await
                .expect("run");
            assert_eq!(&out.stdout[..], b"hello\n");
        };
        for _ in 0..200 {
            run().await;
        }
        let mut samples = Vec::with_capacity(iterations);
        for _ in 0..iterations {
            let t = Instant::now();
            run().await;
            samples.push(t.elapsed());
        }
        median(samples)
    })
}

fn process(home: &std::path::Path, iterations: usize) -> Duration {
    let spawn = || {
        let out = Command::new(env!("CARGO_BIN_EXE_wbx"))
            .args(["exec", guest_artifacts::CLI_HELLO])
            .env("WB_HOME", home)
            .stdin(Stdio::null())
            .output()
            .expect("spawn wbx");
        assert_eq!(out.stdout, b"hello\n");
    };
    for _ in 0..3 {
        spawn();
    }
    let mut samples = Vec::with_capacity(iterations);
    for _ in 0..iterations {
        let t = Instant::now();
        spawn();
        samples.push(t.elapsed());
    }
    median(samples)
}

fn main() {
    // `cargo test --benches` gets a quick smoke run.
    let full = support::start();
    let (n_inproc, n_proc) = if full { (5_000, 50) } else { (50, 3) };
    let home = tempfile::tempdir().expect("home");

    let pooled = Engine::builder().home(home.path()).build().expect("engine");
    let pooled_median = in_process(&pooled, guest_artifacts::CLI_HELLO, n_inproc);
    let wasi03_median = in_process(&pooled, guest_artifacts::WASI03_HELLO, n_inproc);
    drop(pooled);
    let on_demand = Engine::builder()
        .home(home.path())
        .pooling(false)
        .build()
        .expect("engine");
    let on_demand_median = in_process(&on_demand, guest_artifacts::CLI_HELLO, n_inproc);
    drop(on_demand);
    let process_median = process(home.path(), n_proc);

    let us = |d: Duration| d.as_secs_f64() * 1e6;
    println!("instantiate + call `hello` (command component, cached artifact)");
    println!(
        "  in process, pooling allocator   median {:>10.1} µs  ({n_inproc} runs)",
        us(pooled_median)
    );
    println!(
        "  in process, on-demand allocator median {:>10.1} µs  ({n_inproc} runs)",
        us(on_demand_median)
    );
    println!(
        "  child process `wbx exec`         median {:>10.1} µs  ({n_proc} runs)",
        us(process_median)
    );
    println!(
        "  ratio: in-process (pooling) is {:.0}x faster than a process",
        process_median.as_secs_f64() / pooled_median.as_secs_f64()
    );
    println!(
        "  the same command at WASI 0.3, pooling median {:>10.1} µs  ({n_inproc} runs)",
        us(wasi03_median)
    );
    println!(
        "  ratio: 0.3 / 0.2 = {:.2}",
        wasi03_median.as_secs_f64() / pooled_median.as_secs_f64()
    );
}
