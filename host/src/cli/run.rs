//! `wbx run`: a pipeline run entirely inside the sandbox, no shell process.

use crate::options::{StageArgs, engine_with, runtime, stdin_stream};
use crate::{exit, fail};
use std::io::Write;
use std::path::PathBuf;
use workbooks::LineStdout;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    #[command(flatten)]
    stage: StageArgs,
    /// Print {stdout, stderr, exit, stages} as JSON instead of passing the
    /// output through.
    #[arg(long)]
    json: bool,
    /// The command line, e.g. 'cat data.json | jq -r .name | sort -u'.
    line: String,
}

pub(crate) fn run(args: Args, home: PathBuf) -> u8 {
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
        match outcome {
            Ok(out) if args.json => {
                let json =
                    serde_json::to_string(&out).map_err(|e| fail("json", e, exit::ENGINE))?;
                println!("{json}");
                Ok(u8::try_from(out.exit).unwrap_or(1))
            }
            Ok(out) => {
                let _ = std::io::stderr().write_all(&out.stderr);
                Ok(u8::try_from(out.exit).unwrap_or(1))
            }
            Err(e) => {
                eprintln!("{}: {e}", crate::BIN);
                Ok(exit::for_line_error(&e))
            }
        }
    };
    body().unwrap_or_else(|code| code)
}
