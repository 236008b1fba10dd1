//! `cat` behaviour.

use crate::support::{Scratch, output, run};

#[test]
fn cat_copies_stdin_byte_for_byte_without_adding_a_newline() {
    assert_eq!(output("cat", &[], "one\ntwo"), "one\ntwo");
    assert_eq!(output("cat", &[], ""), "");
}

#[test]
fn cat_keeps_invalid_utf8_intact() {
    let data = b"\xff\xfe\x00 ok\n\xc3";
    assert_eq!(run("cat", &[], data).stdout, data);
    assert_eq!(
        run("cat", &["-n"], data).stdout,
        b"     1\t\xff\xfe\x00 ok\n     2\t\xc3"
    );
}

#[test]
fn cat_joins_files_and_stdin_in_argument_order() {
    let scratch = Scratch::new();
    let first = scratch.file("one", b"one\n");
    let second = scratch.file("two", b"two\n");
    assert_eq!(
        output("cat", &[&first, "-", &second], "zero\n"),
        "one\nzero\ntwo\n"
    );
}

#[test]
fn cat_reports_a_missing_file_continues_and_exits_1() {
    let scratch = Scratch::new();
    let first = scratch.file("one", b"one\n");
    let missing = scratch.path("missing");
    let outcome = run("cat", &[&first, &missing, &first], b"");
    assert_eq!(outcome.code, 1);
    assert_eq!(outcome.text(), "one\none\n");
    assert_eq!(
        outcome.stderr,
        format!("cat: {missing}: No such file or directory\n")
    );
}

#[test]
fn cat_n_numbers_every_line_and_continues_across_files() {
    let scratch = Scratch::new();
    let file = scratch.file("f", b"c\n");
    assert_eq!(
        output("cat", &["-n", "-", &file], "a\n\nb\n"),
        "     1\ta\n     2\t\n     3\tb\n     4\tc\n"
    );
}

#[test]
fn cat_b_numbers_only_nonblank_lines() {
    assert_eq!(
        output("cat", &["-b"], "a\n\nb\n"),
        "     1\ta\n\n     2\tb\n"
    );
}

#[test]
fn cat_s_squeezes_runs_of_blank_lines() {
    assert_eq!(output("cat", &["-s"], "a\n\n\n\nb\n\n"), "a\n\nb\n\n");
}

#[test]
fn cat_shows_ends_tabs_and_nonprinting_bytes() {
    let outcome = run("cat", &["-A"], b"a\tb\x01\x7f\x80\n");
    assert_eq!(outcome.stdout, b"a^Ib^A^?M-^@$\n");
    assert_eq!(output("cat", &["-E"], "x\ny"), "x$\ny");
    assert_eq!(output("cat", &["-T"], "\t"), "^I");
}

#[test]
fn cat_numbering_continues_a_line_split_across_files() {
    let scratch = Scratch::new();
    let head = scratch.file("head", b"par");
    let tail = scratch.file("tail", b"tial\nnext\n");
    assert_eq!(
        output("cat", &["-n", &head, &tail], ""),
        "     1\tpartial\n     2\tnext\n"
    );
}

#[test]
fn cat_handles_input_larger_than_one_buffer() {
    let line = "x".repeat(99) + "\n";
    let input = line.repeat(3000);
    let numbered = output("cat", &["-n"], &input);
    assert_eq!(numbered.lines().count(), 3000);
    assert!(numbered.ends_with(&format!("  3000\t{}", line)));
}
