//! Injected standard streams, opening of named inputs (`-` means stdin) and
//! coreutils-style error reports for files that cannot be read.

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};

/// Buffer size for reading named files.
const FILE_BUFFER: usize = 64 * 1024;

/// The standard streams an applet runs against; tests inject in-memory ones.
pub struct Io<'a> {
    /// Standard input.
    pub stdin: &'a mut dyn BufRead,
    /// Standard output (buffered by the caller).
    pub stdout: &'a mut dyn Write,
    /// Standard error.
    pub stderr: &'a mut dyn Write,
}

/// An opened input: either the injected stdin or a named file.
pub enum Input<'s> {
    /// The caller's standard input.
    Stdin(&'s mut dyn BufRead),
    /// A file opened by name.
    File(BufReader<File>),
}

impl Read for Input<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Input::Stdin(reader) => reader.read(buf),
            Input::File(reader) => reader.read(buf),
        }
    }
}

impl BufRead for Input<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        match self {
            Input::Stdin(reader) => reader.fill_buf(),
            Input::File(reader) => reader.fill_buf(),
        }
    }

    fn consume(&mut self, amount: usize) {
        match self {
            Input::Stdin(reader) => reader.consume(amount),
            Input::File(reader) => reader.consume(amount),
        }
    }
}

/// True when `name` designates standard input.
pub fn is_stdin(name: &OsStr) -> bool {
    name == "-"
}

/// Opens `name` for reading, or hands back stdin for `-`.
pub fn open_input<'s>(stdin: &'s mut dyn BufRead, name: &OsStr) -> io::Result<Input<'s>> {
    if is_stdin(name) {
        return Ok(Input::Stdin(stdin));
    }
    let file = File::open(name)?;
    Ok(Input::File(BufReader::with_capacity(FILE_BUFFER, file)))
}

/// Reads the whole of `name` (or stdin for `-`) into memory.
pub fn read_all(stdin: &mut dyn BufRead, name: &OsStr) -> io::Result<Vec<u8>> {
    if is_stdin(name) {
        let mut data = Vec::new();
        stdin.read_to_end(&mut data)?;
        return Ok(data);
    }
    std::fs::read(name)
}

/// The operands, or a lone `-` (stdin) when there are none.
pub fn operands_or_stdin<'a>(operands: &[&'a OsStr]) -> Vec<&'a OsStr> {
    if operands.is_empty() {
        vec![OsStr::new("-")]
    } else {
        operands.to_vec()
    }
}

/// The message coreutils prints for an I/O error, without Rust's "(os error N)".
pub fn describe_error(err: &io::Error) -> String {
    let text = match err.kind() {
        io::ErrorKind::NotFound => "No such file or directory",
        io::ErrorKind::PermissionDenied => "Permission denied",
        io::ErrorKind::IsADirectory => "Is a directory",
        io::ErrorKind::NotADirectory => "Not a directory",
        io::ErrorKind::BrokenPipe => "Broken pipe",
        io::ErrorKind::StorageFull => "No space left on device",
        _ => return strip_os_error_suffix(err.to_string()),
    };
    text.to_string()
}

fn strip_os_error_suffix(mut text: String) -> String {
    if let Some(start) = text.find(" (os error ") {
        text.truncate(start);
    }
    text
}

/// A file name as shown in messages.
pub fn display_name(name: &OsStr) -> Cow<'_, str> {
    name.to_string_lossy()
}

/// Writes `applet: name: reason` to stderr, after flushing what stdout
/// holds so the message lands after the output that preceded it. Failing
/// streams are ignored here: there is nowhere left to report them.
pub fn report_file_error(
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
    applet: &str,
    name: &OsStr,
    err: &io::Error,
) {
    let _ = stdout.flush();
    let _ = writeln!(
        stderr,
        "{applet}: {}: {}",
        display_name(name),
        describe_error(err)
    );
}

/// Writes `applet: message` to stderr, ignoring a failing stderr.
pub fn report(stderr: &mut dyn Write, applet: &str, message: &str) {
    let _ = writeln!(stderr, "{applet}: {message}");
}

/// Turns raw argument bytes (as produced by `OsStr::as_encoded_bytes`) back
/// into an OS string, for option values that name files. Outside Unix the
/// bytes are read as UTF-8, which is exact on WASI where paths are strings.
pub fn os_string_from_bytes(bytes: &[u8]) -> OsString {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        OsStr::from_bytes(bytes).to_os_string()
    }
    #[cfg(not(unix))]
    {
        OsString::from(String::from_utf8_lossy(bytes).into_owned())
    }
}

/// A failure while moving data from an input to stdout: reading is reported
/// per file and processing goes on; writing stops the applet.
#[derive(Debug)]
pub enum Failure {
    /// Reading the input failed.
    Read(io::Error),
    /// Writing the output failed.
    Write(io::Error),
}

/// Resolves one input's outcome: 0 on success, 1 after reporting a read
/// error, or the write error itself for the caller to propagate.
pub fn settle(
    outcome: Result<(), Failure>,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
    applet: &str,
    name: &OsStr,
) -> io::Result<u8> {
    match outcome {
        Ok(()) => Ok(0),
        Err(Failure::Read(err)) => {
            report_file_error(stdout, stderr, applet, name, &err);
            Ok(1)
        }
        Err(Failure::Write(err)) => Err(err),
    }
}

/// The name coreutils shows in `==> NAME <==` headers.
pub fn header_name(name: &OsStr) -> Cow<'_, str> {
    if is_stdin(name) {
        Cow::Borrowed("standard input")
    } else {
        display_name(name)
    }
}

/// Copies everything left in `input` to `out`.
pub fn copy_all(input: &mut dyn BufRead, out: &mut dyn Write) -> Result<(), Failure> {
    loop {
        let buffer = input.fill_buf().map_err(Failure::Read)?;
        if buffer.is_empty() {
            return Ok(());
        }
        out.write_all(buffer).map_err(Failure::Write)?;
        let used = buffer.len();
        input.consume(used);
    }
}
