//! The `wbx` binary: exit codes, stdio pass-through, refusals as one line.

use crate::common::{text, wbx};
use guest_artifacts::*;

guest_artifacts::foreach_cli!(assert_test_exists);

#[test]
fn cli_exit_code() {
    let home = tempfile::tempdir().unwrap();
    for code in ["0", "2", "3", "255"] {
        let out = wbx(home.path(), &["exec", CLI_EXIT_CODE, "--", code], b"");
        assert_eq!(out.status.code(), Some(code.parse().unwrap()));
        assert_eq!(text(&out.stdout), "out\n");
        assert_eq!(text(&out.stderr), "err\n");
    }
}

#[test]
fn cli_cat() {
    let home = tempfile::tempdir().unwrap();
    let out = wbx(
        home.path(),
        &["exec", CLI_CAT, "--", "a", "b c"],
        b"line one\nline two\n",
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), "line one\nline two\n");
    assert_eq!(text(&out.stderr), "a b c\n");
}

/// `wbx exec FILE ARGS…` as `wasmtime run` takes it: the guest's argv[0]
/// is FILE as written, and everything after FILE is its arguments, flags
/// and `--` included (one `--` right after FILE is taken).
#[test]
fn cli_argv() {
    let home = tempfile::tempdir().unwrap();
    let argv = |args: &[&str]| {
        let mut line = vec!["exec", CLI_ARGV];
        line.extend(args);
        let out = wbx(home.path(), &line, b"");
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    assert_eq!(
        argv(&["a", "--timeout", "1"]),
        format!("{CLI_ARGV}\na\n--timeout\n1\n")
    );
    assert_eq!(argv(&["--", "-x"]), format!("{CLI_ARGV}\n-x\n"));
    assert_eq!(argv(&["--", "--", "y"]), format!("{CLI_ARGV}\n--\ny\n"));
}

#[test]
fn cli_hello() {
    let home = tempfile::tempdir().unwrap();
    let out = wbx(home.path(), &["exec", CLI_HELLO], b"");
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(0), "hello\n".into())
    );
    // The compiled artifact was cached under the home.
    let cached = std::fs::read_dir(home.path().join("cache/compiled"))
        .unwrap()
        .count();
    assert!(cached >= 1);
}

/// (args, exit code, a piece of the one stderr line)
#[test]
fn engine_verdicts_have_distinct_exit_codes_and_one_line() {
    let home = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], i32, &str)] = &[
        (
            &["exec", DOCK_KV],
            120,
            "capability not granted: kv (import workbooks:engine/kv@0.1.0) under profile compute",
        ),
        (
            &["exec", "--profile", "posix", DOCK_HOST_KV],
            120,
            "host primitive refused",
        ),
        (
            &["exec", DOCK_UNKNOWN_IMPORT],
            120,
            "unknown imports refused: evil:probe/backdoor",
        ),
        (
            &[
                "exec",
                "--profile",
                "minimal",
                "--caps",
                "kv,net",
                CLI_HELLO,
            ],
            120,
            "capabilities not in profile minimal: net",
        ),
        (
            &["exec", "--profile", "root", CLI_HELLO],
            64,
            "valid profiles: compute, minimal, network, posix",
        ),
        (
            // Fuel past what 300 ms can burn: only the clock stops it.
            &[
                "exec",
                "--timeout",
                "300",
                "--fuel",
                "18446744073709551615",
                LIMITS_RUNAWAY_LOOP,
            ],
            124,
            "timeout: the call exceeded its 300 ms budget",
        ),
        (
            &["exec", LIMITS_MEMORY_BOMB],
            122,
            "memory_limit: growth to",
        ),
        (&["exec", LIMITS_DEEP_RECURSION], 121, "stack_overflow"),
        (
            &["exec", "--fuel", "1000000", LIMITS_RUNAWAY_LOOP],
            123,
            "fuel_exhausted",
        ),
        (
            &["exec", "/no/such/file.wasm"],
            126,
            "cannot read /no/such/file.wasm",
        ),
        (
            &["exec", "--bogus-flag", CLI_HELLO],
            64,
            "unexpected argument",
        ),
    ];
    for (args, code, needle) in cases {
        let out = wbx(home.path(), args, b"");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(*code), "{args:?}: {err}");
        let wbx_lines: Vec<&str> = err.lines().filter(|l| l.starts_with("wbx: ")).collect();
        if *code != 64 || !needle.contains("unexpected") {
            assert_eq!(wbx_lines.len(), 1, "{args:?}: {err}");
        }
        assert!(err.contains(needle), "{args:?}: {err}");
        if let Some(flag) = raise_hint(*code) {
            assert!(err.trim_end().ends_with(flag), "{args:?}: {err}");
        }
    }
}

/// What an error line ends with when a guest ran out of a budget a flag
/// raises.
fn raise_hint(code: i32) -> Option<&'static str> {
    match code {
        122 => Some("(raise the cap with --memory MIB)"),
        123 => Some("(raise it with --fuel N)"),
        124 => Some("(raise it with --timeout MS)"),
        _ => None,
    }
}

#[test]
fn profiles_and_inspect_speak_json() {
    let home = tempfile::tempdir().unwrap();
    let out = wbx(home.path(), &["profiles", "--json"], b"");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 4);
    assert_eq!(v[2]["profile"], "network");
    assert_eq!(v[2]["allow_http"], true);
    assert_eq!(v[1]["memory_bytes"], 64 << 20);

    let out = wbx(home.path(), &["inspect", "--json", DOCK_KV], b"");
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["needs"], serde_json::json!(["kv"]));
    assert_eq!(
        v["granted_by"],
        serde_json::json!(["minimal", "network", "posix"])
    );
    assert_eq!(v["profile"], "minimal");
    assert_eq!(
        v["receipt"]["brokers"][0]["serves"],
        "workbooks:engine/kv@0.1.0"
    );

    let out = wbx(
        home.path(),
        &["inspect", "--profile", "compute", DOCK_KV],
        b"",
    );
    assert_eq!(out.status.code(), Some(120));
    assert!(text(&out.stdout).contains("refused under compute: capability not granted: kv"));
}

#[test]
fn wbx_inspect_reads_a_core_module_and_its_receipt() {
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("sends.wasm");
    let wat = r#"(module
        (import "wasi_snapshot_preview1" "fd_write" (func (param i32 i32 i32 i32) (result i32)))
        (import "wasi_snapshot_preview1" "sock_send"
            (func (param i32 i32 i32 i32 i32) (result i32)))
        (memory (export "memory") 1) (func (export "_start")))"#;
    std::fs::write(&file, wat::parse_str(wat).unwrap()).unwrap();
    let path = file.to_str().unwrap();
    let out = wbx(home.path(), &["inspect", "--json", path], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["kind"], "module");
    // A socket call needs no cap: no socket can exist for it to reach.
    assert_eq!(v["needs"], serde_json::json!([]));
    assert_eq!(v["profile"], "compute");
    assert_eq!(
        v["receipt"]["linked"],
        serde_json::json!([
            "wasi_snapshot_preview1.fd_write",
            "wasi_snapshot_preview1.sock_send"
        ])
    );
    assert_eq!(v["receipt"]["imports"][1]["cap"], "base");
    assert_eq!(
        v["receipt"]["imports"][1]["served_by"],
        "host (no socket exists: badf or notsock)"
    );
}

#[test]
fn kv_persists_across_processes_in_the_same_home() {
    let home = tempfile::tempdir().unwrap();
    let set = wbx(
        home.path(),
        &[
            "exec",
            "--profile",
            "minimal",
            KV_OPS,
            "--",
            "set",
            "k",
            "v1",
        ],
        b"",
    );
    assert_eq!(text(&set.stdout), "Ok(())\n");
    let get = wbx(
        home.path(),
        &["exec", "--profile", "minimal", KV_OPS, "--", "get", "k"],
        b"",
    );
    assert_eq!(text(&get.stdout), "v1\n");
    assert!(home.path().join("db").is_dir());
    // --home wins over WB_HOME.
    let other = tempfile::tempdir().unwrap();
    let h = other.path().to_str().unwrap();
    let get = wbx(
        home.path(),
        &[
            "--home",
            h,
            "exec",
            "--profile",
            "minimal",
            KV_OPS,
            "--",
            "get",
            "k",
        ],
        b"",
    );
    assert_eq!(text(&get.stdout), "Ok(None)\n");
}

#[test]
fn preopened_dirs_reach_the_guest_through_dir() {
    let home = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(data.path().join("f.txt"), "12345").unwrap();
    let spec = format!("{}::/data", data.path().display());
    let out = wbx(
        home.path(),
        &["exec", "--dir", &spec, SANDBOX_FILES, "--", "/data/f.txt"],
        b"",
    );
    assert_eq!(text(&out.stdout), "/data/f.txt: read 5 bytes\n");
}

#[test]
fn run_pipes_stdin_through_built_ins_and_reports_stages_as_json() {
    let home = tempfile::tempdir().unwrap();
    let out = wbx(
        home.path(),
        &["run", "sort -u | head -n 2"],
        b"b\na\nb\nc\n",
    );
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(0), "a\nb\n".into())
    );
    let out = wbx(home.path(), &["run", "--json", "seq 3 | wc -l; false"], b"");
    assert_eq!(out.status.code(), Some(1), "the last stage's status");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["stdout"], "3\n");
    assert_eq!(v["exit"], 1);
    let stages = v["stages"].as_array().unwrap();
    assert_eq!(stages.len(), 3);
    assert_eq!(stages[0]["argv"], serde_json::json!(["seq", "3"]));
    assert!(stages[0]["elapsed_us"].as_u64().is_some());
}

#[test]
fn run_verdicts_have_their_own_exit_codes() {
    let home = tempfile::tempdir().unwrap();
    let cases: &[(&[&str], i32, &str)] = &[
        (
            &["run", "echo $(id)"],
            119,
            "unsupported syntax: command substitution",
        ),
        (&["run", "echo |"], 119, "syntax error"),
        (&["run", "nosuch x"], 127, "nosuch: unknown_command"),
        (
            &["run", "cat < /etc/passwd"],
            120,
            "outside_sandbox: /etc/passwd",
        ),
        (&["run", "--profile", "root", "true"], 64, "unknown profile"),
        (
            &["run", "--memory", "8", "jq -n '[range(1000000)]'"],
            122,
            "jq: memory_limit: over 8388608 bytes",
        ),
        (
            &["run", "--fuel", "100000", "seq 1 1000000 | wc -l"],
            123,
            "seq: fuel_exhausted",
        ),
        (
            &["run", "--timeout", "50", "jq -n 'last(range(1e15))'"],
            124,
            "jq: timeout: over its 50 ms budget",
        ),
    ];
    for (args, code, needle) in cases {
        let out = wbx(home.path(), args, b"");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(*code), "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
        if let Some(flag) = raise_hint(*code) {
            assert!(err.trim_end().ends_with(flag), "{args:?}: {err}");
        }
    }
}

#[test]
fn commands_register_list_run_and_remove() {
    let home = tempfile::tempdir().unwrap();
    let out = wbx(
        home.path(),
        &["command", "register", "code", CLI_EXIT_CODE],
        b"",
    );
    assert!(
        text(&out.stdout).starts_with("registered code → sha256:"),
        "{}",
        text(&out.stderr)
    );
    let out = wbx(home.path(), &["command", "list", "--json"], b"");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["registered"][0]["name"], "code");
    assert!(v["builtins"].as_array().unwrap().iter().any(|b| b == "jq"));
    let out = wbx(home.path(), &["command", "run", "code", "--", "6"], b"");
    assert_eq!(
        (out.status.code(), text(&out.stdout)),
        (Some(6), "out\n".into())
    );
    let out = wbx(home.path(), &["run", "code 2 || echo recovered"], b"");
    assert_eq!(text(&out.stdout), "out\nrecovered\n");
    let out = wbx(home.path(), &["command", "register", "grep", CLI_CAT], b"");
    assert_eq!(out.status.code(), Some(120));
    assert!(text(&out.stderr).contains("reserved_name"));
    // Fan-out tiers are not tiers a command is registered at.
    for tier in ["container", "node"] {
        let args = ["command", "register", "boxed", CLI_CAT, "--tier", tier];
        let out = wbx(home.path(), &args, b"");
        assert_eq!(out.status.code(), Some(64), "{tier}");
        assert!(text(&out.stderr).contains("--tier is instance or os_process"));
    }
    let out = wbx(home.path(), &["command", "remove", "code"], b"");
    assert_eq!(out.status.code(), Some(0));
    let out = wbx(home.path(), &["command", "run", "code"], b"");
    assert_eq!(out.status.code(), Some(127));
}

#[test]
fn a_one_colon_read_only_mode_is_a_usage_error_not_a_writable_preopen() {
    let home = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    for spec in [
        format!("{}::/ro:ro", data.path().display()),
        format!("{}::/d::ro::more", data.path().display()),
        format!("{}::/d::readonly", data.path().display()),
    ] {
        let out = wbx(
            home.path(),
            &["exec", "--dir", &spec, SANDBOX_FILES, "--", "/d"],
            b"",
        );
        assert_eq!(out.status.code(), Some(64), "{spec}: {}", text(&out.stderr));
        assert!(text(&out.stderr).starts_with("wbx: usage: "), "{spec}");
        let out = wbx(home.path(), &["run", "--dir", &spec, "true"], b"");
        assert_eq!(out.status.code(), Some(64), "{spec}");
    }
    // A well-formed preopen that would show the guest the home is refused.
    let spec = format!("{}::/h::ro", home.path().display());
    let out = wbx(home.path(), &["run", "--dir", &spec, "true"], b"");
    assert_eq!(out.status.code(), Some(120), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("engine home"));
}

#[test]
fn wbx_audit_shows_guest_chosen_text_without_its_terminal_escapes() {
    let home = tempfile::tempdir().unwrap();
    // A command name a guest (or a user pasting a line) chose: it is
    // refused, and the refusal is audited with the name as its detail.
    let hostile = "\u{1b}]0;owned\u{7}\u{1b}[2J\u{9b}31mred";
    let out = wbx(home.path(), &["run", &format!("'{hostile}'")], b"");
    assert_eq!(out.status.code(), Some(127), "{}", text(&out.stderr));
    let out = wbx(home.path(), &["audit"], b"");
    assert!(out.status.success());
    let shown = text(&out.stdout);
    assert!(shown.contains("unknown_command"), "{shown}");
    assert!(shown.contains("\\x1b]0;owned\\x07"), "{shown}");
    assert!(
        !out.stdout.iter().any(|b| *b == 0x1b || *b == 0x07),
        "raw control bytes reached the terminal"
    );
    assert!(
        !shown.contains('\u{9b}'),
        "a C1 control reached the terminal"
    );
    // JSON carries the exact text, escaped by JSON.
    let out = wbx(home.path(), &["audit", "--json"], b"");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["recent"][0]["detail"], hostile);
}

#[test]
fn warm_compiles_every_shipped_component_once_and_then_finds_them_cached() {
    let home = tempfile::tempdir().unwrap();
    let steps = |out: &std::process::Output| -> Vec<serde_json::Value> {
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let first = steps(&wbx(home.path(), &["warm", "--json"], b""));
    let names: Vec<&str> = first.iter().map(|s| s["name"].as_str().unwrap()).collect();
    for shipped in [
        "workbooks:shell",
        "jq",
        "workbooks:kv-broker",
        "workbooks:deny-sockets",
        "workbooks:deny-http",
        // The services' own components, registered by the CLI.
        "workbooks:agent",
        "workbooks:builder",
        "shell line",
    ] {
        assert!(names.contains(&shipped), "{shipped} not warmed: {names:?}");
    }
    // A fresh home: every step compiled, none found cached.
    let cached = |list: &[serde_json::Value], flag: bool| {
        list.iter().filter(|s| s["cached"] == flag).count()
    };
    assert_eq!(cached(&first, false), first.len(), "{first:?}");
    assert_eq!(cached(&first, true), 0);
    // The same home again: every step cached, the shell line included.
    let second = steps(&wbx(home.path(), &["warm", "--json"], b""));
    assert_eq!(second.len(), first.len());
    assert_eq!(cached(&second, true), first.len(), "{second:?}");
    let line = second.iter().find(|s| s["name"] == "shell line").unwrap();
    assert_eq!(line["cached"], true);
    // Without --json it says what it did, and a line then runs warm.
    let plain = wbx(home.path(), &["warm"], b"");
    assert!(
        text(&plain.stdout).starts_with(&format!(
            "warm: {} components ready (0 compiled now)",
            first.len()
        )),
        "{}",
        text(&plain.stdout)
    );
}

#[test]
fn completions_cover_every_command_for_each_shell() {
    let home = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish"] {
        let out = wbx(home.path(), &["completions", shell], b"");
        assert!(out.status.success(), "{}", text(&out.stderr));
        let script = text(&out.stdout);
        for word in ["exec", "call", "warm", "completions", "stub", "profile"] {
            assert!(script.contains(word), "{shell} completions lack {word}");
        }
    }
    let out = wbx(home.path(), &["completions", "tcsh"], b"");
    assert_eq!(out.status.code(), Some(64), "a usage error");
    assert!(text(&out.stderr).contains("tcsh"), "{}", text(&out.stderr));
}

/// `wbx` started under a descriptor soft limit of 256 raises it to the
/// hard one: a guest that opens one file a thousand times still gets the
/// store's 512 descriptors (its preopen is one of them), then `quota`.
#[test]
fn wbx_under_a_soft_descriptor_limit_of_256_gives_a_guest_its_512() {
    let home = tempfile::tempdir().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f"), "x").unwrap();
    let out = std::process::Command::new("sh")
        .args(["-c", "ulimit -S -n 256 && exec \"$@\"", "sh"])
        .arg(env!("CARGO_BIN_EXE_wbx"))
        .arg("--home")
        .arg(home.path())
        .args(["exec", "--profile", "compute", "--dir"])
        .arg(format!("{}::/data::ro", dir.path().display()))
        .args([SANDBOX_FILES_HOLD, "--", "1000", "/data/f"])
        .env_remove("WB_LOG")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.starts_with("opened 511\nerror ") && stdout.to_lowercase().contains("quota"),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
