//! `tail` behaviour.

use crate::support::{Scratch, output, run};

const ELEVEN: &str = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nten\neleven\n";

#[test]
fn tail_prints_the_last_ten_lines_by_default() {
    assert!(output("tail", &[], ELEVEN).starts_with("two\n"));
    assert_eq!(output("tail", &[], "one"), "one");
}

#[test]
fn tail_n_counts_lines_from_the_end() {
    assert_eq!(output("tail", &["-n", "3"], ELEVEN), "nine\nten\neleven\n");
    assert_eq!(output("tail", &["-n", "999"], ELEVEN), ELEVEN);
    assert_eq!(output("tail", &["-1"], ELEVEN), "eleven\n");
    assert_eq!(output("tail", &["-n", "0"], ELEVEN), "");
}

#[test]
fn tail_n_plus_starts_at_a_line_number() {
    assert!(output("tail", &["-n", "+3"], ELEVEN).starts_with("three\nfour\n"));
    assert_eq!(output("tail", &["-n", "+999"], ELEVEN), "");
    assert_eq!(output("tail", &["-n", "+0"], "a\nb\n"), "a\nb\n");
}

#[test]
fn tail_c_counts_bytes_from_the_end_or_from_a_position() {
    assert_eq!(
        output("tail", &["-c", "27"], ELEVEN),
        "even\neight\nnine\nten\neleven\n"
    );
    assert_eq!(
        output("tail", &["-c", "+27"], ELEVEN),
        "x\nseven\neight\nnine\nten\neleven\n"
    );
    assert_eq!(output("tail", &["-c", "+55"], "qw"), "");
}

#[test]
fn tail_keeps_a_missing_final_newline() {
    assert_eq!(output("tail", &["-n", "1"], "a\nb\nc"), "c");
    assert_eq!(output("tail", &["-n", "2"], "a\nb\nc"), "b\nc");
}

#[test]
fn tail_reads_regular_files_from_the_end() {
    let scratch = Scratch::new();
    let body: String = (1..=50_000).map(|n| format!("{n}\n")).collect();
    let file = scratch.file("big", body.as_bytes());
    assert_eq!(output("tail", &["-n", "2", &file], ""), "49999\n50000\n");
    assert_eq!(output("tail", &["-c", "6", &file], ""), "50000\n");
    let unterminated = scratch.file("open", b"a\nb\nc");
    assert_eq!(output("tail", &["-n", "2", &unterminated], ""), "b\nc");
}

#[test]
fn tail_labels_several_files_with_headers() {
    let scratch = Scratch::new();
    let first = scratch.file("first", b"1\n2\n");
    let second = scratch.file("second", b"3\n");
    assert_eq!(
        output("tail", &["-n", "1", &first, &second], ""),
        format!("==> {first} <==\n2\n\n==> {second} <==\n3\n")
    );
}

#[test]
fn tail_reports_missing_files_and_exits_1() {
    let scratch = Scratch::new();
    let missing = scratch.path("missing");
    let outcome = run("tail", &[&missing], b"");
    assert_eq!(outcome.code, 1);
    assert!(outcome.stderr.starts_with("tail: "));
}

#[test]
fn tail_passes_invalid_utf8_through() {
    let outcome = run("tail", &["-n", "1"], b"\xff\n\xfe\x00");
    assert_eq!(outcome.stdout, b"\xfe\x00");
}
