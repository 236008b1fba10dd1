//! Builtins this command adds over the jaq standard library.

use crate::support::jq;

fn compact(filter: &str, input: &str) -> String {
    jq(&["-c", filter], input).stdout
}

#[test]
fn csv_and_tsv_format_arrays_as_rows() {
    assert_eq!(
        compact("@csv", r#"[1,"a\"b",null,true]"#),
        "\"1,\\\"a\\\"\\\"b\\\",,true\"\n"
    );
    assert_eq!(
        compact("@tsv", r#"["a\tb",1,null]"#),
        "\"a\\\\tb\\t1\\t\"\n"
    );
}

#[test]
fn join_treats_null_as_empty_and_numbers_as_text() {
    assert_eq!(
        compact("join(\"-\")", r#"["a",1,null,true]"#),
        "\"a-1--true\"\n"
    );
    assert_eq!(compact("join(\",\")", "[]"), "\"\"\n");
}

#[test]
fn tostream_and_fromstream_round_trip_a_value() {
    let value = r#"{"a":[1,{"b":[]}],"c":null}"#;
    assert_eq!(compact("fromstream(tostream)", value), format!("{value}\n"));
    assert_eq!(
        compact("[tostream]", "[1,[2]]"),
        "[[[0],1],[[1,0],2],[[1,0]],[[1]]]\n"
    );
}

#[test]
fn truncate_stream_drops_leading_path_components() {
    assert_eq!(
        compact(
            "[1 | truncate_stream([[0],1],[[1,0],2],[[1,0]],[[1]])]",
            "null"
        ),
        "[[[0],2],[[0]]]\n"
    );
}

#[test]
fn in_index_and_join_relate_streams() {
    assert_eq!(
        compact("[range(3) | IN(1, 2)]", "null"),
        "[false,true,true]\n"
    );
    assert_eq!(
        compact("INDEX(.id)", r#"[{"id":1},{"id":2}]"#),
        "{\"1\":{\"id\":1},\"2\":{\"id\":2}}\n"
    );
}

#[test]
fn loc_gives_the_line_of_its_use() {
    assert_eq!(
        compact("$__loc__", "null"),
        "{\"file\":\"<top-level>\",\"line\":1}\n"
    );
}

#[test]
fn env_and_dollar_env_expose_the_environment() {
    assert_eq!(
        compact("[env, $ENV] | map(type)", "null"),
        "[\"object\",\"object\"]\n"
    );
}
