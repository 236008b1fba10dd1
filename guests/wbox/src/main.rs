//! Entry point of the `wbox` command: wires the real standard streams to
//! the applet dispatcher and exits with the applet's code.

use std::ffi::OsString;
use std::io::{self, BufReader, BufWriter, Write};

const STREAM_BUFFER: usize = 64 * 1024;

fn main() {
    let argv: Vec<OsString> = std::env::args_os().collect();
    let mut stdin = BufReader::with_capacity(STREAM_BUFFER, io::stdin().lock());
    let mut stdout = BufWriter::with_capacity(STREAM_BUFFER, io::stdout().lock());
    let mut stderr = io::stderr().lock();
    let mut io = wbox::Io {
        stdin: &mut stdin,
        stdout: &mut stdout,
        stderr: &mut stderr,
    };
    let mut code = wbox::run(&argv, &mut io);
    if let Err(err) = stdout.flush() {
        if err.kind() != io::ErrorKind::BrokenPipe {
            let _ = writeln!(stderr, "wbox: write error: {err}");
        }
        code = code.max(1);
    }
    drop(stdout);
    drop(stderr);
    wb_cmd::finish(code)
}
