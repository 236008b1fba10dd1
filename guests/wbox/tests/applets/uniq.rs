//! `uniq` behaviour.

use crate::support::{Scratch, output, run};

const RUNS: &str = "one\ntwo\ntwo\nthree\nthree\nthree\n";

#[test]
fn uniq_collapses_adjacent_duplicates_only() {
    assert_eq!(output("uniq", &[], RUNS), "one\ntwo\nthree\n");
    assert_eq!(output("uniq", &[], "a\nb\na\n"), "a\nb\na\n");
    assert_eq!(output("uniq", &[], ""), "");
}

#[test]
fn uniq_ends_the_last_line_with_a_newline() {
    assert_eq!(output("uniq", &[], "a\na"), "a\n");
}

#[test]
fn uniq_c_prefixes_counts_like_gnu() {
    assert_eq!(
        output("uniq", &["-c"], RUNS),
        "      1 one\n      2 two\n      3 three\n"
    );
}

#[test]
fn uniq_d_and_u_select_repeated_or_unique_lines() {
    assert_eq!(output("uniq", &["-d"], RUNS), "two\nthree\n");
    assert_eq!(output("uniq", &["-u"], RUNS), "one\n");
    assert_eq!(output("uniq", &["-d", "-u"], RUNS), "");
    assert_eq!(output("uniq", &["-D"], "a\na\nb\nc\nc\n"), "a\na\nc\nc\n");
}

#[test]
fn uniq_i_ignores_case() {
    assert_eq!(output("uniq", &["-i"], "a\nA\nb\n"), "a\nb\n");
    assert_eq!(output("uniq", &["-ci"], "a\nA\n"), "      2 a\n");
}

#[test]
fn uniq_f_s_and_w_limit_the_compared_part() {
    assert_eq!(
        output(
            "uniq",
            &["-f2", "-s", "3"],
            "cc\tdd\tee8\nbb\tcc\tdd8\naa\tbb\tcc9\n"
        ),
        "cc\tdd\tee8\naa\tbb\tcc9\n"
    );
    assert_eq!(
        output("uniq", &["-f", "1"], "x a\ny a\nz b\n"),
        "x a\nz b\n"
    );
    assert_eq!(output("uniq", &["-s", "1"], "xa\nya\nzb\n"), "xa\nzb\n");
    assert_eq!(output("uniq", &["-w", "2"], "cc1\ncc2\ncc3\n"), "cc1\n");
    assert_eq!(
        output("uniq", &["-s", "2", "-w", "2"], "aaccaa\naaccbb\nbbccaa\n"),
        "aaccaa\n"
    );
}

#[test]
fn uniq_reads_a_file_and_writes_an_output_file() {
    let scratch = Scratch::new();
    let input = scratch.file("in", RUNS.as_bytes());
    let target = scratch.path("out");
    let outcome = run("uniq", &[&input, &target], b"");
    assert_eq!(outcome.code, 0);
    assert!(outcome.stdout.is_empty());
    assert_eq!(std::fs::read(&target).unwrap(), b"one\ntwo\nthree\n");
    assert_eq!(output("uniq", &[&input, "-"], ""), "one\ntwo\nthree\n");
    assert!(scratch.root().exists());
}

#[test]
fn uniq_reports_a_missing_input_with_exit_1() {
    let scratch = Scratch::new();
    let outcome = run("uniq", &[&scratch.path("missing")], b"");
    assert_eq!(outcome.code, 1);
    assert!(outcome.stderr.contains("No such file or directory"));
}

#[test]
fn uniq_compares_invalid_utf8_as_bytes() {
    assert_eq!(
        run("uniq", &["-c"], b"\xff\n\xff\n\xfe\n").stdout,
        b"      2 \xff\n      1 \xfe\n"
    );
}

#[test]
fn uniq_rejects_a_bad_number() {
    assert_eq!(run("uniq", &["-f", "x"], b"").code, 2);
}
