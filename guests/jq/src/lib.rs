//! The `jq` command: a JSON processor on the jaq interpreter.
//!
//! [`run`] takes argv (without the program name) and the three standard
//! streams, and returns the exit code, so the whole command can be tested
//! natively with in-memory streams.

pub mod cli;
mod compile;
mod execute;
mod input;
mod output;
mod session;
mod variables;

use cli::{Command, FilterSource, Options};
use std::io::{Read, Write};

/// Every output was written (and, with `-e`, the last one was truthy).
pub const EXIT_OK: u8 = 0;
/// With `-e`: the last output was `false` or `null`.
pub const EXIT_FALSY_OUTPUT: u8 = 1;
/// Bad usage, an unreadable file or malformed input.
pub const EXIT_INPUT_ERROR: u8 = 2;
/// The filter did not compile.
pub const EXIT_COMPILE_ERROR: u8 = 3;
/// With `-e`: the filter produced no output.
pub const EXIT_NO_OUTPUT: u8 = 4;
/// The filter raised an error.
pub const EXIT_RUNTIME_ERROR: u8 = 5;

fn usage_error(stderr: &mut dyn Write, message: &str) -> u8 {
    let _ = writeln!(stderr, "jq: error: {message}");
    let _ = writeln!(stderr, "Use jq --help for help with command-line options.");
    EXIT_INPUT_ERROR
}

/// Runs `jq` with `args` and returns its exit code.
pub fn run(
    args: &[String],
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> u8 {
    let options = match cli::parse(args) {
        Ok(Command::Run(options)) => options,
        Ok(Command::Help) => {
            let _ = stdout.write_all(cli::USAGE.as_bytes());
            return EXIT_OK;
        }
        Err(message) => return usage_error(stderr, &message),
    };
    run_options(&options, stdin, stdout, stderr)
}

fn run_options(
    options: &Options,
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> u8 {
    let code = match &options.filter {
        FilterSource::Inline(code) => code.clone(),
        FilterSource::File(path) => match std::fs::read_to_string(path) {
            Ok(code) => code,
            Err(error) => {
                let reason = input::describe(&error);
                return usage_error(
                    stderr,
                    &format!("Could not open {}: {reason}", path.display()),
                );
            }
        },
    };
    let globals = match variables::globals(options, &code) {
        Ok(globals) => globals,
        Err(message) => return usage_error(stderr, &message),
    };
    let filter = match compile::compile(&code, &globals.names) {
        Ok(filter) => filter,
        Err(messages) => {
            for message in &messages {
                let _ = writeln!(stderr, "jq: error: {message}");
            }
            let plural = if messages.len() == 1 { "" } else { "s" };
            let _ = writeln!(stderr, "jq: {} compile error{plural}", messages.len());
            return EXIT_COMPILE_ERROR;
        }
    };

    let sources: Vec<input::Source> = if options.files.is_empty() {
        vec![input::Source::stdin(stdin)]
    } else {
        options.files.iter().map(input::Source::file).collect()
    };
    let settings = execute::Settings {
        null_input: options.null_input,
        raw_input: options.raw_input,
        slurp: options.slurp,
        raw_output: options.raw_output,
        join_output: options.join_output,
        exit_status: options.exit_status,
        style: output::Style::new(options.indent, options.sort_keys, options.ascii_output),
    };
    execute::execute(&filter, globals.values, &sources, settings, stdout, stderr)
}
