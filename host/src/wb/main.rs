//! `wb`: the thin client. `wb run LINE` (with the `run` verb's flags)
//! sends the line to the `wbx daemon` serving the home and relays its
//! stdin, stdout, stderr and exit code; everything else it hands, by exec
//! and with the same arguments, to the `wbx` beside it. It links no
//! engine, so its start costs what a small program's does: what is left
//! of a daemon-served line is a socket round trip and the line itself.
//!
//! The daemon serves it only when that `wbx` is the daemon's own
//! executable (the same file: device, inode, size, change time) and the
//! environment that changes what a line may reach is the daemon's
//! ([`workbooks_wire::env_digest`]); otherwise the line goes to `wbx`,
//! which runs it as it always does. So `wb` never runs a line differently
//! from `wbx`: it only skips loading it. It takes no `--dir`, `--broker`
//! or `--stub` itself (those go to `wbx` too), and it never reads stdin
//! unless the daemon has accepted the line and a stage reads it.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use workbooks_wire::{self as wire, Answer, FileId, Request, StageArgs};

/// The name `wb`'s lines speak as: the engine's, whose output they are.
const ENGINE_BIN: &str = "wbx";

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let engine = match std::env::current_exe() {
        Ok(me) => me.with_file_name(ENGINE_BIN),
        Err(e) => {
            eprintln!("wb: cannot locate itself, and so the {ENGINE_BIN} beside it: {e}");
            return ExitCode::from(wire::ENGINE_EXIT);
        }
    };
    if let Some(code) = through_daemon(&args, &engine) {
        return ExitCode::from(code);
    }
    hand_over(&engine, &args)
}

/// Runs the line through the daemon; `None` when it goes to `wbx`.
fn through_daemon(args: &[OsString], engine: &Path) -> Option<u8> {
    if std::env::var_os("WB_DAEMON").is_some_and(|v| v == "0") {
        return None;
    }
    let run = RunArgs::parse(args)?;
    let home = run.home.clone().unwrap_or_else(wire::default_home);
    let stream = UnixStream::connect(home.join(wire::SOCKET)).ok()?;
    let request = Request {
        build: None,
        engine: Some(FileId::of(engine).ok()?),
        env: wire::env_digest(),
        bin: ENGINE_BIN.into(),
        line: run.line,
        json: run.json,
        stdin: !std::io::stdin().is_terminal(),
        stage: run.stage,
        dirs: Vec::new(),
    };
    match wire::open(stream, &request).ok()? {
        Answer::Accepted { reader, writer } => Some(wire::relay(reader, &writer, ENGINE_BIN)),
        Answer::Refused(_) => None,
    }
}

/// Becomes `wbx` with the same arguments.
fn hand_over(engine: &Path, args: &[OsString]) -> ExitCode {
    use std::os::unix::process::CommandExt;
    let e = std::process::Command::new(engine).args(args).exec();
    eprintln!(
        "wb: cannot start {}: {e} (wb hands all but daemon-served lines to the {ENGINE_BIN} beside it)",
        engine.display()
    );
    ExitCode::from(wire::ENGINE_EXIT)
}

/// `[--home DIR] run [flags] LINE`, as far as `wb` takes it itself.
#[derive(Debug, PartialEq)]
struct RunArgs {
    home: Option<PathBuf>,
    json: bool,
    stage: StageArgs,
    line: String,
}

impl RunArgs {
    /// The arguments of a `run` verb `wb` can send as they are; `None` for
    /// anything else (another verb, help, a flag it does not take, a value
    /// that does not parse), which `wbx` then reads and answers.
    fn parse(args: &[OsString]) -> Option<RunArgs> {
        let mut args = args.iter().map(|a| a.to_str());
        let mut run = RunArgs {
            home: None,
            json: false,
            stage: StageArgs::default(),
            line: String::new(),
        };
        let mut verb = false;
        let mut line = None;
        let mut positional_only = false;
        while let Some(arg) = args.next() {
            let arg = arg?;
            if positional_only || !arg.starts_with('-') || arg == "-" {
                match verb {
                    false if arg == "run" => verb = true,
                    true if line.is_none() => line = Some(arg.to_string()),
                    _ => return None,
                }
                continue;
            }
            if arg == "--" {
                positional_only = true;
                continue;
            }
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) => (flag, Some(value.to_string())),
                None => (arg, None),
            };
            if flag == "--json" && verb && inline.is_none() {
                run.json = true;
                continue;
            }
            let mut value = || match &inline {
                Some(v) => Some(v.clone()),
                None => args.next()?.map(str::to_string),
            };
            let stage = &mut run.stage;
            match flag {
                "--home" => run.home = Some(PathBuf::from(value()?)),
                "--profile" if verb => stage.profile = value()?,
                "--caps" if verb => stage.caps = Some(value()?),
                "--tenant" if verb => stage.tenant = value()?,
                "--env" if verb => stage.env.push(value()?),
                "--timeout" if verb => stage.timeout = Some(value()?.parse().ok()?),
                "--fuel" if verb => stage.fuel = Some(value()?.parse().ok()?),
                "--memory" if verb => stage.memory = Some(value()?.parse().ok()?),
                _ => return None,
            }
        }
        run.line = line?;
        verb.then_some(run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Option<RunArgs> {
        RunArgs::parse(&args.iter().map(OsString::from).collect::<Vec<_>>())
    }

    #[test]
    fn a_run_line_with_its_flags_is_taken_as_clap_would_read_it() {
        let run = parse(&[
            "--home=/h",
            "run",
            "--json",
            "--profile",
            "posix",
            "--caps=vfs,net",
            "--tenant",
            "t1",
            "--env",
            "A=1",
            "--env=B=2",
            "--timeout",
            "500",
            "--fuel=9",
            "--memory",
            "64",
            "seq 3 | wc -l",
        ])
        .unwrap();
        assert_eq!(run.home, Some(PathBuf::from("/h")));
        assert!(run.json);
        assert_eq!(run.line, "seq 3 | wc -l");
        let want = StageArgs {
            profile: "posix".into(),
            caps: Some("vfs,net".into()),
            tenant: "t1".into(),
            env: vec!["A=1".into(), "B=2".into()],
            timeout: Some(500),
            fuel: Some(9),
            memory: Some(64),
            ..StageArgs::default()
        };
        assert_eq!(run.stage, want);
        assert_eq!(parse(&["run", "--", "-n"]).unwrap().line, "-n");
        assert_eq!(
            parse(&["run", "true", "--home", "/x"]).unwrap().home,
            Some("/x".into())
        );
    }

    #[test]
    fn everything_else_goes_to_the_engine() {
        for args in [
            &["exec", "x.wasm"][..],
            &["--version"],
            &["-V"],
            &["run", "--help"],
            &["run"],
            &["run", "a", "b"],
            &["run", "--dir", "/d::/d", "true"],
            &["--stub", "wasi:sockets", "run", "true"],
            &["--broker", "kv=k.wasm", "run", "true"],
            &["run", "--timeout", "soon", "true"],
            &["run", "--json=yes", "true"],
            &["run", "--profile"],
            &["--json", "run", "true"],
            &["run", "--unknown", "true"],
            &[],
        ] {
            assert_eq!(parse(args), None, "{args:?}");
        }
    }
}
