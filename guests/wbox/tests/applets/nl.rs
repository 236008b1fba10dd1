//! `nl` behaviour.

use crate::support::{Scratch, output, run};

const THREE: &str = "one\ntwo\nthree\n";

#[test]
fn nl_numbers_nonempty_lines_right_aligned_with_a_tab() {
    assert_eq!(
        output("nl", &[], THREE),
        "     1\tone\n     2\ttwo\n     3\tthree\n"
    );
    assert_eq!(
        output("nl", &[], "a\n\nb\n"),
        "     1\ta\n       \n     2\tb\n"
    );
}

#[test]
fn nl_b_chooses_which_lines_get_numbers() {
    assert_eq!(
        output("nl", &["-b", "a"], "a\n\nb\n"),
        "     1\ta\n     2\t\n     3\tb\n"
    );
    assert_eq!(output("nl", &["-bn"], "a\nb\n"), "       a\n       b\n");
    assert_eq!(
        output("nl", &["-sook", "-bpoing"], "one\nboing\nsproingy\n"),
        "         one\n     1ookboing\n     2ooksproingy\n"
    );
    assert_eq!(
        output("nl", &["-bp^t"], THREE),
        "       one\n     1\ttwo\n     2\tthree\n"
    );
}

#[test]
fn nl_n_chooses_left_right_or_zero_padded_numbers() {
    assert_eq!(output("nl", &["-nln"], "a\n"), "1     \ta\n");
    assert_eq!(output("nl", &["-nrz"], "a\n"), "000001\ta\n");
    assert_eq!(output("nl", &["-w3", "-nrz"], "a\n"), "001\ta\n");
    assert_eq!(output("nl", &["-n", "rn"], "a\n"), "     1\ta\n");
}

#[test]
fn nl_w_s_v_and_i_shape_the_numbers() {
    assert_eq!(
        output("nl", &["-w", "2", "-s", ": "], "a\nb\n"),
        " 1: a\n 2: b\n"
    );
    assert_eq!(
        output("nl", &["-v", "-1"], THREE),
        "    -1\tone\n     0\ttwo\n     1\tthree\n"
    );
    assert_eq!(
        output("nl", &["-i", "10", "-v", "5"], "a\nb\n"),
        "     5\ta\n    15\tb\n"
    );
    assert_eq!(
        output("nl", &["-w", "1", "-v", "42"], "line\n"),
        "42\tline\n"
    );
}

#[test]
fn nl_l_numbers_only_every_nth_blank_line_in_a_run() {
    assert_eq!(
        output("nl", &["-ba", "-l2", "-w2"], "one\n\n\ntwo\n\n\n\n"),
        " 1\tone\n   \n 2\t\n 3\ttwo\n   \n 4\t\n   \n"
    );
}

#[test]
fn nl_section_delimiters_restart_numbering() {
    let input = "a\n\\:\\:\\:\nhead\n\\:\\:\nbody\n\\:\nfoot\n";
    assert_eq!(
        output("nl", &["-ha", "-fa"], input),
        "     1\ta\n\n     1\thead\n\n     1\tbody\n\n     1\tfoot\n"
    );
    let input = "a\n\\:\\:\nb\n";
    assert_eq!(output("nl", &["-p"], input), "     1\ta\n\n     2\tb\n");
}

#[test]
fn nl_treats_all_inputs_as_one_stream() {
    let scratch = Scratch::new();
    let file = scratch.file("f", b"x\n");
    assert_eq!(output("nl", &["-", &file], "w\n"), "     1\tw\n     2\tx\n");
}

#[test]
fn nl_ends_the_last_line_with_a_newline() {
    assert_eq!(output("nl", &[], "a"), "     1\ta\n");
}

#[test]
fn nl_rejects_bad_styles_formats_and_widths() {
    for args in [&["-b", "q"][..], &["-n", "xx"], &["-w", "0"], &["-v", "x"]] {
        assert_eq!(run("nl", args, b"").code, 2, "{args:?}");
    }
}

#[test]
fn nl_keeps_invalid_utf8_in_lines() {
    assert_eq!(run("nl", &[], b"\xff\n").stdout, b"     1\t\xff\n");
}
