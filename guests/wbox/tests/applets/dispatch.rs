//! Choosing the applet from argv and the multicall error paths.

use std::ffi::OsString;

use crate::support::{run, run_argv};

fn argv(words: &[&str]) -> Vec<OsString> {
    words.iter().map(OsString::from).collect()
}

#[test]
fn the_second_argument_names_the_applet() {
    let outcome = run_argv(&argv(&["anything", "echo", "hi"]), b"");
    assert_eq!(outcome.stdout, b"hi\n");
}

#[test]
fn an_argv0_that_is_an_applet_name_runs_that_applet() {
    let outcome = run_argv(&argv(&["/usr/local/bin/echo", "hi"]), b"");
    assert_eq!(outcome.stdout, b"hi\n");
}

#[test]
fn an_unknown_applet_prints_usage_and_exits_2() {
    let outcome = run("frobnicate", &[], b"");
    assert_eq!(outcome.code, 2);
    assert!(outcome.stderr.contains("unknown applet"));
    assert!(outcome.stderr.contains("sort"));
}

#[test]
fn no_applet_at_all_prints_usage_and_exits_2() {
    let outcome = run_argv(&argv(&["session"]), b"");
    assert_eq!(outcome.code, 2);
    assert!(outcome.stderr.contains("usage: wbox"));
}

#[test]
fn list_prints_every_applet_on_its_own_line() {
    let outcome = run_argv(&argv(&["session", "--list"]), b"");
    let text = outcome.text();
    for applet in ["cat", "echo", "seq", "sort", "uniq", "true", "false"] {
        assert!(text.lines().any(|line| line == applet), "{applet}");
    }
}

#[test]
fn true_succeeds_and_false_fails_whatever_the_arguments() {
    assert_eq!(run("true", &["--bogus"], b"").code, 0);
    assert_eq!(run("false", &["x"], b"").code, 1);
}

#[test]
fn a_bad_option_is_a_usage_error_with_exit_2() {
    for applet in [
        "cat", "head", "tail", "wc", "nl", "sort", "uniq", "tr", "seq",
    ] {
        let outcome = run(applet, &["--no-such-option"], b"");
        assert_eq!(outcome.code, 2, "{applet}");
        assert!(
            outcome.stderr.starts_with(applet),
            "{applet}: {}",
            outcome.stderr
        );
    }
}

#[test]
fn help_prints_the_synopsis_on_stdout_and_succeeds() {
    let outcome = run("sort", &["--help"], b"");
    assert_eq!(outcome.code, 0);
    assert!(outcome.text().starts_with("usage: sort"));
}

#[test]
fn a_failing_stdout_makes_the_applet_exit_1() {
    struct Full;
    impl std::io::Write for Full {
        fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
            Err(std::io::Error::from(std::io::ErrorKind::StorageFull))
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut stdin: &[u8] = b"zero\n";
    let mut stdout = Full;
    let mut stderr = Vec::new();
    let mut io = wbox::Io {
        stdin: &mut stdin,
        stdout: &mut stdout,
        stderr: &mut stderr,
    };
    let code = wbox::run(&argv(&["s", "cat"]), &mut io);
    assert_eq!(code, 1);
    assert!(String::from_utf8_lossy(&stderr).contains("cat: write error"));
}
