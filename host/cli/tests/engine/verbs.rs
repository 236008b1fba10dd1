//! Every verb keeps the CLI's conventions, tested over the whole command
//! tree, so a new verb is covered without being listed here. The tree is
//! read from docs/cli.md, the page generated from clap's definition (a
//! unit test holds the two equal). For each leaf verb, with arguments made
//! from its usage line:
//! - a line clap refuses exits 64, and under `--json` says so as one JSON
//!   error on stdout;
//! - a failure (the home is a file, so anything reaching it fails) exits
//!   with a code of the one table, and under `--json` is one JSON error on
//!   stdout naming that code and its kind;
//! - a verb that prints on success, its stdout closed by the reader, ends
//!   quietly with 141: no panic, no message;
//! - nothing panics, and only a verb that says it serves until stopped may
//!   still be running when its time is up.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The exit codes of the one table (docs/environment.md), with their
/// kinds.
const TABLE: &[(i32, &str)] = &[
    (0, "ok"),
    (1, "failed"),
    (64, "usage"),
    (119, "syntax"),
    (120, "refused"),
    (121, "trap"),
    (122, "memory_limit"),
    (123, "fuel_exhausted"),
    (124, "timeout"),
    (125, "engine"),
    (126, "load"),
    (127, "not_found"),
    (141, "closed_pipe"),
];

/// One leaf verb of the tree.
#[derive(Debug)]
struct Verb {
    /// The words after `wbx`.
    path: Vec<String>,
    /// Arguments satisfying its usage line.
    args: Vec<String>,
    /// Whether it says it serves until stopped.
    serves: bool,
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A value for an argument named `name` in a usage line.
fn value_for(name: &str) -> String {
    let name = name.trim_matches(|c| c == '<' || c == '>' || c == '.');
    let word = name.split([' ', '|']).next().unwrap_or(name);
    match word {
        "FILE" | "WASM" | "FILE.wasm" | "PATH" | "COMPONENT" => "missing.wasm".into(),
        "DIR" | "WORKDIR" | "ROOT" | "SOURCE" | "FOLDER" => "missing-dir".into(),
        "URL" => "http://127.0.0.1:9/".into(),
        "REF" | "REFERENCE" => "oci://127.0.0.1:9/nothing:here".into(),
        "SHELL" => "bash".into(),
        "LINE" | "N" | "MS" | "COUNT" | "NUMBER" => "1".into(),
        "PROOF" => "missing-proof.json".into(),
        _ => "x".into(),
    }
}

/// The tokens of a usage line, `<…>` and `[…]` kept whole.
fn tokens(usage: &str) -> Vec<String> {
    let (mut out, mut cur, mut depth) = (Vec::new(), String::new(), 0i32);
    for c in usage.chars() {
        match c {
            '<' | '[' => depth += 1,
            '>' | ']' => depth -= 1,
            ' ' if depth == 0 => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Every leaf verb on docs/cli.md.
fn verbs() -> Vec<Verb> {
    let page = std::fs::read_to_string(repo().join("docs/cli.md")).unwrap();
    let mut out = Vec::new();
    let sections: Vec<&str> = page.split("\n#").skip(1).collect();
    for section in sections {
        let Some(title) = section.split('`').nth(1) else {
            continue;
        };
        let Some(usage) = section
            .split("```text\n")
            .nth(1)
            .and_then(|u| u.lines().next())
        else {
            continue;
        };
        let path: Vec<String> = title.split_whitespace().skip(1).map(String::from).collect();
        if path.is_empty() || usage.ends_with("<COMMAND>") {
            continue;
        }
        let about = section.split("```text").next().unwrap_or_default();
        let mut args = Vec::new();
        let words = tokens(usage);
        let mut i = 1 + path.len();
        while i < words.len() {
            let w = &words[i];
            if w.starts_with("--") {
                args.push(w.clone());
                if let Some(v) = words.get(i + 1).filter(|v| v.starts_with('<')) {
                    args.push(value_for(v));
                    i += 1;
                }
            } else if w.starts_with('<') {
                args.push(value_for(w));
            }
            i += 1;
        }
        out.push(Verb {
            path,
            args,
            serves: about.contains("until"),
        });
    }
    out
}

/// What a run left.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    /// Still running when its time was up (then killed).
    hung: bool,
}

/// Runs `wbx args` in `dir`, stdin empty, its stdout captured or closed
/// by its reader before it starts, killed after `limit`.
fn run(dir: &Path, home: &Path, args: &[String], closed: bool, limit: Duration) -> Ran {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wbx"));
    cmd.args(args)
        .current_dir(dir)
        .env("WB_HOME", home)
        .env("WB_LLM_BASE_URL", "http://127.0.0.1:9/v1")
        .env("DOCKER_CONFIG", dir.join("no-docker-config"))
        .env_remove("WB_LOG")
        .env_remove("WB_NET_ALLOW")
        .env_remove("WB_OPERATOR_ALLOW")
        .env_remove("WB_CACHE_DIR")
        .env_remove("WB_TOOLKITS_ROOT")
        .stdin(Stdio::null())
        .stderr(Stdio::piped());
    if closed {
        // The reader is gone before the writer starts.
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        cmd.stdout(writer);
    } else {
        cmd.stdout(Stdio::piped());
    }
    let mut child = cmd.spawn().unwrap();
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(s) = stdout.as_mut() {
            let _ = s.read_to_string(&mut text);
        }
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let start = Instant::now();
    let mut hung = false;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > limit {
            hung = true;
            let _ = child.kill();
            break child.wait().unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ran {
        code: status.code(),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
        hung,
    }
}

/// The one JSON error `stdout` must be, for `code`.
fn json_error(stdout: &str, code: i32) -> Result<(), String> {
    let value: serde_json::Value = serde_json::from_str(stdout.trim())
        .map_err(|e| format!("stdout is not one JSON value ({e}): {stdout:?}"))?;
    let kind = TABLE.iter().find(|(c, _)| *c == code).map(|(_, k)| *k);
    let error = &value["error"];
    if error["exit"] != code || error["kind"].as_str() != kind {
        return Err(format!(
            "the JSON error names another code or kind than {code}: {value}"
        ));
    }
    if error["message"].as_str().is_none_or(str::is_empty) {
        return Err(format!("the JSON error has no message: {value}"));
    }
    Ok(())
}

/// What one verb's runs showed.
#[derive(Default)]
struct Checked {
    /// What is wrong with it.
    wrong: Vec<String>,
    /// It failed under --json, and its JSON error was checked.
    json_failure: bool,
    /// It printed on success, and its closed stdout was checked.
    closed_pipe: bool,
}

/// What is wrong with one verb, if anything.
fn check(verb: &Verb, dir: &Path, home: &Path, file_home: &Path) -> Checked {
    let mut checked = Checked::default();
    let wrong = &mut checked.wrong;
    let name = verb.path.join(" ");
    let line = |pre: &[&str], rest: &[String]| -> Vec<String> {
        pre.iter()
            .map(|s| s.to_string())
            .chain(verb.path.iter().cloned())
            .chain(rest.iter().cloned())
            .collect()
    };
    let quick = Duration::from_secs(if verb.serves { 5 } else { 120 });
    let panicked = |r: &Ran| r.code == Some(101) || r.stderr.contains("panicked");

    // A line clap refuses.
    let bad = vec!["--no-such-flag-here".to_string()];
    let r = run(dir, home, &line(&[], &bad), false, quick);
    if r.code != Some(64) || r.stderr.is_empty() {
        wrong.push(format!(
            "{name} --no-such-flag-here: exit {:?}, stderr {:?}",
            r.code, r.stderr
        ));
    }
    let r = run(dir, home, &line(&["--json"], &bad), false, quick);
    if r.code != Some(64) {
        wrong.push(format!(
            "--json {name} --no-such-flag-here: exit {:?}",
            r.code
        ));
    } else if let Err(e) = json_error(&r.stdout, 64) {
        wrong.push(format!("--json {name} --no-such-flag-here: {e}"));
    }

    // A failure: the home is a file.
    let r = run(dir, file_home, &line(&["--json"], &verb.args), false, quick);
    match r.code {
        _ if panicked(&r) => wrong.push(format!("{name} panicked: {}", r.stderr)),
        _ if r.hung && !verb.serves => wrong.push(format!("{name} (home a file) did not end")),
        _ if r.hung => {}
        None => wrong.push(format!("{name} (home a file) died by a signal")),
        Some(0) => {}
        Some(code) if !TABLE.iter().any(|(c, _)| *c == code) => {
            wrong.push(format!(
                "--json {name}: exit {code} is not in the table; stderr {}",
                r.stderr
            ));
        }
        Some(code) => {
            checked.json_failure = true;
            if let Err(e) = json_error(&r.stdout, code) {
                wrong.push(format!("--json {} {}: {e}", name, verb.args.join(" ")));
            }
        }
    }

    // Printing into a pipe its reader closed.
    let open = run(dir, home, &line(&[], &verb.args), false, quick);
    if panicked(&open) {
        wrong.push(format!("{name} panicked: {}", open.stderr));
    } else if open.hung && !verb.serves {
        wrong.push(format!("{name} did not end"));
    }
    if open.code == Some(0) && !open.stdout.is_empty() {
        checked.closed_pipe = true;
        let r = run(dir, home, &line(&[], &verb.args), true, quick);
        if r.code != Some(141) || !r.stderr.is_empty() {
            wrong.push(format!(
                "{name}, its stdout closed: exit {:?} (want 141, quietly), stderr {:?}",
                r.code, r.stderr
            ));
        }
    }
    checked
}

#[test]
fn every_verb_keeps_the_exit_codes_json_errors_and_closed_pipe_conventions() {
    let verbs = verbs();
    assert!(
        verbs.len() > 50,
        "leaf verbs on docs/cli.md: {}",
        verbs.len()
    );
    for needed in [
        ["exec"].as_slice(),
        &["call"],
        &["catalog", "list"],
        &["env"],
        &["cache", "gc"],
    ] {
        assert!(
            verbs.iter().any(|v| v.path == needed),
            "{needed:?} is not among the verbs read"
        );
    }
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    let file_home = dir.path().join("a-file");
    std::fs::write(&file_home, b"not a folder").unwrap();
    let checked: Vec<(&Verb, Checked)> = verbs
        .iter()
        .map(|v| (v, check(v, dir.path(), &home, &file_home)))
        .collect();
    let wrong: Vec<&String> = checked.iter().flat_map(|(_, c)| &c.wrong).collect();
    assert!(
        wrong.is_empty(),
        "{} broken:\n{}",
        wrong.len(),
        wrong
            .iter()
            .map(|w| w.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The conventions were met, not stepped around: most verbs failed
    // under --json, and the verbs that print were read through a closed
    // pipe.
    let names = |pick: fn(&Checked) -> bool| -> Vec<String> {
        checked
            .iter()
            .filter(|(_, c)| pick(c))
            .map(|(v, _)| v.path.join(" "))
            .collect()
    };
    let failed = names(|c| c.json_failure);
    assert!(
        failed.len() * 2 > verbs.len(),
        "failed under --json: {failed:?}"
    );
    let piped = names(|c| c.closed_pipe);
    for printing in [
        "profiles",
        "catalog list",
        "env",
        "completions",
        "command list",
    ] {
        assert!(
            piped.iter().any(|p| p == printing),
            "{printing} not read through a closed pipe: {piped:?}"
        );
    }
}

#[test]
fn a_guest_whose_reader_closed_its_stdout_ends_with_141_not_a_trap() {
    let dir = tempfile::tempdir().unwrap();
    let examples = run(
        dir.path(),
        &dir.path().join("home"),
        &["examples".into()],
        false,
        Duration::from_secs(60),
    );
    assert_eq!(examples.code, Some(0), "{}", examples.stderr);
    let r = run(
        dir.path(),
        &dir.path().join("home"),
        &["exec".into(), "hello.wasm".into()],
        true,
        Duration::from_secs(120),
    );
    assert_eq!(r.code, Some(141), "{}", r.stderr);
    assert!(r.stderr.is_empty(), "not quiet: {}", r.stderr);
}

#[test]
fn examples_refuses_a_differing_file_before_writing_any_and_force_overwrites_it() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    // The second file of the three is someone's own: nothing may be written.
    std::fs::write(dir.path().join("counter.wasm"), b"mine").unwrap();
    let refused = run(
        dir.path(),
        &home,
        &["examples".into()],
        false,
        Duration::from_secs(60),
    );
    assert_eq!(refused.code, Some(64), "{}", refused.stderr);
    assert!(
        refused.stderr.contains("counter.wasm exists"),
        "{}",
        refused.stderr
    );
    assert_eq!(
        std::fs::read(dir.path().join("counter.wasm")).unwrap(),
        b"mine"
    );
    assert!(
        !dir.path().join("hello.wasm").exists(),
        "hello.wasm written before the refusal"
    );
    let forced = run(
        dir.path(),
        &home,
        &["examples".into(), "--force".into()],
        false,
        Duration::from_secs(60),
    );
    assert_eq!(forced.code, Some(0), "{}", forced.stderr);
    let counter = std::fs::read(dir.path().join("counter.wasm")).unwrap();
    assert_eq!(&counter[..4], b"\0asm");
}
