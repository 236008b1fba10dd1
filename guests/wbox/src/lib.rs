//! wbox: the multicall command behind the engine's built-in text tools.
//!
//! `wbox <applet> ARGS...` runs one applet (cat, echo, seq, head, tail, wc,
//! nl, rev, basename, dirname, tr, sort, uniq, true, false). When the base
//! name of argv[0] is itself an applet name, that applet runs with argv[1..].
//! Every applet works on injected streams ([`Io`]) so it can be tested
//! natively; `main.rs` wires the real ones.

mod applets;
mod args;
mod lines;
mod numbers;
mod streams;

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};

pub use streams::Io;

/// Exit code for a command line the applet (or wbox) does not accept.
pub const EXIT_USAGE: u8 = 2;

/// Runs the applet named by argv (see the crate docs) and returns its exit code.
pub fn run(argv: &[OsString], io: &mut Io) -> u8 {
    if let Some(applet) = argv.first().and_then(|arg0| applets::find(base_name(arg0))) {
        return run_applet(applet, &argv[1..], io);
    }
    match argv.get(1) {
        Some(name) if name == "--list" => {
            let listing = applets::names().join("\n") + "\n";
            match io.stdout.write_all(listing.as_bytes()) {
                Ok(()) => 0,
                Err(_) => 1,
            }
        }
        Some(name) => match applets::find(name) {
            Some(applet) => run_applet(applet, &argv[2..], io),
            None => {
                let _ = writeln!(
                    io.stderr,
                    "wbox: unknown applet '{}'",
                    name.to_string_lossy()
                );
                print_usage(io.stderr)
            }
        },
        None => print_usage(io.stderr),
    }
}

fn run_applet(applet: &applets::Applet, args: &[OsString], io: &mut Io) -> u8 {
    match (applet.run)(args, io) {
        Ok(code) => code,
        Err(err) => {
            if err.kind() != io::ErrorKind::BrokenPipe {
                let message = format!("write error: {}", streams::describe_error(&err));
                streams::report(io.stderr, applet.name, &message);
            }
            1
        }
    }
}

fn print_usage(stderr: &mut dyn Write) -> u8 {
    let _ = writeln!(
        stderr,
        "usage: wbox APPLET [ARGS...]\napplets: {}",
        applets::names().join(" ")
    );
    EXIT_USAGE
}

/// The last path component of argv[0], without a `.wasm` extension.
fn base_name(path: &OsStr) -> &OsStr {
    let bytes = path.as_encoded_bytes();
    let trimmed = bytes.strip_suffix(b".wasm").unwrap_or(bytes);
    let start = trimmed
        .iter()
        .rposition(|&b| b == b'/')
        .map_or(0, |p| p + 1);
    // Applet names are ASCII, so a name that is not UTF-8 matches none.
    match std::str::from_utf8(&trimmed[start..]) {
        Ok(text) => OsStr::new(text),
        Err(_) => OsStr::new(""),
    }
}
