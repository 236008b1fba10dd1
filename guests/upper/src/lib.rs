//! The `upper` command: copies its input to stdout in uppercase.
//!
//! Input is stdin, or the files named as arguments (`-` is stdin). [`run`]
//! returns 0, or 1 if any file could not be read.

mod convert;

pub use convert::Uppercaser;
use std::io::{self, BufWriter, Read, Write};

pub const EXIT_OK: u8 = 0;
pub const EXIT_UNREADABLE: u8 = 1;

const CHUNK: usize = 1 << 16;

/// Uppercases everything `input` yields into `out`.
pub fn uppercase(input: &mut dyn Read, out: &mut impl Write) -> io::Result<()> {
    let mut converter = Uppercaser::default();
    let mut chunk = vec![0; CHUNK];
    loop {
        let read = match input.read(&mut chunk) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        converter.push(&chunk[..read], out)?;
    }
    converter.finish(out)
}

fn describe(error: &io::Error) -> String {
    let text = error.to_string();
    match text.find(" (os error") {
        Some(end) => text[..end].to_owned(),
        None => text,
    }
}

/// Runs `upper` with `args` and returns its exit code.
pub fn run(
    args: &[String],
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> u8 {
    let mut out = BufWriter::with_capacity(CHUNK, stdout);
    let mut code = EXIT_OK;
    let stdin_only = [String::from("-")];
    let names = if args.is_empty() {
        &stdin_only[..]
    } else {
        args
    };
    for name in names {
        let result = if name == "-" {
            uppercase(stdin, &mut out)
        } else {
            match std::fs::File::open(name) {
                Ok(mut file) => uppercase(&mut file, &mut out),
                Err(error) => {
                    let _ = out.flush();
                    let _ = writeln!(stderr, "upper: {name}: {}", describe(&error));
                    code = EXIT_UNREADABLE;
                    continue;
                }
            }
        };
        if let Err(error) = result {
            let _ = out.flush();
            let _ = writeln!(stderr, "upper: {name}: {}", describe(&error));
            code = EXIT_UNREADABLE;
        }
    }
    if out.flush().is_err() {
        code = EXIT_UNREADABLE;
    }
    code
}
