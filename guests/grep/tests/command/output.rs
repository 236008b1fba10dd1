//! How the output options shape what `grep` prints.

use crate::support::{grep, lines};

const TEXT: &str = "this is test\nthis is test2\ntest case\n";

#[test]
fn count_prints_the_number_of_selected_lines() {
    assert_eq!(lines(&["-c", "is"], TEXT), "2\n");
    assert_eq!(lines(&["-vc", "is"], TEXT), "1\n");
    assert_eq!(lines(&["-co", "is"], TEXT), "2\n");
}

#[test]
fn line_number_prefixes_each_line_with_its_number() {
    assert_eq!(lines(&["-n", "case"], TEXT), "3:test case\n");
    assert_eq!(lines(&["-no", "is"], "a\nthis is\n"), "2:is\n2:is\n");
}

#[test]
fn byte_offset_prefixes_the_offset_of_the_line_or_match() {
    assert_eq!(
        lines(&["-b", "is"], TEXT),
        "0:this is test\n13:this is test2\n"
    );
    assert_eq!(lines(&["-bo", "aaa"], "baaaa\n"), "1:aaa\n");
}

#[test]
fn with_filename_prefixes_the_name_even_for_stdin() {
    assert_eq!(lines(&["-H", "case"], TEXT), "(standard input):test case\n");
}

#[test]
fn max_count_stops_after_that_many_selected_lines() {
    assert_eq!(lines(&["-m", "1", "is"], TEXT), "this is test\n");
    assert_eq!(lines(&["-m1", "-c", "is"], TEXT), "1\n");
}

#[test]
fn after_context_prints_following_lines_and_separates_groups() {
    let input = "yes\nno\nno\nno\nyes\nno\n";
    assert_eq!(lines(&["-A", "1", "yes"], input), "yes\nno\n--\nyes\nno\n");
}

#[test]
fn before_context_prints_preceding_lines() {
    assert_eq!(lines(&["-B1", "yes"], "no\nno\nyes\n"), "no\nyes\n");
}

#[test]
fn context_marks_context_lines_with_a_dash() {
    let outcome = lines(&["-nC", "1", "two"], "one\ntwo\nthree\nfour\n");
    assert_eq!(outcome, "1-one\n2:two\n3-three\n");
}

#[test]
fn quiet_prints_nothing() {
    let outcome = grep(&["-q", "is"], TEXT);
    assert_eq!((outcome.stdout.as_str(), outcome.code), ("", 0));
}

#[test]
fn binary_input_is_summarised_on_stderr_unless_treated_as_text() {
    let outcome = grep(&["two"], "one\0two\n");
    assert_eq!(outcome.stdout, "");
    assert_eq!(
        outcome.stderr,
        "grep: (standard input): binary file matches\n"
    );
    assert_eq!(outcome.code, 0);
    assert_eq!(lines(&["-a", "two"], "one\0two\n"), "one\0two\n");
}

#[test]
fn help_prints_usage() {
    assert!(lines(&["--help"], "").starts_with("Usage: grep"));
}
