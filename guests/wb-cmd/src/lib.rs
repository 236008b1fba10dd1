//! Shared by the engine's command guests (wbox, jq, grep, upper, shell).
//! `main` is the whole entry point of jq, grep and upper.
//!
//! On wasm32-wasip2 a command exits through `wasi:cli/exit#exit-with-code`
//! so the host sees the real code (grep's 1 and 2, jq's 5); std's
//! `process::exit` there only carries success or failure. Natively (for
//! unit tests and native comparison builds) it is `std::process::exit`.
//! A zero status returns from `main` instead: returning from `run` is
//! already success, and skips the trap an explicit exit unwinds through.

pub mod alloc;

use std::io::{Read, Write};

/// A command's body: arguments (lossy UTF-8, without the program name) and
/// the three standard streams in, exit code out.
pub type Run = fn(&[String], &mut dyn Read, &mut dyn Write, &mut dyn Write) -> u8;

/// The whole `main` of a command: wires the process's arguments and
/// standard streams to `run`, then [`finish`]es with its code.
pub fn main(run: Run) {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|arg| arg.to_string_lossy().into_owned())
        .collect();
    let code = run(
        &args,
        &mut std::io::stdin().lock(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    );
    finish(code);
}

#[cfg(target_arch = "wasm32")]
mod bindings {
    wit_bindgen::generate!({
        inline: r#"
            package wb:cmd;
            world exit {
                import wasi:cli/exit@0.2.12;
            }
        "#,
        path: ["../../wit"],
        world: "wb:cmd/exit",
        generate_all,
    });
}

/// Flushes stdout and stderr; exits with `code` unless it is 0, in which
/// case it returns so `main` ends normally. Call it last in `main`.
pub fn finish(code: u8) {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    if code != 0 {
        exit_now(code)
    }
}

/// Exits with `code` at once.
fn exit_now(code: u8) -> ! {
    #[cfg(target_arch = "wasm32")]
    {
        bindings::wasi::cli::exit::exit_with_code(code);
        unreachable!("exit-with-code returned");
    }
    #[cfg(not(target_arch = "wasm32"))]
    std::process::exit(i32::from(code))
}
