//! `wbx run`: a pipeline run entirely inside the sandbox, no shell process.
//! When a `wbx daemon` of the same build serves the home, the line runs
//! there (`daemon/client.rs`), with this process's stdin and stdout.

use crate::options::{StageArgs, StageOptions as _, engine_with, runtime, stdin_stream};
use crate::{daemon, exit};
use std::io::Write;
use std::path::PathBuf;
use workbooks::{LineError, LineOutcome, LineStdout};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    pub(crate) stage: StageArgs,
    /// Print {stdout, stderr, exit, stages} as JSON instead of passing the
    /// output through.
    #[arg(long)]
    pub(crate) json: bool,
    /// The command line, e.g. 'cat data.json | jq -r .name | sort -u'.
    pub(crate) line: String,
}

pub(crate) fn run(args: Args, home: PathBuf) -> u8 {
    if let Some(code) = daemon::client::run_line(&args, &home) {
        return code;
    }
    let body = || -> Result<u8, u8> {
        let mut opts = args.stage.to_options()?;
        opts.stdin = stdin_stream();
        // Passed through as it is produced, as a shell's is; kept only to
        // go into the JSON.
        if !args.json {
            opts.stdout = LineStdout::Inherit;
        }
        let engine = engine_with(home, false, opts.stage_memory)?;
        let outcome = runtime()?.block_on(engine.run_line(&args.line, opts));
        let mut stdout = std::io::stdout().lock();
        let mut stderr = std::io::stderr().lock();
        Ok(report(
            outcome,
            args.json,
            crate::BIN,
            &mut stdout,
            &mut stderr,
        ))
    };
    body().unwrap_or_else(|code| code)
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
            let _ = writeln!(stderr, "{bin}: {e}{}", exit::raise_hint(code));
            code
        }
    }
}
