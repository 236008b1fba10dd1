//! `wbx run`: a pipeline run entirely inside the sandbox, no shell process.
//! When a `wbx daemon` of the same build serves the home, the line runs
//! there (`client.rs`), with this process's stdin and stdout.

pub(crate) mod client;

use crate::exit;
use crate::options::{StageOptions as _, engine_with, runtime, stdin_stream};
use std::io::Write;
use std::path::PathBuf;
use workbooks::{LineError, LineOutcome, LineStdout};

/// The verb's arguments, defined beside the thin client's reader of them.
pub(crate) use workbooks_wire::RunVerb as Args;

/// A `run` line that [`RunArgs`](workbooks_wire::RunArgs) takes exactly as
/// clap would, with its global flags: read without building a parser.
/// `None` for anything else, which clap then reads.
pub(crate) fn early(args: &[std::ffi::OsString]) -> Option<(Args, workbooks_wire::Globals)> {
    let run = workbooks_wire::RunArgs::parse(args)?;
    let globals = workbooks_wire::Globals {
        home: run.home,
        json: run.json,
    };
    Some((run.run, globals))
}

pub(crate) fn run(args: Args, home: PathBuf) -> u8 {
    if let Some(file) = component_file(&args.line) {
        // wasmtime's habit: `run FILE.wasm`. A line is not a file.
        return crate::fail(
            "run",
            format!(
                "`{file}` is a component file, and `run` takes a command line: run it with `{} exec {file}`",
                crate::BIN
            ),
            exit::USAGE,
        );
    }
    if let Some(code) = client::run_line(&args, &home) {
        return code;
    }
    let json = crate::out::json();
    let body = || -> Result<u8, u8> {
        let opts = args.stage.ungranted_options()?;
        let engine = engine_with(home, false, opts.stage_memory)?;
        let mut opts =
            crate::options::granted(&args.stage, &engine, opts, crate::options::LINE_SUBJECT)
                .map_err(|e| crate::fail("refused", e, exit::REFUSED))?;
        opts.stdin = stdin_stream();
        // Passed through as it is produced, as a shell's is; kept only to
        // go into the JSON.
        if !json {
            opts.stdout = LineStdout::Inherit;
        }
        let outcome = runtime()?.block_on(engine.commands().run_line(&args.line, opts));
        let mut stdout = std::io::stdout().lock();
        let mut stderr = std::io::stderr().lock();
        Ok(report(outcome, json, crate::BIN, &mut stdout, &mut stderr))
    };
    body().unwrap_or_else(|code| code)
}

/// The file a line names when it is one word naming a `.wasm` file (what
/// `wasmtime run` takes), which the shell would only call an unknown
/// command.
fn component_file(line: &str) -> Option<&str> {
    let word = line.trim();
    (word.ends_with(".wasm") && !word.contains(char::is_whitespace)).then_some(word)
}

/// Writes what a line's outcome prints (the JSON, or its stderr, or why it
/// failed, as `<bin>: <why>`) and returns its exit code: the same here and
/// in a daemon, which writes into frames for its client.
pub(crate) fn report(
    outcome: Result<LineOutcome, LineError>,
    json: bool,
    bin: &str,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> u8 {
    match outcome {
        Ok(out) if json => match serde_json::to_string(&out) {
            Ok(text) => {
                let _ = writeln!(stdout, "{text}");
                u8::try_from(out.exit).unwrap_or(1)
            }
            Err(e) => {
                let _ = writeln!(stderr, "{bin}: json: {e}");
                exit::ENGINE
            }
        },
        Ok(out) => {
            let _ = stderr.write_all(&out.stderr);
            u8::try_from(out.exit).unwrap_or(1)
        }
        Err(e) => {
            let code = exit::for_line_error(&e);
            let text = format!("{e}{}", exit::raise_hint(code));
            if json {
                let _ = writeln!(stdout, "{}", crate::out::error_json(&text, code));
            } else {
                let _ = writeln!(stderr, "{bin}: {text}");
            }
            code
        }
    }
}

#[cfg(test)]
mod tests {
    /// Argument shapes: those the client's reader takes, and those it
    /// leaves to the full parser (other verbs, help, `--dir`, repeats,
    /// values that look like flags, empty values).
    const SHAPES: &[&[&str]] = &[
        &["run", "true"],
        &["run", "--json", "seq 3 | wc -l"],
        &["--json", "run", "true"],
        &["run", "true", "--json"],
        &["run", "hello.wasm"],
        &["--home", "/h", "run", "true"],
        &["--home=/h", "run", "--profile", "posix", "true"],
        &["run", "true", "--home", "/x"],
        &["run", "--caps=vfs,net", "--tenant", "t1", "true"],
        &["run", "--env", "A=1", "--env=B=2", "--env", "C=", "env"],
        &[
            "run",
            "--timeout",
            "500",
            "--fuel=9",
            "--memory",
            "64",
            "true",
        ],
        &["run", "--", "-n"],
        &["run", "--", "--json"],
        &["run", "-"],
        &["run", ""],
        &["run", "--json", "--json", "true"],
        &["run", "--fuel", "1", "--fuel=2", "true"],
        &["--home", "/a", "run", "true", "--home", "/b"],
        &["run", "--tenant", "--json", "true"],
        &["run", "--env", "-x", "true"],
        &["run", "--fuel", "-1", "true"],
        &["run", "--profile=", "true"],
        &["run", "--caps", "", "true"],
        &["--home=", "run", "true"],
        &["run", "--timeout", "soon", "true"],
        &["run", "--json=yes", "true"],
        &["run", "a", "b"],
        &["run", "--dir", "/d::/d", "true"],
        &["--broker", "kv=k.wasm", "run", "true"],
        &["run", "--help"],
        &["run"],
    ];

    #[test]
    fn every_run_line_the_clients_reader_takes_is_read_as_the_full_parser_reads_it() {
        let taken = crate::taken_as_clap_takes(SHAPES, super::early, |full, early, args| {
            let crate::Command::Run(full) = full else {
                panic!("{args:?} is not a run for clap");
            };
            assert_eq!(full.stage, early.stage, "{args:?}");
            assert_eq!(full.line, early.line, "{args:?}");
        });
        assert_eq!(taken, 14, "the shapes the client's reader takes");
    }
}
