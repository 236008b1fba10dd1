//! `wbx precompile`: compile a component or core module into the home's
//! compile cache, so a later `run`, `exec` or `command run` of it (by this
//! binary or by the compiler-less `wbr`) starts from native code. It is also
//! what `wbr` runs, with the bytes on stdin, when its cache is cold.

use crate::{exit, fail, options};
use std::io::Read;
use std::path::PathBuf;
use workbooks::Artifact;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Print nothing on success.
    #[arg(long)]
    quiet: bool,
    /// The component or core module (`-` reads stdin).
    file: PathBuf,
}

pub(crate) fn run(args: Args, home: PathBuf) -> u8 {
    let artifact = if args.file.as_os_str() == "-" {
        let mut bytes = Vec::new();
        if let Err(e) = std::io::stdin().read_to_end(&mut bytes) {
            return fail("load", format!("reading stdin: {e}"), exit::LOAD);
        }
        Artifact::from_bytes(bytes)
    } else {
        Artifact::from_file(&args.file)
    };
    let artifact = match artifact {
        Ok(a) => a,
        Err(e) => return fail("load", e, exit::LOAD),
    };
    let engine = match options::engine_with(home, false, None) {
        Ok(engine) => engine,
        Err(code) => return code,
    };
    if let Err(e) = engine.precompile(&artifact) {
        return fail("compile", e, exit::LOAD);
    }
    if crate::out::json() {
        let out = serde_json::json!({"sha256": artifact.sha256_hex(), "kind": artifact.kind()});
        outln!("{out}");
    } else if !args.quiet {
        outln!("{} {:?}: compiled", artifact.sha256_hex(), artifact.kind());
    }
    0
}
