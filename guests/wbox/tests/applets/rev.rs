//! `rev` behaviour.

use crate::support::{Scratch, output, run};

#[test]
fn rev_reverses_each_line_and_keeps_line_ends() {
    assert_eq!(output("rev", &[], "abc\n\nde\n"), "cba\n\ned\n");
    assert_eq!(output("rev", &[], "line 1\n\nline 3"), "1 enil\n\n3 enil");
}

#[test]
fn rev_reverses_characters_not_bytes_in_utf8() {
    assert_eq!(output("rev", &[], "héllo\n"), "olléh\n");
}

#[test]
fn rev_reverses_bytes_of_invalid_utf8_and_keeps_nul() {
    assert_eq!(run("rev", &[], b"a\xffb\n").stdout, b"b\xffa\n");
    assert_eq!(run("rev", &[], b"a\x00b\n").stdout, b"b\x00a\n");
}

#[test]
fn rev_reads_files_and_reports_missing_ones() {
    let scratch = Scratch::new();
    let file = scratch.file("f", b"one\n");
    let missing = scratch.path("missing");
    let outcome = run("rev", &[&file, &missing, "-"], b"zero\n");
    assert_eq!(outcome.text(), "eno\norez\n");
    assert_eq!(outcome.code, 1);
    assert!(
        outcome
            .stderr
            .contains("missing: No such file or directory")
    );
}
