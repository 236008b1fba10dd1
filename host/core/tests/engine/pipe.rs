//! Pipelines stream: every stage runs at once, joined by bounded pipes, a
//! writer whose reader left ends quietly, and each stage keeps its own
//! budgets, as the attacker and the careless user would find them.

use crate::common::seq;
use guest_artifacts::*;
use std::time::Duration;
use workbooks::{CommandError, Engine, LineError, LineOptions, LineOutcome};

guest_artifacts::foreach_pipe!(assert_test_exists);

fn fresh() -> (tempfile::TempDir, Engine) {
    crate::common::engine_with_commands(&[
        ("slow", PIPE_SLOW_READER),
        ("trapper", PIPE_TRAP_MIDSTREAM),
        ("chat", PIPE_STDERR_CHATTER),
        ("kat", CLI_CAT),
    ])
}

/// What `text` printed and did, on the default options; panics if the
/// line failed.
async fn ran(e: &Engine, text: &str) -> LineOutcome {
    match e.commands().run_line(text, LineOptions::default()).await {
        Ok(o) => o,
        Err(err) => panic!("{text}: {err}"),
    }
}

/// The stage `text` failed on, by name, and why; panics if the line did
/// not fail at a stage.
async fn stage_failure(e: &Engine, text: &str, opts: LineOptions) -> (String, CommandError) {
    match e.commands().run_line(text, opts).await {
        Err(LineError::Command { name, error }) => (name, error),
        other => panic!("{text}: {other:?}"),
    }
}

/// The stage of `text` that went over the output cap; panics if the line
/// failed otherwise.
async fn over_cap_at(e: &Engine, text: &str, opts: LineOptions) -> String {
    let (name, error) = stage_failure(e, text, opts).await;
    assert!(
        matches!(error, CommandError::OutputTooLarge(_)),
        "{name}: {error}"
    );
    name
}

#[tokio::test]
async fn seq_into_head_prints_three_lines_and_the_writer_ends_at_its_next_write() {
    let (_h, e) = fresh();
    // Run to completion, seq would need far more than its fuel: only a
    // writer stopped by its reader's exit gets this line an exit code.
    let o = ran(&e, "seq 1 100000000 | head -n 3").await;
    assert_eq!(&o.stdout[..], b"1\n2\n3\n");
    assert_eq!(o.exit, 0);
    assert!(o.stderr.is_empty(), "{:?}", o.stderr);
    assert_eq!(o.stages.len(), 2);
    assert_eq!(o.stages[0].exit, 141, "the writer ends as SIGPIPE ends one");
    assert_eq!(o.stages[1].exit, 0);
    assert!(o.stages[0].stdout_bytes >= 6);
}

#[tokio::test]
async fn a_writer_whose_reader_never_reads_ends_quietly() {
    let (_h, e) = fresh();
    let o = ran(&e, "seq 1 1000000000 | true").await;
    assert_eq!(o.exit, 0);
    assert!(o.stdout.is_empty() && o.stderr.is_empty());
    assert_eq!(o.stages[0].exit, 141);
}

#[tokio::test]
async fn a_pipe_carries_far_more_than_the_output_cap() {
    let (_h, e) = fresh();
    // About 21 MiB between the stages, past the 8 MiB a captured stream
    // may hold.
    let o = ran(&e, "seq 1 3000000 | wc -l").await;
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "3000000");
    assert_eq!(o.stages[0].exit, 0);
    assert_eq!(o.stages[0].stdout_bytes, seq(3_000_000).len() as u64);
}

#[tokio::test]
async fn what_leaves_the_pipeline_is_still_capped() {
    let (_h, e) = fresh();
    // About 15 MiB out of the last stage.
    let name = over_cap_at(
        &e,
        "seq 1 3000000 | head -n 2000000",
        LineOptions::default(),
    )
    .await;
    assert_eq!(name, "head");
}

#[tokio::test]
async fn a_stages_stderr_is_held_to_the_cap_though_its_stdout_is_piped() {
    let (_h, e) = fresh();
    // About 10 MiB of stderr from the middle stage: its stdout streams on
    // to `wc`, but its stderr leaves the line and is capped by name.
    let name = over_cap_at(
        &e,
        "seq 1 1100000 | chat a | wc -l",
        LineOptions {
            stage_fuel: Some(u64::MAX),
            // The cap is the point, not the time: a loaded machine may
            // take longer than the default 30 s per stage.
            stage_timeout: Some(std::time::Duration::from_secs(600)),
            ..LineOptions::default()
        },
    )
    .await;
    assert_eq!(name, "chat");
}

#[tokio::test]
async fn the_output_cap_counts_everything_the_line_writes_not_each_pipeline_alone() {
    let (_h, e) = fresh();
    // Each `seq` writes about 5.3 MiB, under the cap alone; together they
    // pass it, and the one that does is named.
    let one = seq(800_000).len();
    assert!(one < workbooks::limits::MAX_CAPTURED_OUTPUT_BYTES);
    assert!(2 * one > workbooks::limits::MAX_CAPTURED_OUTPUT_BYTES);
    let o = ran(&e, "seq 1 800000").await;
    assert_eq!(o.stdout.len(), one);
    let name = over_cap_at(&e, "seq 1 800000; seq 1 800000", LineOptions::default()).await;
    assert_eq!(name, "seq");
}

#[tokio::test]
async fn the_pipelines_of_a_line_write_its_stdout_in_order_and_are_counted() {
    let (_h, e) = fresh();
    let o = ran(
        &e,
        "echo one; seq 1 3 | tail -n 1; echo two > /dev/null; echo three",
    )
    .await;
    assert_eq!(crate::common::text(&o.stdout), "one\n3\nthree\n");
    let written: Vec<(String, u64)> = o
        .stages
        .iter()
        .map(|s| (s.argv.join(" "), s.stdout_bytes))
        .collect();
    assert_eq!(
        written,
        [
            ("echo one".to_string(), 4),
            ("seq 1 3".to_string(), 6),
            ("tail -n 1".to_string(), 2),
            ("echo two".to_string(), 4),
            ("echo three".to_string(), 6),
        ]
    );
}

#[tokio::test]
/// A slow reader behind a fast writer loses nothing.
async fn pipe_slow_reader() {
    let (_h, e) = fresh();
    let o = ran(&e, "seq 1 300000 | slow").await;
    let text = seq(300_000);
    let sum = text
        .bytes()
        .fold(0u64, |s, b| s.wrapping_mul(31).wrapping_add(u64::from(b)));
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        format!("{} 300000 {sum}\n", text.len())
    );
}

#[tokio::test]
/// A stage that traps mid-stream fails the line by name and stops the rest.
async fn pipe_trap_midstream() {
    let (_h, e) = fresh();
    let (name, error) = stage_failure(
        &e,
        "seq 1 100000000 | trapper | wc -l",
        LineOptions::default(),
    )
    .await;
    assert!(
        name == "trapper" && matches!(error, CommandError::Trap(_)),
        "{name}: {error}"
    );
}

#[tokio::test]
async fn an_infinite_producer_is_stopped_by_its_own_fuel() {
    let (_h, e) = fresh();
    let opts = LineOptions {
        stage_fuel: Some(50_000_000),
        ..LineOptions::default()
    };
    let (name, error) = stage_failure(&e, "seq 1 1000000000000 | wc -l", opts).await;
    assert!(
        name == "seq" && matches!(error, CommandError::Fuel),
        "{name}: {error}"
    );
}

#[tokio::test]
async fn an_infinite_producer_is_stopped_by_its_own_deadline() {
    let (_h, e) = fresh();
    let opts = LineOptions {
        stage_fuel: Some(u64::MAX),
        stage_timeout: Some(Duration::from_millis(300)),
        ..LineOptions::default()
    };
    let (name, error) = stage_failure(&e, "seq 1 1000000000000 | wc -l", opts).await;
    // Both stages run out of the same 300 ms; on a loaded machine either
    // may be polled past its deadline first, and the line names that one.
    assert!(
        (name == "seq" || name == "wc")
            && error == CommandError::Timeout(Duration::from_millis(300)),
        "{name}: {error}"
    );
}

#[tokio::test]
/// Stderr from several stages at once arrives whole.
async fn pipe_stderr_chatter() {
    let (_h, e) = fresh();
    let o = ran(&e, "seq 1 2000 | chat a | chat b | chat c").await;
    assert_eq!(String::from_utf8_lossy(&o.stdout), seq(2000));
    let stderr = String::from_utf8_lossy(&o.stderr);
    for tag in ["a", "b", "c"] {
        let got: Vec<&str> = stderr
            .lines()
            .filter(|l| l.split(' ').next() == Some(tag))
            .collect();
        let want: Vec<String> = (0..2000).map(|n| format!("{tag} {n}")).collect();
        assert_eq!(got, want, "stage {tag}'s stderr");
    }
    assert_eq!(stderr.lines().count(), 6000);
}

#[tokio::test]
async fn the_line_stdin_streams_into_the_first_stage_past_any_pipe_capacity() {
    let (_h, e) = fresh();
    let input = seq(400_000);
    let opts = LineOptions {
        stdin: input.clone().into(),
        ..LineOptions::default()
    };
    let o = e.commands().run_line("kat | wc -c", opts).await.unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        input.len().to_string()
    );
}

#[tokio::test]
async fn a_stage_with_its_own_input_leaves_the_writer_before_it_writing_into_nothing() {
    let (_h, e) = fresh();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.txt"), "from the file\n").unwrap();
    let opts = LineOptions {
        dirs: vec![workbooks::Preopen {
            host: dir.path().into(),
            guest: "/work".into(),
            read_only: true,
        }],
        ..LineOptions::default()
    };
    let o = e
        .commands()
        .run_line("seq 1 1000000000 | kat < /work/in.txt", opts)
        .await
        .unwrap();
    assert_eq!(&o.stdout[..], b"from the file\n");
    assert_eq!(o.stages[0].exit, 141);
}

#[tokio::test]
async fn an_unknown_stage_anywhere_refuses_the_whole_line_by_name() {
    let (_h, e) = fresh();
    let (name, error) = stage_failure(
        &e,
        "seq 1 3 | kat | no-such-command",
        LineOptions::default(),
    )
    .await;
    assert!(
        name == "no-such-command" && matches!(error, CommandError::Unknown(_)),
        "{name}: {error}"
    );
}

#[tokio::test]
async fn a_line_past_the_stage_limit_is_refused_with_the_limit() {
    let (_h, e) = fresh();
    let text = vec!["true"; workbooks::limits::MAX_PIPELINE_STAGES + 1].join(" | ");
    let err = e
        .commands()
        .run_line(&text, LineOptions::default())
        .await
        .unwrap_err();
    let LineError::Command {
        error: CommandError::Refused(why),
        ..
    } = &err
    else {
        panic!("{err}");
    };
    assert!(why.contains("at most 32 stages"), "{why}");
}
