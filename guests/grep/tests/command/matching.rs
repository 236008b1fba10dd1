//! Which lines and which parts of lines the pattern syntaxes select.

use crate::support::{grep_bytes, lines};

const WORDS: &str = "one\ntwo\nthree\n";

#[test]
fn a_plain_pattern_selects_lines_containing_it() {
    assert_eq!(lines(&["t"], WORDS), "two\nthree\n");
}

#[test]
fn basic_syntax_treats_bare_group_and_repeat_characters_literally() {
    let input = "uno|dos\nuno\na+b\nab\n(x)\n";
    assert_eq!(lines(&["uno|dos"], input), "uno|dos\n");
    assert_eq!(lines(&["a+b"], input), "a+b\n");
    assert_eq!(lines(&["(x)"], input), "(x)\n");
}

#[test]
fn basic_syntax_uses_backslashed_operators() {
    let input = "uno\ndos\ntres\nabab\naab\n";
    assert_eq!(lines(&["uno\\|dos"], input), "uno\ndos\n");
    assert_eq!(lines(&["^\\(ab\\)\\{2\\}$"], input), "abab\n");
    assert_eq!(lines(&["^a\\+b$"], input), "aab\n");
    assert_eq!(lines(&["^d\\?os"], input), "dos\n");
}

#[test]
fn basic_syntax_takes_a_leading_star_literally() {
    assert_eq!(lines(&["*a"], "*a\nba\n"), "*a\n");
    assert_eq!(lines(&["\\(*a\\)"], "*a\nba\n"), "*a\n");
}

#[test]
fn basic_syntax_anchors_only_at_the_ends_of_an_expression() {
    assert_eq!(lines(&["a^"], "a^b\nb^a\n"), "a^b\n");
    assert_eq!(lines(&["$b"], "a$b\nb$a\n"), "a$b\n");
    assert_eq!(lines(&["^b"], "a$b\nb$a\n"), "b$a\n");
}

#[test]
fn extended_syntax_uses_bare_operators() {
    let input = "uno\ndos\nuno|dos\nfoo\n";
    assert_eq!(lines(&["-E", "uno|dos"], input), "uno\ndos\nuno|dos\n");
    assert_eq!(lines(&["-E", "^fo+$"], input), "foo\n");
    assert_eq!(
        lines(&["--extended-regexp", "^(d|f)o"], input),
        "dos\nfoo\n"
    );
}

#[test]
fn extended_syntax_takes_a_brace_that_is_not_an_interval_literally() {
    assert_eq!(lines(&["-E", "a{"], "a{\nab\n"), "a{\n");
    assert_eq!(lines(&["-E", "{1"], "{1\n"), "{1\n");
    assert_eq!(lines(&["-E", "^a{2}$"], "aa\na\n"), "aa\n");
}

#[test]
fn bracket_expressions_follow_posix_rules() {
    let input = "a]b\na\\b\nx-y\nA1\n";
    assert_eq!(lines(&["[]]"], input), "a]b\n");
    assert_eq!(lines(&["[\\]"], input), "a\\b\n");
    assert_eq!(lines(&["[a-]y"], input), "x-y\n");
    assert_eq!(lines(&["[[:upper:]][[:digit:]]"], input), "A1\n");
}

#[test]
fn fixed_strings_match_regex_characters_literally() {
    assert_eq!(lines(&["-F", ".[x]"], "axb\nc.[x]d\n"), "c.[x]d\n");
    assert_eq!(lines(&["--fixed-strings", "a*"], "aaa\na*\n"), "a*\n");
}

#[test]
fn several_patterns_select_lines_matching_any() {
    assert_eq!(lines(&["-e", "one", "-e", "three"], WORDS), "one\nthree\n");
    assert_eq!(lines(&["one\nthree"], WORDS), "one\nthree\n");
}

#[test]
fn ignore_case_matches_either_case() {
    assert_eq!(lines(&["-i", "TWO"], "Two\nthree\n"), "Two\n");
    assert_eq!(lines(&["-Fi", "tWo"], "TWO\n"), "TWO\n");
}

#[test]
fn invert_selects_lines_that_do_not_match() {
    assert_eq!(lines(&["-v", "t"], WORDS), "one\n");
}

#[test]
fn named_classes_cover_unicode_letters() {
    assert_eq!(lines(&["-o", "[[:alpha:]]\\{3\\}"], "ünï 42\n"), "ünï\n");
    assert_eq!(lines(&["-c", "[[:upper:]]"], "é\nÉ\n"), "1\n");
}

#[test]
fn word_regexp_treats_multibyte_letters_as_word_characters() {
    assert_eq!(lines(&["-w", ""], "ünï\n"), "");
    assert_eq!(lines(&["-w", "nï"], "ünï\nx nï\n"), "x nï\n");
}

#[test]
fn word_regexp_needs_non_word_characters_around_the_match() {
    assert_eq!(
        lines(&["-w", "foo"], "foop\nfoop foo\nfoo_x\n(foo)\n"),
        "foop foo\n(foo)\n"
    );
    assert_eq!(lines(&["-ow", "x.*y"], "xay yb\n"), "xay\n");
}

#[test]
fn line_regexp_needs_the_whole_line_to_match() {
    assert_eq!(lines(&["-x", "abc"], "aabcc\nabc\n"), "abc\n");
    assert_eq!(lines(&["-xF", ""], "x\n\n"), "\n");
}

#[test]
fn only_matching_prints_each_match_preferring_the_longest() {
    assert_eq!(lines(&["-o", "is"], "this is\n"), "is\nis\n");
    assert_eq!(lines(&["-o", "-e", "", "-e", "two"], "one two\n"), "two\n");
    assert_eq!(lines(&["-o", "a\\|ab"], "ab\n"), "ab\n");
}

#[test]
fn lines_are_matched_as_bytes_even_when_not_utf8() {
    let (stdout, outcome) = grep_bytes(&["b"], b"a\xffb\nc\n");
    assert_eq!(stdout, b"a\xffb\n");
    assert_eq!(outcome.code, 0);
}

#[test]
fn a_final_line_without_newline_is_printed_with_one() {
    assert_eq!(lines(&["bug"], "bug"), "bug\n");
}
