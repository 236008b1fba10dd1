//! `echo` behaviour.

use crate::support::{output, run};

#[test]
fn echo_joins_arguments_with_single_spaces_and_a_newline() {
    assert_eq!(
        output("echo", &["one", "two  three"], ""),
        "one two  three\n"
    );
    assert_eq!(output("echo", &[], ""), "\n");
}

#[test]
fn echo_n_omits_the_newline() {
    assert_eq!(output("echo", &["-n", "hi"], ""), "hi");
    assert_eq!(output("echo", &["-n"], ""), "");
}

#[test]
fn echo_only_treats_leading_option_words_as_options() {
    assert_eq!(output("echo", &["hi", "-n"], ""), "hi -n\n");
    assert_eq!(output("echo", &["--hello"], ""), "--hello\n");
    assert_eq!(output("echo", &["-nex", "hello"], ""), "-nex hello\n");
    assert_eq!(output("echo", &["-"], ""), "-\n");
}

#[test]
fn echo_e_interprets_the_common_escapes() {
    assert_eq!(output("echo", &["-e", r"a\tb\nc\\d"], ""), "a\tb\nc\\d\n");
    let outcome = run("echo", &["-e", r"\a\b\e\f\r\v"], b"");
    assert_eq!(outcome.stdout, b"\x07\x08\x1b\x0c\r\x0b\n");
}

#[test]
fn echo_e_understands_octal_and_hex_bytes() {
    assert_eq!(output("echo", &["-ne", r"\0101\060\x41\x4a"], ""), "A0AJ");
    assert_eq!(output("echo", &["-ne", r"one\079two"], ""), "one\x079two");
    assert_eq!(output("echo", &["-e", r"\xvd"], ""), "\\xvd\n");
    let outcome = run("echo", &["-ne", r"a\0b\0"], b"");
    assert_eq!(outcome.stdout, b"a\x00b\x00");
    let outcome = run("echo", &["-ne", r"\xff"], b"");
    assert_eq!(outcome.stdout, b"\xff");
}

#[test]
fn echo_e_backslash_c_stops_all_output() {
    assert_eq!(output("echo", &["-e", r"ab\cde", "more"], ""), "ab");
}

#[test]
fn echo_keeps_unknown_escapes_and_a_trailing_backslash() {
    assert_eq!(output("echo", &["-e", r"\p", "x\\"], ""), "\\p x\\\n");
}

#[test]
fn echo_capital_e_turns_escapes_back_off() {
    assert_eq!(output("echo", &["-eE", r"a\tb"], ""), "a\\tb\n");
    assert_eq!(output("echo", &[r"a\tb"], ""), "a\\tb\n");
}
