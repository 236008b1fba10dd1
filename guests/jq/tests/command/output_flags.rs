//! How the output flags shape what `jq` prints.

use crate::support::jq;

#[test]
fn values_are_pretty_printed_with_two_space_indentation_by_default() {
    let outcome = jq(&["."], r#"{"a":[1,{"b":null}],"c":"x"}"#);
    let expected =
        "{\n  \"a\": [\n    1,\n    {\n      \"b\": null\n    }\n  ],\n  \"c\": \"x\"\n}\n";
    assert_eq!(outcome.stdout, expected);
    assert_eq!(outcome.code, 0);
}

#[test]
fn empty_arrays_and_objects_print_without_inner_newlines() {
    assert_eq!(
        jq(&["."], r#"{"a":[],"b":{}}"#).stdout,
        "{\n  \"a\": [],\n  \"b\": {}\n}\n"
    );
}

#[test]
fn compact_output_prints_each_value_on_one_line() {
    assert_eq!(
        jq(&["-c", "."], r#"{"a": [1, 2], "b": "c"}"#).stdout,
        "{\"a\":[1,2],\"b\":\"c\"}\n"
    );
    assert_eq!(
        jq(&["--compact-output", ".a"], r#"{"a": [1]}"#).stdout,
        "[1]\n"
    );
}

#[test]
fn raw_output_prints_strings_without_quotes() {
    assert_eq!(
        jq(&["-r", ".[]"], r#"["a\tb", 1, null]"#).stdout,
        "a\tb\n1\nnull\n"
    );
    assert_eq!(jq(&["--raw-output", "."], r#""x""#).stdout, "x\n");
}

#[test]
fn join_output_prints_raw_strings_without_newlines() {
    assert_eq!(jq(&["-j", ".[]"], r#"["a", 1, "b"]"#).stdout, "a1b");
}

#[test]
fn tab_indents_each_level_with_a_tab() {
    assert_eq!(jq(&["--tab", "."], "[1]").stdout, "[\n\t1\n]\n");
}

#[test]
fn indent_sets_the_number_of_spaces_per_level() {
    assert_eq!(jq(&["--indent", "4", "."], "[1]").stdout, "[\n    1\n]\n");
    assert_eq!(jq(&["--indent", "0", "."], "[1, 2]").stdout, "[1,2]\n");
}

#[test]
fn sort_keys_prints_object_keys_in_order() {
    assert_eq!(
        jq(&["-S", "-c", "."], r#"{"b":1,"a":{"d":2,"c":3}}"#).stdout,
        "{\"a\":{\"c\":3,\"d\":2},\"b\":1}\n"
    );
}

#[test]
fn ascii_output_escapes_characters_beyond_ascii() {
    assert_eq!(
        jq(&["-a", "."], "\"é😀\"").stdout,
        "\"\\u00e9\\ud83d\\ude00\"\n"
    );
}

#[test]
fn control_characters_in_strings_are_escaped() {
    assert_eq!(
        jq(&["."], r#""a\u0001\n\"\\""#).stdout,
        "\"a\\u0001\\n\\\"\\\\\"\n"
    );
}

#[test]
fn nan_prints_as_null_and_infinities_as_the_largest_double() {
    let outcome = jq(&["-n", "-c", "[nan, infinite, -infinite]"], "");
    assert_eq!(
        outcome.stdout,
        "[null,1.7976931348623157e+308,-1.7976931348623157e+308]\n"
    );
}

#[test]
fn help_prints_usage_and_succeeds() {
    let outcome = jq(&["--help"], "");
    assert!(outcome.stdout.starts_with("Usage: jq"));
    assert_eq!(outcome.code, 0);
}
