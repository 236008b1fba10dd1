//! Limits: a runaway loop, a memory bomb, deep recursion, a call blocked in
//! the host and a fuel budget each end as a named error, and the host
//! serves the next call at once.

use crate::common::{Failure, artifact, engine, ok_stdout, run, run_with, text};
use guest_artifacts::*;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use workbooks::{Grant, Output, Profile, RunError, RunOutput, SessionOptions, SessionOutput};

guest_artifacts::foreach_limits!(assert_test_exists);

fn with_timeout(ms: u64) -> SessionOptions {
    let mut opts = SessionOptions::new("limits", "default");
    opts.timeout = Some(Duration::from_millis(ms));
    opts
}

async fn next_call_is_served() {
    assert_eq!(
        ok_stdout(run(CLI_HELLO, Profile::Compute, &[]).await),
        "hello\n"
    );
}

#[tokio::test]
async fn limits_runaway_loop() {
    let start = Instant::now();
    let e = run_with(
        LIMITS_RUNAWAY_LOOP,
        &Grant::profile("compute"),
        with_timeout(300),
    )
    .await
    .unwrap_err()
    .run();
    let took = start.elapsed();
    assert!(
        matches!(e, RunError::Timeout { budget } if budget == Duration::from_millis(300)),
        "{e}"
    );
    assert_eq!(
        e.to_string(),
        "timeout: the call exceeded its 300 ms budget"
    );
    // Stopped at its budget, not long after (a generous bound: this checks
    // that the deadline fires, not how fast the machine is).
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(3),
        "{took:?}"
    );
    next_call_is_served().await;
}

#[test]
fn runaway_calls_are_stopped_and_their_thread_freed() {
    // One thread for everything: if any runaway kept its thread, nothing
    // after it could run at all.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let docked = engine()
            .dock(&artifact(LIMITS_RUNAWAY_LOOP), &Grant::profile("compute"))
            .unwrap();
        let mut set = tokio::task::JoinSet::new();
        for _ in 0..8 {
            let docked = docked.clone();
            set.spawn(async move { engine().run(&docked, with_timeout(200)).await });
        }
        let mut stopped = 0;
        while let Some(done) = set.join_next().await {
            let e = done.unwrap().unwrap_err();
            assert!(matches!(e, RunError::Timeout { .. }), "{e}");
            stopped += 1;
        }
        assert_eq!(stopped, 8);
        next_call_is_served().await;
    });
    // No thread of this process is left spinning: sample the CPU time of
    // every thread over a quiet interval.
    let busy = threads_busy_over(Duration::from_millis(300));
    assert!(busy.is_empty(), "threads still burning CPU: {busy:?}");
}

/// Threads (by name) whose CPU time grew by more than half the interval.
fn threads_busy_over(interval: Duration) -> Vec<String> {
    fn sample() -> Vec<(String, String, u64)> {
        let mut out = Vec::new();
        for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
            let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
                continue;
            };
            let Some(close) = stat.rfind(')') else {
                continue;
            };
            let name = stat[stat.find('(').unwrap_or(0) + 1..close].to_string();
            let fields: Vec<&str> = stat[close + 2..].split(' ').collect();
            let ticks =
                fields[11].parse::<u64>().unwrap_or(0) + fields[12].parse::<u64>().unwrap_or(0);
            out.push((task.file_name().to_string_lossy().into_owned(), name, ticks));
        }
        out
    }
    let before = sample();
    std::thread::sleep(interval);
    let after = sample();
    let ticks_per_sec = 100; // USER_HZ on Linux
    let limit = interval.as_millis() as u64 * ticks_per_sec / 1000 / 2;
    after
        .into_iter()
        .filter_map(|(tid, name, t)| {
            let b = before.iter().find(|(id, _, _)| *id == tid)?.2;
            // Other tests run in parallel on their own threads, named after
            // the test (`module::test`); any other thread (tokio workers and
            // blocking pools, the epoch ticker) must be idle.
            (t.saturating_sub(b) > limit && !name.contains("::")).then(|| format!("{name} ({tid})"))
        })
        .collect()
}

#[tokio::test]
async fn limits_memory_bomb() {
    for profile in [Profile::Compute, Profile::Network] {
        let e = run(LIMITS_MEMORY_BOMB, profile, &[])
            .await
            .unwrap_err()
            .run();
        match e {
            RunError::Memory { limit, requested } => {
                assert_eq!(limit, profile.memory_bytes());
                assert!(requested > limit);
            }
            other => panic!("expected a memory error under {profile}, got {other}"),
        }
        next_call_is_served().await;
    }
}

#[tokio::test]
async fn limits_deep_recursion() {
    let e = run(LIMITS_DEEP_RECURSION, Profile::Posix, &[])
        .await
        .unwrap_err()
        .run();
    assert!(matches!(e, RunError::StackOverflow), "{e}");
    next_call_is_served().await;
}

#[tokio::test]
async fn limits_blocking_sleep() {
    // The guest sleeps inside a host call, where no epoch can reach it; the
    // call is still cut at its budget.
    let start = Instant::now();
    let e = run_with(
        LIMITS_BLOCKING_SLEEP,
        &Grant::profile("compute"),
        with_timeout(300),
    )
    .await
    .unwrap_err()
    .run();
    assert!(matches!(e, RunError::Timeout { .. }), "{e}");
    assert!(start.elapsed() < Duration::from_secs(3));
    next_call_is_served().await;
}

#[tokio::test]
async fn fuel_runs_out_before_time_does() {
    let mut opts = with_timeout(30_000);
    opts.fuel = Some(2_000_000);
    let e = run_with(LIMITS_RUNAWAY_LOOP, &Grant::profile("compute"), opts)
        .await
        .unwrap_err()
        .run();
    assert!(matches!(e, RunError::Fuel { budget: 2_000_000 }), "{e}");
    next_call_is_served().await;
}

#[tokio::test]
async fn profile_timeouts_apply_when_none_is_given() {
    let d = engine()
        .dock(&artifact(CLI_HELLO), &Grant::profile("network"))
        .unwrap();
    assert_eq!(
        d.grant().profile.effective.timeout(),
        Duration::from_secs(30)
    );
}

/// The attack of issue 54 on host memory, at WASI 0.2: header maps filled
/// to wasmtime-wasi-http's 128 KiB each, every one kept. The table's
/// 10 000 entries let a guest hold 1.25 GiB of host memory that way; the
/// store's budget (a quarter of its memory cap: 32 MiB under `network`)
/// stops it with a trap naming the budget, since 0.2's `header-error` has
/// no size case. Outgoing bodies written full and never sent (2 MiB each
/// before) are refused by value once the budget is spent.
#[tokio::test]
async fn limits_http_held() {
    let (e, stdout) = said_before_failing(LIMITS_HTTP_HELD, "fields").await;
    let e = e.expect_err("the maps were all held").run();
    assert!(
        e.to_string()
            .contains("wasi:http host-memory budget exhausted"),
        "{e}: {stdout}"
    );
    // The probe reports every 64 maps; a map of seven 16 KiB values counts
    // about 113 KiB, so 32 MiB holds under 300.
    let held = stdout
        .lines()
        .filter_map(|l| {
            l.strip_prefix("held ")?
                .strip_suffix(" maps")?
                .parse::<usize>()
                .ok()
        })
        .max()
        .unwrap_or_else(|| panic!("no map held before the trap: {stdout}"));
    assert!((129..300).contains(&held), "{held} maps held: {stdout}");

    let (_, stdout) = said_before_failing(LIMITS_HTTP_HELD, "bodies").await;
    let refused_at = stdout
        .strip_prefix("refused at body ")
        .and_then(|rest| rest.split(',').next()?.parse::<usize>().ok())
        .unwrap_or_else(|| panic!("{stdout}"));
    // An unsent body holds at most two 64 KiB chunks: 32 MiB admits 256.
    assert!((128..=256).contains(&refused_at), "{stdout}");
    next_call_is_served().await;
}

/// Runs `probe` under `network` with `mode`, its stdout written through as
/// it comes, so what it said before a trap is kept: the run's result and
/// that stdout.
async fn said_before_failing(probe: &str, mode: &str) -> (Result<RunOutput, Failure>, String) {
    #[derive(Clone, Default)]
    struct Said(Arc<Mutex<Vec<u8>>>);
    impl std::io::Write for Said {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let said = Said::default();
    let mut opts = SessionOptions::new("probe", "default");
    opts.args = vec![mode.to_string()];
    opts.stdout = Output::Shared(SessionOutput::through(said.clone()));
    let result = run_with(probe, &Grant::profile("network"), opts).await;
    let stdout = text(&said.0.lock().unwrap());
    (result, stdout)
}
