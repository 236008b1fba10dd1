//! How `jq` reads its inputs: streams, files, slurping, raw text.

use crate::support::{jq, scratch_file};

#[test]
fn every_value_in_the_input_stream_is_processed() {
    assert_eq!(jq(&["-c", ". + 1"], "1 2\n3").stdout, "2\n3\n4\n");
}

#[test]
fn null_input_runs_the_filter_once_without_reading() {
    assert_eq!(jq(&["-n", "1 + 1"], "ignored").stdout, "2\n");
}

#[test]
fn slurp_collects_all_inputs_into_one_array() {
    assert_eq!(jq(&["-s", "-c", "."], "1 [2] {}").stdout, "[1,[2],{}]\n");
}

#[test]
fn raw_input_reads_each_line_as_a_string() {
    assert_eq!(jq(&["-R", "."], "a b\nc\n").stdout, "\"a b\"\n\"c\"\n");
}

#[test]
fn raw_input_with_slurp_reads_the_whole_text_as_one_string() {
    assert_eq!(jq(&["-Rs", "."], "a\nb\n").stdout, "\"a\\nb\\n\"\n");
}

#[test]
fn files_named_as_arguments_are_read_in_order() {
    let first = scratch_file("1");
    let second = scratch_file("[2]");
    let outcome = jq(
        &["-c", ".", first.to_str().unwrap(), second.to_str().unwrap()],
        "99",
    );
    assert_eq!(outcome.stdout, "1\n[2]\n");
}

#[test]
fn input_filename_names_the_file_being_read() {
    let file = scratch_file("{}");
    let name = file.to_str().unwrap();
    assert_eq!(
        jq(&["input_filename", name], "").stdout,
        format!("\"{name}\"\n")
    );
    assert_eq!(jq(&["input_filename"], "{}").stdout, "null\n");
}

#[test]
fn input_and_inputs_consume_the_following_values() {
    assert_eq!(
        jq(&["-c", "[., input]"], "1 2 3 4").stdout,
        "[1,2]\n[3,4]\n"
    );
    assert_eq!(jq(&["-n", "-c", "[inputs]"], "1 2 3").stdout, "[1,2,3]\n");
}

#[test]
fn a_byte_order_mark_before_the_input_is_ignored() {
    assert_eq!(jq(&["."], "\u{feff}\"bom\"").stdout, "\"bom\"\n");
}

#[test]
fn from_file_reads_the_filter_from_a_file() {
    let filter = scratch_file(".a");
    assert_eq!(
        jq(&["-f", filter.to_str().unwrap()], r#"{"a":7}"#).stdout,
        "7\n"
    );
}

#[test]
fn arg_binds_a_string_variable() {
    assert_eq!(
        jq(&["-n", "--arg", "name", "1", "$name"], "").stdout,
        "\"1\"\n"
    );
}

#[test]
fn argjson_binds_a_parsed_json_variable() {
    assert_eq!(
        jq(&["-n", "-c", "--argjson", "v", "{\"a\":[1]}", "$v.a"], "").stdout,
        "[1]\n"
    );
}

#[test]
fn named_arguments_also_appear_in_args_named() {
    let outcome = jq(
        &[
            "-n",
            "-c",
            "--arg",
            "a",
            "x",
            "--argjson",
            "b",
            "2",
            "$ARGS.named",
        ],
        "",
    );
    assert_eq!(outcome.stdout, "{\"a\":\"x\",\"b\":2}\n");
}

#[test]
fn args_and_jsonargs_fill_args_positional() {
    assert_eq!(
        jq(&["-n", "-c", "$ARGS.positional", "--args", "a", "b"], "").stdout,
        "[\"a\",\"b\"]\n"
    );
    assert_eq!(
        jq(
            &["-n", "-c", "$ARGS.positional", "--jsonargs", "1", "{}"],
            ""
        )
        .stdout,
        "[1,{}]\n"
    );
}

#[test]
fn slurpfile_and_rawfile_bind_file_contents() {
    let values = scratch_file("1 2");
    let text = scratch_file("hi\n");
    let args = [
        "-n",
        "-c",
        "--slurpfile",
        "v",
        values.to_str().unwrap(),
        "--rawfile",
        "t",
        text.to_str().unwrap(),
        "[$v, $t]",
    ];
    assert_eq!(jq(&args, "").stdout, "[[1,2],\"hi\\n\"]\n");
}

#[test]
fn bundled_short_flags_are_each_applied() {
    assert_eq!(jq(&["-nr", "\"x\""], "").stdout, "x\n");
}

#[test]
fn double_dash_lets_a_filter_start_with_a_minus() {
    assert_eq!(jq(&["-n", "--", "-1"], "").stdout, "-1\n");
}
