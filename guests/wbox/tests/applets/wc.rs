//! `wc` behaviour.

use crate::support::{Scratch, output, run};

#[test]
fn wc_prints_lines_words_and_bytes_in_seven_wide_columns() {
    assert_eq!(output("wc", &[], "a b\nc"), "      1       3       5\n");
    assert_eq!(output("wc", &[], ""), "      0       0       0\n");
}

#[test]
fn wc_prints_a_single_count_without_padding() {
    assert_eq!(output("wc", &["-l"], "a\nb\n"), "2\n");
    assert_eq!(output("wc", &["-w"], " one  two\tthree\n"), "3\n");
    assert_eq!(output("wc", &["-c"], "a b\nc"), "5\n");
}

#[test]
fn wc_keeps_gnu_column_order_whatever_the_flag_order() {
    assert_eq!(output("wc", &["-cl"], "a b\nc"), "      1       5\n");
    assert_eq!(output("wc", &["-wl"], "a b\nc"), "      1       3\n");
}

#[test]
fn wc_m_counts_utf8_characters() {
    assert_eq!(output("wc", &["-m"], "héllo\n"), "6\n");
    assert_eq!(output("wc", &["-mc"], "世界"), "      2       6\n");
    assert_eq!(run("wc", &["-m"], b"\xff\xfea\n").text(), "2\n");
}

#[test]
fn wc_capital_l_reports_the_widest_line() {
    assert_eq!(output("wc", &["-L"], "a\nabc\nab"), "3\n");
    assert_eq!(output("wc", &["-L"], "\ta\n"), "9\n");
    assert_eq!(output("wc", &["-L"], "世界\n"), "4\n");
}

#[test]
fn wc_names_files_and_adds_a_total_line() {
    let scratch = Scratch::new();
    let file = scratch.file("f", b"some words\t. \n\nsome\nlines\n");
    assert_eq!(output("wc", &["-l", &file], ""), format!("4 {file}\n"));
    assert_eq!(
        output("wc", &[&file, "-"], "a b"),
        format!(
            "      4       5      26 {file}\n      0       2       3 -\n      4       7      29 total\n"
        )
    );
}

#[test]
fn wc_reports_missing_files_but_still_totals_the_rest() {
    let scratch = Scratch::new();
    let file = scratch.file("f", b"x\n");
    let missing = scratch.path("missing");
    let outcome = run("wc", &["-l", &missing, &file], b"");
    assert_eq!(outcome.code, 1);
    assert_eq!(outcome.text(), format!("1 {file}\n1 total\n"));
    assert!(outcome.stderr.contains("No such file or directory"));
}

#[test]
fn wc_counts_invalid_utf8_bytes() {
    let outcome = run("wc", &[], b"\xff\xfe \x80\n");
    assert_eq!(outcome.text(), "      1       2       5\n");
}

#[test]
fn wc_counts_large_inputs_across_buffers() {
    let input = "word ".repeat(100_000) + "\n";
    assert_eq!(output("wc", &[], &input), "      1  100000  500001\n");
}
