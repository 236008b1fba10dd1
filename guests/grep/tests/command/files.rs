//! Reading named files, directories and pattern files.

use crate::support::{grep, scratch_dir, write};

#[test]
fn several_files_prefix_each_line_with_the_file_name() {
    let dir = scratch_dir();
    let first = write(&dir, "a", "hit\nmiss\n");
    let second = write(&dir, "b", "hit again\n");
    let outcome = grep(&["hit", &first, &second], "");
    assert_eq!(outcome.stdout, format!("{first}:hit\n{second}:hit again\n"));
    let outcome = grep(&["-h", "hit", &first, &second], "");
    assert_eq!(outcome.stdout, "hit\nhit again\n");
}

#[test]
fn files_with_and_without_matches_list_names() {
    let dir = scratch_dir();
    let hit = write(&dir, "hit", "needle\n");
    let miss = write(&dir, "miss", "hay\n");
    assert_eq!(
        grep(&["-l", "needle", &hit, &miss], "").stdout,
        format!("{hit}\n")
    );
    assert_eq!(
        grep(&["-L", "needle", &hit, &miss], "").stdout,
        format!("{miss}\n")
    );
}

#[test]
fn a_dash_operand_reads_stdin_among_files() {
    let dir = scratch_dir();
    let file = write(&dir, "f", "two\n");
    let outcome = grep(&["two", "-", &file], "two\n");
    assert_eq!(
        outcome.stdout,
        format!("(standard input):two\n{file}:two\n")
    );
}

#[test]
fn pattern_files_give_one_pattern_per_line() {
    let dir = scratch_dir();
    let patterns = write(&dir, "patterns", "one\nthree\n");
    assert_eq!(
        grep(&["-f", &patterns], "one\ntwo\nthree\n").stdout,
        "one\nthree\n"
    );
    let empty = write(&dir, "empty", "");
    assert_eq!(grep(&["-f", &empty], "one\n").code, 1);
}

#[test]
fn recursive_search_walks_directories_in_name_order() {
    let dir = scratch_dir();
    write(&dir, "sub/b", "word\n");
    write(&dir, "sub/a", "word\n");
    let root = dir.join("sub");
    let root = root.to_str().unwrap();
    let outcome = grep(&["-r", "word", root], "");
    assert_eq!(outcome.stdout, format!("{root}/a:word\n{root}/b:word\n"));
}

#[test]
fn null_after_name_ends_listed_names_with_nul() {
    let dir = scratch_dir();
    let file = write(&dir, "f", "x\n");
    assert_eq!(grep(&["-lZ", "x", &file], "").stdout, format!("{file}\0"));
}

#[test]
fn include_exclude_and_exclude_dir_filter_a_recursive_search() {
    let dir = scratch_dir();
    write(&dir, "tree/keep.txt", "word\n");
    write(&dir, "tree/skip.log", "word\n");
    write(&dir, "tree/vendor/other.txt", "word\n");
    let root = dir.join("tree");
    let root = root.to_str().unwrap();
    let outcome = grep(
        &[
            "-rl",
            "--include=*.txt",
            "--exclude-dir",
            "vendor",
            "word",
            root,
        ],
        "",
    );
    assert_eq!(outcome.stdout, format!("{root}/keep.txt\n"));
    let outcome = grep(&["-rl", "--exclude=*.txt", "word", root], "");
    assert_eq!(outcome.stdout, format!("{root}/skip.log\n"));
}
