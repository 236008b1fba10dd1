//! One home per user: the default home is the user's own wherever the
//! user stands, its compile cache is the user's cache (tagged), and a
//! `./.workbooks` left in a folder is still used, with a line saying so.

use crate::common::text;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// `wbx args` in `dir` as a user whose `HOME` is `user`, naming no home.
fn as_user(user: &Path, dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wbx"))
        .args(args)
        .current_dir(dir)
        .env("HOME", user)
        .env_remove("WB_HOME")
        .env_remove("WB_CACHE_DIR")
        .env_remove("WB_STATE_DIR")
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("XDG_STATE_HOME")
        .env_remove("XDG_RUNTIME_DIR")
        .env_remove("WB_SIGNING_KEY")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn paths(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "{}", text(&out.stderr));
    serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()["paths"].clone()
}

#[test]
fn the_default_home_is_the_users_own_from_every_folder_and_its_cache_is_tagged() {
    let user = tempfile::tempdir().unwrap();
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let here = paths(&as_user(user.path(), a.path(), &["--json", "env"]));
    let data = user.path().join(".local/share/workbooks");
    let cache = user.path().join(".cache/workbooks");
    assert_eq!(here["home"], data.display().to_string());
    assert_eq!(here["cache"], cache.display().to_string());
    assert_eq!(
        here,
        paths(&as_user(user.path(), b.path(), &["--json", "env"]))
    );
    // The same did:key from another folder: one home, not one per folder.
    let id_a = as_user(user.path(), a.path(), &["identity"]);
    let id_b = as_user(user.path(), b.path(), &["identity"]);
    assert!(id_a.status.success(), "{}", text(&id_a.stderr));
    assert_eq!(text(&id_a.stdout), text(&id_b.stdout));
    // A line compiles into the user's cache, tagged for backup tools; the
    // folder the user stands in gets nothing.
    let out = as_user(user.path(), a.path(), &["run", "true"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let tag = std::fs::read_to_string(cache.join("CACHEDIR.TAG")).unwrap();
    assert!(
        tag.starts_with("Signature: 8a477f597d28d172789f06886806bc55"),
        "{tag}"
    );
    assert!(cache.join("compiled").is_dir());
    assert!(
        !data.join("cache").exists(),
        "the cache is not inside the home"
    );
    assert_eq!(
        std::fs::read_dir(a.path()).unwrap().count(),
        0,
        "the folder was written"
    );
}

#[test]
fn a_folder_home_left_from_before_is_used_and_every_command_says_how_to_move_it() {
    let user = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".workbooks")).unwrap();
    let out = as_user(user.path(), project.path(), &["--json", "env"]);
    let err = text(&out.stderr);
    assert!(err.contains("using ./.workbooks"), "{err}");
    assert!(err.contains("mv .workbooks"), "{err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert_eq!(
        paths(&out)["home"],
        project.path().join(".workbooks").display().to_string()
    );
    // Named outright, it is a home like any other: nothing is said.
    let out = as_user(
        user.path(),
        project.path(),
        &["--home", ".workbooks", "env"],
    );
    assert!(text(&out.stderr).is_empty(), "{}", text(&out.stderr));
}

#[test]
fn a_named_home_keeps_its_cache_inside_it() {
    let user = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let h = home.path().display().to_string();
    let out = as_user(user.path(), user.path(), &["--home", &h, "run", "true"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(home.path().join("cache/CACHEDIR.TAG").is_file());
    assert!(!user.path().join(".cache/workbooks").exists());
}
