//! `wbx run` streams a line's stdin and stdout as a shell does: past the
//! capture cap, through an endless pipeline's head, and ended when its
//! own reader leaves. (The pipelines themselves: the core's tests.)

use crate::common::seq;

#[test]
fn wbx_run_streams_its_stdin_past_what_it_could_once_read_up_front() {
    let home = tempfile::tempdir().unwrap();
    let input = seq(9_000_000);
    assert!(input.len() > workbooks::limits::MAX_STDIN_BYTES);
    let out = crate::common::wbx(home.path(), &["run", "wc -l"], input.as_bytes());
    assert!(out.status.success(), "{}", crate::common::text(&out.stderr));
    assert_eq!(crate::common::text(&out.stdout).trim(), "9000000");
}

#[test]
fn wbx_run_prints_the_head_of_an_endless_pipeline_and_exits_zero() {
    let home = tempfile::tempdir().unwrap();
    let out = crate::common::wbx(home.path(), &["run", "seq 1 100000000 | head -n 3"], b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        crate::common::text(&out.stderr)
    );
    assert_eq!(crate::common::text(&out.stdout), "1\n2\n3\n");
}

#[test]
fn wbx_run_passes_a_lines_output_through_past_the_capture_cap() {
    let home = tempfile::tempdir().unwrap();
    // About 21 MiB: written through as produced, as a shell's would be.
    let out = crate::common::wbx(home.path(), &["run", "seq 1 3000000"], b"");
    assert!(out.status.success(), "{}", crate::common::text(&out.stderr));
    assert_eq!(out.stdout.len(), seq(3_000_000).len());
    assert!(out.stdout.ends_with(b"\n2999999\n3000000\n"));
    // Kept for `--json`, the same output is held to the cap, by name, in
    // the JSON error on stdout.
    let out = crate::common::wbx(home.path(), &["run", "--json", "seq 1 3000000"], b"");
    assert!(!out.status.success());
    let err: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let err = err["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        err.contains("seq") && err.contains("output_too_large"),
        "{err}"
    );
}

#[test]
fn wbx_run_ends_an_endless_line_when_its_own_reader_leaves() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let home = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_wbx"))
        .args(["run", "seq 1 100000000000"])
        .env("WB_HOME", home.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "1");
    assert_eq!(lines.next().unwrap().unwrap(), "2");
    // The reader leaves, as `head` would: seq's next write is a broken
    // pipe, well before its fuel or deadline could end it.
    drop(lines);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(141));
}
