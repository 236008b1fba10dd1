//! What the CLI writes on stdout, how a closed pipe ends it, and how a
//! failure is reported: the one place every verb prints through.
//!
//! - `outln!` (this crate's `println!`; clippy refuses the std printing
//!   macros here) and [`write_bytes`] write to stdout. When the reader has gone
//!   (`wbx catalog list | head -1`), the write fails with a broken pipe and
//!   the verb is unwound with [`Closed`], which `main` turns into exit 141
//!   (128 + SIGPIPE, what a shell reports for a process its pipe ended),
//!   quietly: no message, no panic. Unwinding rather than exiting runs the
//!   verb's destructors, so a database it opened is flushed as on any exit.
//! - [`fail`] prints a failure as `wbx: <where>: <message>` on stderr, or,
//!   under `--json`, as `{"error": {"kind", "message", "exit"}}` on stdout,
//!   where `kind` is the exit code's name in [`crate::exit::TABLE`]; either
//!   way the exit code is the same.

use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether `--json` was given: output and errors are JSON.
static JSON: AtomicBool = AtomicBool::new(false);

/// Turns JSON output on for the rest of the process.
pub(crate) fn set_json(on: bool) {
    JSON.store(on, Ordering::Relaxed);
}

/// Whether `--json` was given.
pub(crate) fn json() -> bool {
    JSON.load(Ordering::Relaxed)
}

/// The payload a verb is unwound with when its stdout can take no more:
/// the exit code it ends with.
#[derive(Debug)]
pub(crate) struct Closed(u8);

/// Ends the verb: its reader is gone (exit 141).
pub(crate) fn closed() -> ! {
    std::panic::resume_unwind(Box::new(Closed(crate::exit::CLOSED_PIPE)))
}

/// Ends the verb after a write to stdout failed with `e`: quietly when the
/// reader has gone (141), else saying why once (the engine's code, 125).
fn write_failed(e: &std::io::Error) -> ! {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        closed()
    }
    let _ = writeln!(std::io::stderr(), "{}: stdout: {e}", crate::BIN);
    std::panic::resume_unwind(Box::new(Closed(crate::exit::ENGINE)))
}

/// Writes `args` and a newline on stdout, flushed; a closed stdout ends
/// the verb ([`closed`]), and any other write error ends it too, named:
/// the rest could not be written either.
pub(crate) fn write(args: std::fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    let written = stdout
        .write_fmt(args)
        .and_then(|()| stdout.write_all(b"\n"))
        .and_then(|()| stdout.flush());
    if let Err(e) = written {
        write_failed(&e)
    }
}

/// Writes `line` and a newline on stdout, flushed, and says whether it
/// could: for a caller that must not unwind where it stands (inside a
/// progress bar's suspension); it calls [`closed`] itself afterwards.
pub(crate) fn try_line(line: &str) -> bool {
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{line}")
        .and_then(|()| stdout.flush())
        .is_ok()
}

/// Writes `bytes` on stdout as they are, flushed; as [`write`].
pub(crate) fn write_bytes(bytes: &[u8]) {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        write_failed(&e)
    }
}

/// `println!` for this crate: stdout, flushed, a closed pipe ends the verb.
macro_rules! outln {
    () => {
        $crate::out::write(format_args!(""))
    };
    ($($arg:tt)*) => {
        $crate::out::write(format_args!($($arg)*))
    };
}

/// Prints a failure and returns `code`: `wbx: <where>: <message>` on
/// stderr, or under `--json` one JSON object on stdout. A message that
/// already starts with `<where>: ` is not prefixed twice.
pub(crate) fn fail(place: &str, message: impl std::fmt::Display, code: u8) -> u8 {
    let message = message.to_string();
    let text = if place.is_empty() || message.starts_with(&format!("{place}: ")) {
        message
    } else {
        format!("{place}: {message}")
    };
    report(&text, code);
    code
}

/// The JSON of the failure `text` for `code`: `{"error": {"kind",
/// "message", "exit"}}`, `kind` the exit code's name.
pub(crate) fn error_json(text: &str, code: u8) -> serde_json::Value {
    serde_json::json!({
        "error": {
            "kind": crate::exit::kind(code),
            "message": text,
            "exit": code,
        }
    })
}

/// The one JSON value a verdict verb (a check, a verify, a proof) prints
/// under `--json`: its report `value`, and when it exits `code` ≠ 0 an
/// `error` member as [`error_json`] gives it, saying `why`; so every
/// failure under `--json` carries `error`, reports included.
pub(crate) fn verdict(mut value: serde_json::Value, code: u8, why: &str) -> serde_json::Value {
    if code != 0
        && let Some(map) = value.as_object_mut()
    {
        map.insert("error".into(), error_json(why, code)["error"].clone());
    }
    value
}

/// Prints the failure `text` (already `<where>: <message>`) for `code`.
pub(crate) fn report(text: &str, code: u8) {
    if json() {
        // Under --json the error is the output: a closed stdout ends the
        // verb with the same code either way.
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{}", error_json(text, code)).and_then(|()| stdout.flush());
    } else {
        let _ = writeln!(std::io::stderr(), "{}: {text}", crate::BIN);
    }
}

/// Runs `verb`, turning the unwinding of a stdout that took no more into
/// its exit code (141 for a closed pipe).
pub(crate) fn guarded(verb: impl FnOnce() -> u8) -> u8 {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(verb)) {
        Ok(code) => code,
        Err(payload) => match payload.downcast::<Closed>() {
            Ok(closed) => closed.0,
            Err(payload) => std::panic::resume_unwind(payload),
        },
    }
}
