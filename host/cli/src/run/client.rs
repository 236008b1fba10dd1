//! The client side of `wbx run` through a daemon: connect to the home's
//! socket, send the request, and pump stdin (once asked), stdout, stderr
//! and the exit code. No engine is built here; that is the point.
//!
//! The line runs here instead (the caller's local path) when there is no
//! daemon, when `WB_DAEMON=0`, when `--broker` is given, or when the daemon
//! refuses the request (another build, another `WB_NET_ALLOW`). Once the
//! daemon has accepted, the line is its own: a daemon lost mid-line is an
//! error, never a second run.

use crate::options::{StageOptions as _, brokers_given};
use crate::{exit, fail, run};
use std::io::IsTerminal;
use std::path::Path;
use std::sync::OnceLock;
use workbooks_wire::{self as wire, Request, Served};

/// Set once the line has been offered (or found no daemon to offer it
/// to), with the daemon's refusal if it refused: a line is offered at most
/// once, whether first before the full parse or only after it.
static OFFERED: OnceLock<Option<String>> = OnceLock::new();

/// Runs `args`' line through the daemon serving `home`, returning its exit
/// code; `None` when it must run here. Called again for the same line, it
/// only says why the daemon refused it, now that logging is set up.
pub(crate) fn run_line(args: &run::Args, home: &Path) -> Option<u8> {
    if brokers_given() {
        return None;
    }
    if let Some(refused) = OFFERED.get() {
        if let Some(why) = refused {
            tracing::info!(%why, "the daemon refused the line; running it here");
        }
        return None;
    }
    let mut refused = None;
    let served = offer(args, home, &mut refused);
    let _ = OFFERED.set(refused);
    served
}

/// Offers the line, when a daemon listens; a refusal goes into `refused`.
fn offer(args: &run::Args, home: &Path, refused: &mut Option<String>) -> Option<u8> {
    let stream = wire::connect(home)?;
    let request = match request(args) {
        Ok(request) => request,
        Err(code) => return Some(code),
    };
    match wire::offer(stream, &request, crate::BIN) {
        Served::Exit(code) => Some(code),
        Served::Refused(why) => {
            *refused = Some(why);
            None
        }
        Served::Unanswered => None,
    }
}

/// The request for `args`, or the exit code of a usage error (printed as
/// a local run prints it).
fn request(args: &run::Args) -> Result<Request, u8> {
    let stage = &args.stage;
    // The flags are checked here; `--grant` is resolved by the daemon, in
    // its home's book.
    let opts = crate::options::StageArgs {
        grant: None,
        ..stage.clone()
    }
    .to_options()?;
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
        json: crate::out::json(),
        stdin: !std::io::stdin().is_terminal(),
        stage: stage.clone(),
        dirs,
    })
}
