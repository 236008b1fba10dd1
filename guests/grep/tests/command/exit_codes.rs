//! `grep`'s exit codes: 0 selected, 1 nothing selected, 2 error.

use crate::support::{grep, scratch_dir, write};

#[test]
fn selecting_a_line_exits_0() {
    assert_eq!(grep(&["a"], "a\n").code, 0);
}

#[test]
fn selecting_nothing_exits_1() {
    assert_eq!(grep(&["z"], "a\n").code, 1);
}

#[test]
fn an_invalid_pattern_is_reported_and_exits_2() {
    let outcome = grep(&["-E", "a(b"], "a\n");
    assert_eq!(outcome.code, 2);
    assert!(outcome.stderr.starts_with("grep: "));
    assert_eq!(grep(&["a\\{1"], "a\n").code, 2);
    assert_eq!(grep(&["[a"], "a\n").code, 2);
}

#[test]
fn back_references_are_reported_as_unsupported() {
    let outcome = grep(&["\\(a\\)\\1"], "aa\n");
    assert_eq!(outcome.code, 2);
    assert!(outcome.stderr.contains("back-references"));
}

#[test]
fn an_unknown_option_exits_2() {
    assert_eq!(grep(&["--what", "a"], "a\n").code, 2);
}

#[test]
fn a_missing_file_exits_2_even_after_a_match() {
    let dir = scratch_dir();
    let file = write(&dir, "f", "hello\n");
    let outcome = grep(&["hello", "/nonexistent/file", &file], "");
    assert_eq!(outcome.stdout, format!("{file}:hello\n"));
    assert_eq!(
        outcome.stderr,
        "grep: /nonexistent/file: No such file or directory\n"
    );
    assert_eq!(outcome.code, 2);
}

#[test]
fn no_messages_hides_missing_file_errors_but_still_exits_2() {
    let outcome = grep(&["-s", "x", "/nonexistent/file"], "");
    assert_eq!((outcome.stderr.as_str(), outcome.code), ("", 2));
}

#[test]
fn quiet_with_a_match_exits_0_despite_errors() {
    let dir = scratch_dir();
    let file = write(&dir, "f", "hello\n");
    assert_eq!(
        grep(&["-q", "hello", "/nonexistent/file", &file], "").code,
        0
    );
    assert_eq!(
        grep(&["-qs", "nomatch", "/nonexistent/file", &file], "").code,
        2
    );
}

#[test]
fn listing_files_without_matches_keeps_the_usual_exit_status() {
    assert_eq!(grep(&["-L", "x"], "x\n").code, 0);
    assert_eq!(grep(&["-L", "x"], "y\n").code, 1);
}
