//! The client side of `wbx run` through a daemon: connect to the home's
//! socket, send the request, and relay stdin (once asked), stdout, stderr
//! and the exit code. No engine is built here; that is the point.
//!
//! The line runs here instead (the caller's local path) when there is no
//! daemon, when `WB_DAEMON=0`, when `--broker` is given, or when the daemon
//! refuses the request (another build, another `WB_NET_ALLOW`). Once the
//! daemon has accepted, the line is its own: a daemon lost mid-line is an
//! error, never a second run.

use super::wire::{self, Request, lock, read_frame, write_frame};
use crate::options::brokers_given;
use crate::{exit, fail, run};
use std::io::{IsTerminal, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// Runs `args`' line through the daemon serving `home`, returning its exit
/// code; `None` when it must run here.
pub(crate) fn run_line(args: &run::Args, home: &Path) -> Option<u8> {
    if std::env::var_os("WB_DAEMON").is_some_and(|v| v == "0") || brokers_given() {
        return None;
    }
    let stream = UnixStream::connect(home.join(wire::SOCKET)).ok()?;
    let request = match request(args) {
        Ok(request) => request,
        Err(code) => return Some(code),
    };
    let mut reader = stream.try_clone().ok()?;
    let writer = Arc::new(Mutex::new(stream));
    let json = serde_json::to_vec(&request).ok()?;
    write_frame(&mut *lock(&writer), wire::REQUEST, &json).ok()?;
    match read_frame(&mut reader) {
        Ok((wire::ACCEPTED, _)) => {}
        Ok((wire::REFUSED, why)) => {
            let why = String::from_utf8_lossy(&why);
            tracing::info!(%why, "the daemon refused the line; running it here");
            return None;
        }
        _ => return None,
    }
    Some(relay(reader, &writer))
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
        build: workbooks::build_id().into(),
        net_allow: std::env::var("WB_NET_ALLOW").ok(),
        llm: crate::options::llm_endpoint().fingerprint(),
        bin: crate::BIN.into(),
        line: args.line.clone(),
        json: args.json,
        stdin: !std::io::stdin().is_terminal(),
        stage: stage.clone(),
        dirs,
    })
}

/// Relays the daemon's frames until the exit code.
fn relay(mut reader: UnixStream, writer: &Arc<Mutex<UnixStream>>) -> u8 {
    let mut stdout = std::io::stdout().lock();
    let mut stdout_open = true;
    let mut stdin_sent = false;
    loop {
        match read_frame(&mut reader) {
            Ok((wire::WANT_STDIN, _)) if !stdin_sent => {
                stdin_sent = true;
                send_stdin(writer.clone());
            }
            Ok((wire::STDOUT, data)) if stdout_open => {
                if stdout
                    .write_all(&data)
                    .and_then(|()| stdout.flush())
                    .is_err()
                {
                    // As a closed stdout ends a local line's writing stage.
                    // Told from a thread: the stdin pump may hold the
                    // socket, and this one must keep reading.
                    stdout_open = false;
                    let writer = writer.clone();
                    std::thread::spawn(move || {
                        let _ = write_frame(&mut *lock(&writer), wire::STDOUT_CLOSED, b"");
                    });
                }
            }
            Ok((wire::STDERR, data)) => {
                let _ = std::io::stderr().write_all(&data);
            }
            Ok((wire::EXIT, code)) => return code.first().copied().unwrap_or(exit::ENGINE),
            Ok(_) => {}
            Err(e) => {
                let why = format!("the daemon went away during the line: {e}");
                return fail("daemon", why, exit::ENGINE);
            }
        }
    }
}

/// Sends this process's stdin to the daemon, from a thread of its own.
fn send_stdin(writer: Arc<Mutex<UnixStream>>) {
    let pump = move || {
        let mut stdin = std::io::stdin().lock();
        let mut chunk = vec![0u8; 64 << 10];
        loop {
            match stdin.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if write_frame(&mut *lock(&writer), wire::STDIN, &chunk[..n]).is_err() {
                        return;
                    }
                }
            }
        }
        let _ = write_frame(&mut *lock(&writer), wire::STDIN_END, b"");
    };
    if let Err(e) = std::thread::Builder::new()
        .name("wb-stdin".into())
        .spawn(pump)
    {
        tracing::warn!(error = %e, "cannot send stdin to the daemon");
    }
}
