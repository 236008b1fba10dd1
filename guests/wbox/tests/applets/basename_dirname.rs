//! `basename` and `dirname` behaviour.

use crate::support::{output, run};

#[test]
fn basename_strips_directories_and_trailing_slashes() {
    assert_eq!(output("basename", &["/////a///b///c///d/////"], ""), "d\n");
    assert_eq!(output("basename", &["///////"], ""), "/\n");
    assert_eq!(output("basename", &["a//////"], ""), "a\n");
    assert_eq!(output("basename", &[""], ""), "\n");
}

#[test]
fn basename_removes_a_proper_suffix_only() {
    assert_eq!(
        output("basename", &["a/b/c/d.suffix", ".suffix"], ""),
        "d\n"
    );
    assert_eq!(output("basename", &[".txt", ".txt"], ""), ".txt\n");
    assert_eq!(
        output("basename", &["a.txt.old", ".txt"], ""),
        "a.txt.old\n"
    );
    assert_eq!(output("basename", &["a/b/c", ""], ""), "c\n");
}

#[test]
fn basename_a_and_s_handle_several_names() {
    assert_eq!(
        output("basename", &["-a", "/a/b/f1", "/c/d/f2"], ""),
        "f1\nf2\n"
    );
    assert_eq!(
        output("basename", &["-s", ".txt", "/a/b/c.txt", "/a/b/d.txt"], ""),
        "c\nd\n"
    );
    assert_eq!(run("basename", &["-z", "a/b"], b"").stdout, b"b\0");
}

#[test]
fn basename_needs_an_operand_and_at_most_two_without_a() {
    assert_eq!(run("basename", &[], b"").code, 2);
    assert_eq!(run("basename", &["a", "b", "c"], b"").code, 2);
}

#[test]
fn dirname_strips_the_last_component() {
    assert_eq!(
        output("dirname", &["/////a///b///c///d/////"], ""),
        "/////a///b///c\n"
    );
    assert_eq!(output("dirname", &["///////"], ""), "/\n");
    assert_eq!(output("dirname", &["a//////"], ""), ".\n");
    assert_eq!(output("dirname", &["/////a///"], ""), "/\n");
    assert_eq!(output("dirname", &["/a"], ""), "/\n");
    assert_eq!(output("dirname", &[""], ""), ".\n");
}

#[test]
fn dirname_handles_several_names_and_nul_endings() {
    assert_eq!(
        output("dirname", &["hello/a", "world/b"], ""),
        "hello\nworld\n"
    );
    assert_eq!(run("dirname", &["-z", "a/b"], b"").stdout, b"a\0");
    assert_eq!(run("dirname", &[], b"").code, 2);
}
