//! `jq`'s exit codes and error messages.

use crate::support::jq;

#[test]
fn success_exits_0() {
    assert_eq!(jq(&["."], "1").code, 0);
}

#[test]
fn exit_status_is_1_when_the_last_output_is_false_or_null() {
    assert_eq!(jq(&["-e", "."], "true false").code, 1);
    assert_eq!(jq(&["--exit-status", "."], "null").code, 1);
}

#[test]
fn exit_status_is_4_when_there_is_no_output() {
    assert_eq!(jq(&["-e", "empty"], "1").code, 4);
}

#[test]
fn exit_status_is_0_when_the_last_output_is_truthy() {
    assert_eq!(jq(&["-e", "."], "null 0").code, 0);
}

#[test]
fn an_unknown_option_is_a_usage_error_exiting_2() {
    let outcome = jq(&["--bogus", "."], "");
    assert_eq!(outcome.code, 2);
    assert!(outcome.stderr.contains("unknown option"));
}

#[test]
fn a_missing_filter_is_a_usage_error_exiting_2() {
    assert_eq!(jq(&[], "").code, 2);
}

#[test]
fn a_missing_input_file_is_reported_and_exits_2() {
    let outcome = jq(&[".", "/nonexistent/input.json"], "");
    assert_eq!(outcome.code, 2);
    assert!(
        outcome
            .stderr
            .contains("Could not open /nonexistent/input.json")
    );
}

#[test]
fn malformed_input_is_reported_after_earlier_values_and_exits_2() {
    let outcome = jq(&["."], "1 2 }");
    assert_eq!(outcome.stdout, "1\n2\n");
    assert_eq!(outcome.code, 2);
    assert!(outcome.stderr.starts_with("jq: error"));
}

#[test]
fn invalid_argjson_exits_2() {
    assert_eq!(jq(&["-n", "--argjson", "v", "{", "$v"], "").code, 2);
}

#[test]
fn a_filter_that_does_not_parse_exits_3() {
    let outcome = jq(&["-n", "{"], "");
    assert_eq!(outcome.code, 3);
    assert!(outcome.stderr.contains("compile error"));
}

#[test]
fn an_undefined_function_is_a_compile_error_exiting_3() {
    let outcome = jq(&["-n", "nosuchfunction(1)"], "");
    assert_eq!(outcome.code, 3);
    assert!(outcome.stderr.contains("nosuchfunction/1 is not defined"));
}

#[test]
fn a_runtime_error_is_reported_on_stderr_and_exits_5() {
    let outcome = jq(&[".a"], "[1]");
    assert_eq!(outcome.code, 5);
    assert!(outcome.stderr.starts_with("jq: error (at <stdin>): "));
}

#[test]
fn a_runtime_error_does_not_stop_later_inputs() {
    let outcome = jq(
        &["error(\"bad\")?, (if . == 1 then error(\"one\") else . end)"],
        "1 2",
    );
    assert_eq!(outcome.stdout, "2\n");
    assert_eq!(outcome.stderr, "jq: error (at <stdin>): one\n");
    assert_eq!(outcome.code, 5);
}

#[test]
fn errors_with_non_string_values_print_them_as_json() {
    let outcome = jq(&["-n", "error({a: 1})"], "");
    assert_eq!(
        outcome.stderr,
        "jq: error (at <stdin>) (not a string): {\"a\":1}\n"
    );
}

#[test]
fn halt_error_prints_strings_raw_and_exits_with_the_given_code() {
    let outcome = jq(&["-n", "\"bye\\n\" | halt_error(3)"], "");
    assert_eq!((outcome.stderr.as_str(), outcome.code), ("bye\n", 3));
    let outcome = jq(&["-n", "{a: 1} | halt_error"], "");
    assert_eq!((outcome.stderr.as_str(), outcome.code), ("{\"a\":1}\n", 5));
}

#[test]
fn halt_stops_processing_with_exit_code_0() {
    let outcome = jq(&["if . == 2 then halt else . end"], "1 2 3");
    assert_eq!((outcome.stdout.as_str(), outcome.code), ("1\n", 0));
}

#[test]
fn debug_writes_its_input_to_stderr_and_passes_it_on() {
    let outcome = jq(&["-c", "debug"], "[1]");
    assert_eq!(outcome.stdout, "[1]\n");
    assert_eq!(outcome.stderr, "[\"DEBUG:\",[1]]\n");
}
