//! The pipe shell: the subset exactly, byte-exact pipes, redirections in the
//! sandbox, and no argument ever read as shell text.

use std::time::Duration;
use workbooks::commands::{ArgMode, Tier};
use workbooks::{CommandError, Engine, LineError, LineOptions, LineOutcome, Preopen};

fn fresh() -> (tempfile::TempDir, Engine) {
    crate::common::engine_with_commands(&[
        ("kat", guest_artifacts::CLI_CAT),
        ("code", guest_artifacts::CLI_EXIT_CODE),
        ("spin", guest_artifacts::LIMITS_RUNAWAY_LOOP),
    ])
}

async fn line(e: &Engine, text: &str, stdin: &str) -> Result<LineOutcome, LineError> {
    let opts = LineOptions {
        stdin: stdin.to_string().into(),
        ..LineOptions::default()
    };
    e.commands().run_line(text, opts).await
}

fn out(o: &LineOutcome) -> (String, String, i32) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        o.exit,
    )
}

#[tokio::test]
async fn pipes_carry_bytes_exactly_including_a_missing_final_newline() {
    let (_h, e) = fresh();
    let o = line(&e, "kat | kat | kat", "no newline at end")
        .await
        .unwrap();
    assert_eq!(&o.stdout[..], b"no newline at end");
    let o = line(&e, "kat", "\n\n  spaced \n\n").await.unwrap();
    assert_eq!(&o.stdout[..], b"\n\n  spaced \n\n");
    assert_eq!(o.stages.len(), 1);
}

#[tokio::test]
async fn connectors_short_circuit_on_exit_status() {
    let (_h, e) = fresh();
    let o = line(&e, "code 1 && kat ran-and; code 0 && kat ran-then; code 2 || kat ran-or; code 0 || kat skipped", "").await.unwrap();
    let argv: Vec<String> = o.stages.iter().map(|s| s.argv.join(" ")).collect();
    assert_eq!(
        argv,
        [
            "code 1",
            "code 0",
            "kat ran-then",
            "code 2",
            "kat ran-or",
            "code 0"
        ]
    );
    assert_eq!(o.exit, 0);
    let o = line(&e, "code 0; code 7", "").await.unwrap();
    assert_eq!(o.exit, 7, "the last stage's status");
}

#[tokio::test]
async fn variables_expand_and_unknown_names_stay_literal() {
    let (_h, e) = fresh();
    let o = line(
        &e,
        "W=world; kat \"hello $W\" ${W}s $UNSET '${W}' \"${NOPE}\"",
        "",
    )
    .await
    .unwrap();
    assert_eq!(out(&o).1, "hello world worlds $UNSET ${W} ${NOPE}\n");
    // An expanded value is data: its `|` and `;` do nothing.
    let o = line(&e, "X='a | b; c'; kat $X", "").await.unwrap();
    assert_eq!(out(&o).1, "a | b; c\n");
    assert_eq!(o.stages.len(), 1);
}

#[tokio::test]
async fn arguments_never_become_shell_text() {
    let (_h, e) = fresh();
    let o = line(&e, "kat 'ada; rm -rf /' \"x && y\" a\\|b", "")
        .await
        .unwrap();
    assert_eq!(out(&o).1, "ada; rm -rf / x && y a|b\n");
    assert_eq!(o.stages[0].argv, ["kat", "ada; rm -rf /", "x && y", "a|b"]);
}

#[tokio::test]
async fn redirections_stay_inside_the_preopened_directories() {
    let (_h, e) = fresh();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("in.txt"), "from a file\n").unwrap();
    let opts = |stdin: &str| LineOptions {
        dirs: vec![Preopen {
            host: dir.path().into(),
            guest: "/work".into(),
            read_only: false,
        }],
        stdin: stdin.to_string().into(),
        ..LineOptions::default()
    };
    let o = e
        .commands()
        .run_line(
            "kat < /work/in.txt > /work/out.txt; kat >> /work/out.txt",
            opts("appended\n"),
        )
        .await
        .unwrap();
    assert!(o.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("out.txt")).unwrap(),
        "from a file\nappended\n"
    );
    for escape in [
        "kat < /etc/passwd",
        "kat > /work/../escape.txt",
        "kat < ../../etc/passwd",
        "kat > /tmp/x",
    ] {
        match e.commands().run_line(escape, opts("")).await {
            Err(LineError::OutsideSandbox(_)) => {}
            other => panic!("{escape}: {other:?}"),
        }
    }
    assert!(!dir.path().parent().unwrap().join("escape.txt").exists());
    match e
        .commands()
        .run_line("kat < /work/missing.txt", opts(""))
        .await
    {
        Err(LineError::Redirect(m)) => assert!(m.contains("missing.txt"), "{m}"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn stderr_redirections_to_dev_null_and_stdout_are_silent_no_ops() {
    let (_h, e) = fresh();
    let o = line(&e, "code 0 2>/dev/null | kat 2>&1", "").await.unwrap();
    assert_eq!(out(&o), ("out\n".into(), "err\n\n".into(), 0));
}

#[tokio::test]
async fn syntax_outside_the_subset_gets_a_clear_error() {
    let (_h, e) = fresh();
    for (text, name) in [
        ("kat $(id)", "command substitution"),
        ("kat `id`", "command substitution"),
        ("(kat)", "subshell"),
        ("kat &", "backgrounding"),
        ("kat <<EOF", "here-document"),
        ("for x in a; do kat; done", "compound command"),
    ] {
        match line(&e, text, "").await {
            Err(LineError::Unsupported(what)) => assert!(what.contains(name), "{text}: {what}"),
            other => panic!("{text}: {other:?}"),
        }
    }
    assert!(matches!(
        line(&e, "kat |", "").await,
        Err(LineError::Syntax(_))
    ));
    assert!(matches!(
        line(&e, "kat 'open", "").await,
        Err(LineError::Syntax(_))
    ));
    // Globs are literal.
    assert_eq!(
        out(&line(&e, "kat *.txt ?", "").await.unwrap()).1,
        "*.txt ?\n"
    );
}

#[tokio::test]
async fn a_stage_that_cannot_run_stops_the_line_with_its_name() {
    let (_h, e) = fresh();
    match line(&e, "kat | nosuch | kat", "").await {
        Err(LineError::Command {
            name,
            error: CommandError::Unknown(_),
        }) => assert_eq!(name, "nosuch"),
        other => panic!("{other:?}"),
    }
    let opts = LineOptions {
        stage_timeout: Some(Duration::from_millis(200)),
        // Only the clock may stop it, however fast the machine.
        stage_fuel: Some(u64::MAX),
        ..LineOptions::default()
    };
    match e.commands().run_line("spin", opts).await {
        Err(LineError::Command {
            error: CommandError::Timeout(_),
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    // The allowlist applies to every stage.
    let opts = LineOptions {
        allowlist: Some(["kat".to_string()].into()),
        ..LineOptions::default()
    };
    match e.commands().run_line("kat | code 0", opts).await {
        Err(LineError::Command {
            name,
            error: CommandError::NotGranted(_),
        }) => assert_eq!(name, "code"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn built_in_applets_run_by_bare_name_and_through_wbox() {
    let (_h, e) = fresh();
    let o = line(&e, "seq 1 10 | sort -rn | head -n 3", "")
        .await
        .unwrap();
    assert_eq!(out(&o), ("10\n9\n8\n".into(), String::new(), 0));
    let o = line(&e, "wbox echo -n a b | wbox tr a-z A-Z", "")
        .await
        .unwrap();
    assert_eq!(&o.stdout[..], b"A B");
    let o = line(&e, "uniq -c | sort -k2", "b\nb\na\n").await.unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), "      1 a\n      2 b\n");
    let o = line(&e, "false || echo fell back; true && echo went on", "")
        .await
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), "fell back\nwent on\n");
    // The line's stdin feeds the first stage.
    let o = line(
        &e,
        "wc -l; basename /a/b/c.txt .txt; dirname /a/b/c.txt; echo xy | rev",
        "1\n2\n",
    )
    .await
    .unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), "2\nc\n/a/b\nyx\n");
}

#[tokio::test]
async fn built_ins_cannot_be_shadowed_by_registration() {
    let (_h, e) = fresh();
    let err = e
        .registry()
        .register(
            "sort",
            std::fs::read(guest_artifacts::CLI_CAT).unwrap(),
            ArgMode::Argv,
            Tier::Instance,
        )
        .unwrap_err();
    assert!(err.to_string().starts_with("reserved_name"));
    let o = line(&e, "sort", "b\na\n").await.unwrap();
    assert_eq!(&o.stdout[..], b"a\nb\n");
}

#[tokio::test]
async fn the_shell_itself_runs_on_a_fuel_budget() {
    let (_home, e) = fresh();
    // A line long enough to keep a parser busy, with almost no fuel.
    let text = vec!["kat"; 2_000].join(" | ");
    let opts = LineOptions {
        shell_fuel: Some(100_000),
        ..LineOptions::default()
    };
    let err = e.commands().run_line(&text, opts).await.unwrap_err();
    assert!(
        matches!(
            err,
            LineError::Run(workbooks::RunError::Fuel { budget: 100_000 })
        ),
        "{err}"
    );
    // The default budget is finite and ample for ordinary lines.
    assert_eq!(
        workbooks::shell::SHELL_FUEL,
        workbooks::limits::COMMAND_FUEL
    );
    assert_eq!(line(&e, "kat | kat", "ok\n").await.unwrap().exit, 0);
}
