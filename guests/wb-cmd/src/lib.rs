//! Shared by the engine's command guests (wbox, jq, grep, upper, shell).
//!
//! On wasm32-wasip2 a command exits through `wasi:cli/exit#exit-with-code`
//! so the host sees the real code (grep's 1 and 2, jq's 5); std's
//! `process::exit` there only carries success or failure. Natively (for
//! unit tests and native comparison builds) it is `std::process::exit`.
//! A zero status returns from `main` instead: returning from `run` is
//! already success, and skips the trap an explicit exit unwinds through.

use std::io::Write;

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
    if code == 0 {
        let _ = std::io::stdout().flush();
        let _ = std::io::stderr().flush();
        return;
    }
    exit(code)
}

/// Flushes stdout and stderr, then exits with `code`.
pub fn exit(code: u8) -> ! {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    #[cfg(target_arch = "wasm32")]
    {
        bindings::wasi::cli::exit::exit_with_code(code);
        unreachable!("exit-with-code returned");
    }
    #[cfg(not(target_arch = "wasm32"))]
    std::process::exit(i32::from(code))
}
