//! `tr` behaviour.

use crate::support::{output, run};

#[test]
fn tr_maps_set1_onto_set2() {
    assert_eq!(output("tr", &["1", "2"], "123123123"), "223223223");
    assert_eq!(
        output("tr", &["a-z", "A-Z"], "hello, world\n"),
        "HELLO, WORLD\n"
    );
}

#[test]
fn tr_pads_set2_with_its_last_character() {
    assert_eq!(output("tr", &["a-e", "xy"], "abcde"), "xyyyy");
}

#[test]
fn tr_t_truncates_set1_instead() {
    assert_eq!(output("tr", &["-t", "1234", "567"], "1234"), "5674");
}

#[test]
fn tr_d_deletes_and_c_complements() {
    assert_eq!(output("tr", &["-d", "1"], "123123123"), "232323");
    assert_eq!(output("tr", &["-cd", "[0-9A-F]"], "19AFH\n"), "19AF");
    assert_eq!(output("tr", &["-c", "a-z\n", "_"], "ab1c\n"), "ab_c\n");
}

#[test]
fn tr_s_squeezes_repeats_after_translation() {
    assert_eq!(output("tr", &["-s", "1"], "111222333111"), "12223331");
    assert_eq!(output("tr", &["-s", " "], "a   b  c"), "a b c");
    assert_eq!(output("tr", &["-s", "a-c", "x"], "aabbcc\n"), "x\n");
    assert_eq!(
        output("tr", &["-ds", "l", "o"], "hellooo wool\n"),
        "heo wo\n"
    );
}

#[test]
fn tr_understands_escapes_and_octal() {
    assert_eq!(output("tr", &["\\n", " "], "a\nb\n"), "a b ");
    assert_eq!(output("tr", &["\\t\\\\", "T/"], "a\tb\\"), "aTb/");
    assert_eq!(output("tr", &["\\141", "X"], "abc"), "Xbc");
}

#[test]
fn tr_expands_character_classes_in_order() {
    assert_eq!(
        output("tr", &["[:lower:]", "[:upper:]"], "Hello\n"),
        "HELLO\n"
    );
    assert_eq!(
        output("tr", &["[:digit:]y-z", "111111111123"], "789abcxyz\n"),
        "111abcx23\n"
    );
    assert_eq!(
        output(
            "tr",
            &["[:xdigit:]Gg", "1111111151242222333330xX"],
            "#0123456789ABCDEFGabcdefg\n"
        ),
        "#1111111151242222x333330X\n"
    );
    assert_eq!(
        output("tr", &["-d", "[:space:][:punct:]"], "a, b!\tc\n"),
        "abc"
    );
    assert_eq!(output("tr", &["[:alpha:]", "x"], "a1B"), "x1x");
    assert_eq!(output("tr", &["[:alnum:]", "."], "a1-"), "..-");
}

#[test]
fn tr_treats_a_lone_bracket_as_a_literal() {
    assert_eq!(output("tr", &["[q-z]", "_Q-Z+"], "[qwe]"), "_QWe+");
}

#[test]
fn tr_repeats_fill_set2() {
    assert_eq!(output("tr", &["a-e", "[x*]Y"], "abcde"), "xxxxY");
    assert_eq!(output("tr", &["a-e", "[x*2]Y"], "abcde"), "xxYYY");
}

#[test]
fn tr_leaves_invalid_utf8_bytes_it_does_not_touch() {
    assert_eq!(run("tr", &["a", "b"], b"\xffa\xfe").stdout, b"\xffb\xfe");
    assert_eq!(run("tr", &["-d", "\\377"], b"\xffa\xff").stdout, b"a");
}

#[test]
fn tr_rejects_wrong_operand_counts_and_bad_sets() {
    assert_eq!(run("tr", &[], b"").code, 2);
    assert_eq!(run("tr", &["a"], b"").code, 2);
    assert_eq!(run("tr", &["-d", "a", "b"], b"").code, 2);
    assert_eq!(run("tr", &["z-a", "b"], b"").code, 1);
    assert_eq!(run("tr", &["[:bogus:]", "b"], b"").code, 1);
}

#[test]
fn tr_does_not_take_options_after_the_first_set() {
    assert_eq!(output("tr", &["a", "-x"], "abc"), "-bc");
}
