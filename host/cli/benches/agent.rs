//! The agent loop's own cost, with a scripted OpenAI-compatible server on
//! loopback that answers at once (so the model's time is zero), and the
//! cost of one shell tool call against its peer, a process per call.
//!
//! - loop overhead per step: a run of N turns, each calling `vfs_read` on a
//!   small file (a tool that runs no wasm), divided by its N + 1 model
//!   turns: the agent component, the llm broker's JSON both ways, the host
//!   primitive and the loopback HTTP exchange, the step event and its log
//!   line. Target ≤ 1 ms.
//! - a fresh isolated tool instance: the shell tool's work for `true` (a
//!   line run in the pipe shell with the workdir preopened), p50, against
//!   `sh -c true` spawned as a process. Target ≤ 1 ms p50.
//!
//! `cargo bench -p workbooks-cli --bench agent`

#![expect(
    clippy::disallowed_macros,
    reason = "a bench prints its figures on stdout"
)]

mod support;
use support::median;
#[expect(dead_code, reason = "the bench uses part of the tests' server")]
#[path = "../tests/engine/model_server.rs"]
mod model_server;

use std::time::{Duration, Instant};
use workbooks::{Engine, LineOptions, LlmEndpoint, Preopen};
use workbooks_agent::AgentOptions;

async fn one_run(engine: &Engine, steps: usize, workdir: &std::path::Path) -> Duration {
    let mut script: Vec<model_server::Answer> = (0..steps)
        .map(|i| {
            let id = format!("c{i}");
            model_server::tool_calls(&[(&id, "vfs_read", r#"{"path":"notes.txt"}"#)])
        })
        .collect();
    script.push(model_server::text("end"));
    let server = model_server::start(script).await;
    let opts = AgentOptions {
        task: "read".into(),
        max_steps: steps as u32 + 1,
        workdir: Some(workdir.to_path_buf()),
        ..AgentOptions::default()
    };
    let engine = with_endpoint(engine, &server.base_url());
    let t = Instant::now();
    let record = workbooks_agent::Agents::new(engine.clone())
        .run(opts)
        .await
        .expect("run");
    let took = t.elapsed();
    assert_eq!(record.result, "end", "{record:?}");
    assert_eq!(record.steps as usize, steps);
    took
}

/// The engine at `home` pointed at the server (engines are cheap to build
/// once their caches are warm).
fn with_endpoint(engine: &Engine, base_url: &str) -> Engine {
    Engine::builder()
        .home(engine.home())
        .llm(LlmEndpoint::new(base_url, None, "bench-model"))
        .build()
        .expect("engine")
}

fn main() {
    let full = support::start();
    let (steps, runs, lines) = if full { (20, 15, 400) } else { (2, 1, 3) };
    let home = tempfile::tempdir().expect("home");
    let work = tempfile::tempdir().expect("workdir");
    std::fs::write(work.path().join("notes.txt"), "ada\ngrace\n").expect("notes");
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let engine = Engine::builder().home(home.path()).build().expect("engine");
    // Warm: composition and compilation of the loop and its broker.
    rt.block_on(one_run(&engine, 1, work.path()));

    let per_step: Vec<Duration> = (0..runs)
        .map(|_| rt.block_on(one_run(&engine, steps, work.path())) / (steps as u32 + 1))
        .collect();
    let step = median(per_step);

    let line = |engine: &Engine| {
        let opts = LineOptions {
            profile: "minimal".into(),
            dirs: vec![Preopen {
                host: work.path().to_path_buf(),
                guest: "/".into(),
                read_only: false,
            }],
            ..LineOptions::default()
        };
        let t = Instant::now();
        let out = rt
            .block_on(engine.commands().run_line("true", opts))
            .expect("line");
        assert_eq!(out.exit, 0);
        t.elapsed()
    };
    line(&engine);
    let tool: Vec<Duration> = (0..lines).map(|_| line(&engine)).collect();
    let process: Vec<Duration> = (0..lines)
        .map(|_| {
            let t = Instant::now();
            let ok = std::process::Command::new("sh")
                .args(["-c", "true"])
                .status()
                .expect("sh")
                .success();
            assert!(ok);
            t.elapsed()
        })
        .collect();
    let (tool, process) = (median(tool), median(process));
    println!(
        "agent loop overhead per step ({steps} steps, vfs_read tool, scripted model): {:.1} µs (target ≤ 1000 µs)",
        step.as_secs_f64() * 1e6
    );
    println!(
        "shell tool call `true`, fresh instance, p50: {:.1} µs; `sh -c true` process: {:.1} µs; ratio {:.2}× (target ≤ 1000 µs)",
        tool.as_secs_f64() * 1e6,
        process.as_secs_f64() * 1e6,
        tool.as_secs_f64() / process.as_secs_f64()
    );
}
