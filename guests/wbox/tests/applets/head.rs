//! `head` behaviour.

use crate::support::{Scratch, output, run};

const TWELVE: &str = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n";

#[test]
fn head_prints_ten_lines_by_default() {
    assert_eq!(
        output("head", &[], TWELVE),
        "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n"
    );
}

#[test]
fn head_n_limits_lines_in_every_spelling() {
    assert_eq!(output("head", &["-n", "2"], TWELVE), "1\n2\n");
    assert_eq!(output("head", &["-n2"], TWELVE), "1\n2\n");
    assert_eq!(output("head", &["-2"], TWELVE), "1\n2\n");
    assert_eq!(output("head", &["--lines=2"], TWELVE), "1\n2\n");
    assert_eq!(output("head", &["-n", "0"], TWELVE), "");
}

#[test]
fn head_n_negative_prints_all_but_the_last_lines() {
    assert_eq!(output("head", &["-n", "-9"], TWELVE), "1\n2\n3\n");
    assert_eq!(output("head", &["-n", "-99"], TWELVE), "");
}

#[test]
fn head_c_counts_bytes_and_the_last_option_wins() {
    assert_eq!(output("head", &["-c", "3"], "one\ntwo"), "one");
    assert_eq!(output("head", &["-c", "3"], "a"), "a");
    assert_eq!(output("head", &["-c", "3", "-n", "1"], "one\ntwo"), "one\n");
    assert_eq!(output("head", &["-n", "1", "-c", "3"], "one\ntwo"), "one");
    assert_eq!(output("head", &["-c", "-2"], "abcd"), "ab");
}

#[test]
fn head_keeps_a_missing_final_newline() {
    assert_eq!(output("head", &["-n", "5"], "a\nb"), "a\nb");
}

#[test]
fn head_labels_several_files_with_headers() {
    let scratch = Scratch::new();
    let first = scratch.file("first", b"one\ntwo\nthree\n");
    let second = scratch.file("second", b"foo\nbar\nbaz\n");
    assert_eq!(
        output("head", &["-n", "2", &first, &second], ""),
        format!("==> {first} <==\none\ntwo\n\n==> {second} <==\nfoo\nbar\n")
    );
    assert_eq!(
        output("head", &["-q", "-n", "1", &first, &second], ""),
        "one\nfoo\n"
    );
    assert_eq!(
        output("head", &["-v", "-n", "1"], "x\n"),
        "==> standard input <==\nx\n"
    );
}

#[test]
fn head_reports_missing_files_and_exits_1() {
    let scratch = Scratch::new();
    let present = scratch.file("present", b"ok\n");
    let missing = scratch.path("missing");
    let outcome = run("head", &[&missing, &present], b"");
    assert_eq!(outcome.code, 1);
    assert!(outcome.stderr.contains("No such file or directory"));
    assert_eq!(outcome.text(), format!("==> {present} <==\nok\n"));
}

#[test]
fn head_rejects_a_malformed_count() {
    let outcome = run("head", &["-n", "x"], b"");
    assert_eq!(outcome.code, 2);
    assert!(outcome.stderr.contains("invalid number of lines"));
}

#[test]
fn head_passes_invalid_utf8_through() {
    let outcome = run("head", &["-n", "1"], b"\xff\xfe\n\x80\n");
    assert_eq!(outcome.stdout, b"\xff\xfe\n");
}
