//! The client side of `wbx run` through a daemon: connect to the home's
//! socket, send the request, and relay stdin (once asked), stdout, stderr
//! and the exit code. No engine is built here; that is the point.
//!
//! The line runs here instead (the caller's local path) when there is no
//! daemon, when `WB_DAEMON=0`, when `--broker` is given, or when the daemon
//! refuses the request (another build, another `WB_NET_ALLOW`). Once the
//! daemon has accepted, the line is its own: a daemon lost mid-line is an
//! error, never a second run.

use crate::options::{StageOptions as _, brokers_given};
use crate::{exit, fail, run};
use std::ffi::OsString;
use std::io::IsTerminal;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::OnceLock;
use workbooks_wire::{self as wire, Request, RunArgs, Served};

/// The refusal of a line already offered before the full parse: it is not
/// offered twice.
static REFUSED: OnceLock<String> = OnceLock::new();

/// Offers a `run` line to the daemon before the full CLI is parsed (or
/// logging set up), when the arguments are ones [`RunArgs`] reads exactly
/// as clap does; the exit code when the daemon ran it.
pub(crate) fn before_parse() -> Option<u8> {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let run = RunArgs::parse(&args)?;
    let stream = wire::connect(&run.home())?;
    let request = run.request(Some(workbooks::build_id().into()), None, crate::BIN);
    served(stream, &request)
}

/// Runs `args`' line through the daemon serving `home`, returning its exit
/// code; `None` when it must run here.
pub(crate) fn run_line(args: &run::Args, home: &Path) -> Option<u8> {
    if brokers_given() {
        return None;
    }
    if REFUSED.get().is_none() {
        let stream = wire::connect(home)?;
        let request = match request(args) {
            Ok(request) => request,
            Err(code) => return Some(code),
        };
        if let Some(code) = served(stream, &request) {
            return Some(code);
        }
    }
    if let Some(why) = REFUSED.get() {
        tracing::info!(%why, "the daemon refused the line; running it here");
    }
    None
}

/// Offers `request`; a refusal is kept in [`REFUSED`].
fn served(stream: UnixStream, request: &Request) -> Option<u8> {
    match wire::offer(stream, request, crate::BIN) {
        Served::Exit(code) => Some(code),
        Served::Refused(why) => {
            let _ = REFUSED.set(why);
            None
        }
        Served::Unanswered => None,
    }
}

/// The request for `args`, or the exit code of a usage error (printed as
/// a local run prints it).
fn request(args: &run::Args) -> Result<Request, u8> {
    let stage = &args.stage;
    let opts = stage.to_options()?;
    let dirs = opts
        .dirs
        .iter()
        .map(|d| {
            let host = std::path::absolute(&d.host).map_err(|e| {
                fail(
                    "usage",
                    format!("--dir {}: {e}", d.host.display()),
                    exit::USAGE,
                )
            })?;
            Ok((host, d.guest.clone(), d.read_only))
        })
        .collect::<Result<_, u8>>()?;
    Ok(Request {
        build: Some(workbooks::build_id().into()),
        engine: None,
        env: wire::env_digest(),
        bin: crate::BIN.into(),
        line: args.line.clone(),
        json: args.json,
        stdin: !std::io::stdin().is_terminal(),
        stage: stage.clone(),
        dirs,
    })
}
