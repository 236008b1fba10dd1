//! `wb`: the thin client. `wb run LINE` (with the `run` verb's flags)
//! sends the line to the `wbx daemon` serving the home and pumps its
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
use std::path::Path;
use std::process::ExitCode;
use workbooks_wire::{self as wire, FileId, RunArgs, Served};

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
    let run = RunArgs::parse(args)?;
    let stream = wire::connect(&run.home())?;
    let request = run.request(None, Some(FileId::of(engine).ok()?), ENGINE_BIN);
    match wire::offer(stream, &request, ENGINE_BIN) {
        Served::Exit(code) => Some(code),
        Served::Refused(_) | Served::Unanswered => None,
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
