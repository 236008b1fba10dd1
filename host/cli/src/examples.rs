//! `wbx examples [DIR]`: writes the components the tour and the book run
//! (`hello.wasm`, `counter.wasm`, `math-cli.wasm`), built with this `wbx`
//! from `examples/rust/` and `toolkits/math-cli/`, so a newcomer has them
//! right after the first build. A file of the same name that differs is
//! left alone unless `--force`.

use crate::{exit, fail};
use std::path::{Path, PathBuf};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The folder to write them into (made when missing).
    #[arg(default_value = ".", value_name = "DIR")]
    dir: PathBuf,
    /// Overwrite files of those names that hold something else.
    #[arg(long)]
    force: bool,
}

/// One example: its file name, its bytes and what it is.
struct Example {
    file: &'static str,
    bytes: &'static [u8],
    what: &'static str,
}

const EXAMPLES: &[Example] = &[
    Example {
        file: "hello.wasm",
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/hello.wasm")),
        what: "a wasi:cli command that greets whoever its arguments name (examples/rust/hello)",
    },
    Example {
        file: "counter.wasm",
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/counter.wasm")),
        what: "a plugin that counts its inputs in kv, so it needs a profile granting kv (examples/rust/counter)",
    },
    Example {
        file: "math-cli.wasm",
        bytes: include_bytes!(concat!(env!("OUT_DIR"), "/math-cli.wasm")),
        what: "a command that sums its arguments through an imported example:math/ops, run composed (toolkits/math-cli)",
    },
];

pub(crate) fn run(args: Args) -> u8 {
    if let Err(e) = std::fs::create_dir_all(&args.dir) {
        return fail(
            "examples",
            format!("{}: {e}", args.dir.display()),
            exit::USAGE,
        );
    }
    // Every file is checked before any is written: a refusal loses nothing.
    let held: Vec<Option<bool>> = EXAMPLES
        .iter()
        .map(|e| {
            let same = |held: Vec<u8>| held == e.bytes;
            std::fs::read(args.dir.join(e.file)).ok().map(same)
        })
        .collect();
    if !args.force
        && let Some((e, _)) = EXAMPLES.iter().zip(&held).find(|(_, h)| **h == Some(false))
    {
        return fail(
            "examples",
            format!(
                "{} exists and holds something else: move it, or overwrite it with --force",
                args.dir.join(e.file).display()
            ),
            exit::USAGE,
        );
    }
    let mut rows = Vec::new();
    for (example, held) in EXAMPLES.iter().zip(held) {
        let path = args.dir.join(example.file);
        if held == Some(true) {
            rows.push((example, "unchanged"));
        } else if let Err(e) = workbooks::files::write_output(&path, example.bytes) {
            return fail("examples", format!("{}: {e}", path.display()), exit::ENGINE);
        } else {
            rows.push((example, "wrote"));
        }
    }
    // `hello.wasm`, not `./hello.wasm`, when written here.
    let shown = |file: &str| {
        if args.dir == Path::new(".") {
            PathBuf::from(file)
        } else {
            args.dir.join(file)
        }
    };
    if crate::out::json() {
        let value: Vec<serde_json::Value> = rows
            .iter()
            .map(|(e, done)| {
                serde_json::json!({
                    "file": shown(e.file),
                    "bytes": e.bytes.len(),
                    "what": e.what,
                    "written": *done == "wrote",
                })
            })
            .collect();
        outln!("{}", serde_json::Value::Array(value));
    } else {
        for (e, done) in rows {
            outln!("{done} {}: {}", shown(e.file).display(), e.what);
        }
    }
    0
}
