//! `head`: the first lines or bytes of each input, or all but the last N.

use std::ffi::OsString;
use std::io::{self, BufRead, Write};

use super::usage_failure;
use crate::args::{self, OptSpec, UsageError};
use crate::lines::{find_byte, last_lines_start};
use crate::numbers::{parse_count, saturating_usize};
use crate::streams::{Failure, Io, header_name, open_input, operands_or_stdin, settle};

const NAME: &str = "head";
const SYNOPSIS: &str = "[-n [-]LINES | -c [-]BYTES | -LINES] [-qvz] [FILE]...";
const SPEC: OptSpec = OptSpec {
    short: "n:c:qvz",
    long: &[
        ("lines", 'n'),
        ("bytes", 'c'),
        ("quiet", 'q'),
        ("silent", 'q'),
        ("verbose", 'v'),
        ("zero-terminated", 'z'),
    ],
    negative_numbers_are_operands: false,
    number_option: Some('n'),
    stop_at_first_operand: false,
};

#[derive(Clone, Copy)]
struct Amount {
    count: usize,
    bytes: bool,
    all_but_last: bool,
}

/// Runs `head`.
pub fn run(args: &[OsString], io: &mut Io) -> io::Result<u8> {
    let parsed = match args::parse(args, &SPEC) {
        Ok(parsed) => parsed,
        Err(err) => return usage_failure(io, NAME, SYNOPSIS, &err),
    };
    let mut amount = Amount {
        count: 10,
        bytes: false,
        all_but_last: false,
    };
    let mut headers = None;
    let mut delimiter = b'\n';
    for opt in &parsed.opts {
        match opt.letter {
            'n' | 'c' => {
                let value = opt.value_bytes();
                let (all_but_last, digits) = match value.strip_prefix(b"-") {
                    Some(rest) => (true, rest),
                    None => (false, value.strip_prefix(b"+").unwrap_or(value)),
                };
                let Some(count) = parse_count(digits) else {
                    let what = if opt.letter == 'n' { "lines" } else { "bytes" };
                    let message = format!(
                        "invalid number of {what}: '{}'",
                        String::from_utf8_lossy(value)
                    );
                    return usage_failure(io, NAME, SYNOPSIS, &UsageError::Message(message));
                };
                amount = Amount {
                    count: saturating_usize(count),
                    bytes: opt.letter == 'c',
                    all_but_last,
                };
            }
            'q' => headers = Some(false),
            'v' => headers = Some(true),
            _ => delimiter = 0,
        }
    }
    let files = operands_or_stdin(&parsed.operands);
    let show_headers = headers.unwrap_or(files.len() > 1);
    let Io {
        stdin,
        stdout,
        stderr,
    } = io;
    let mut status = 0;
    let mut first_header = true;
    for name in files {
        let mut input = match open_input(&mut **stdin, name) {
            Ok(input) => input,
            Err(err) => {
                crate::streams::report_file_error(&mut **stdout, &mut **stderr, NAME, name, &err);
                status = 1;
                continue;
            }
        };
        if show_headers {
            let gap = if first_header { "" } else { "\n" };
            writeln!(stdout, "{gap}==> {} <==", header_name(name))?;
            first_header = false;
        }
        let outcome = copy_head(&mut input, &mut **stdout, amount, delimiter);
        status |= settle(outcome, &mut **stdout, &mut **stderr, NAME, name)?;
    }
    Ok(status)
}

fn copy_head(
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    amount: Amount,
    delimiter: u8,
) -> Result<(), Failure> {
    if amount.all_but_last {
        let mut data = Vec::new();
        input.read_to_end(&mut data).map_err(Failure::Read)?;
        let end = if amount.bytes {
            data.len().saturating_sub(amount.count)
        } else {
            last_lines_start(&data, amount.count, delimiter)
        };
        return out.write_all(&data[..end]).map_err(Failure::Write);
    }
    let mut remaining = amount.count;
    while remaining > 0 {
        let buffer = input.fill_buf().map_err(Failure::Read)?;
        if buffer.is_empty() {
            break;
        }
        let take = if amount.bytes {
            buffer.len().min(remaining)
        } else {
            take_lines(buffer, &mut remaining, delimiter)
        };
        if amount.bytes {
            remaining -= take;
        }
        out.write_all(&buffer[..take]).map_err(Failure::Write)?;
        input.consume(take);
    }
    Ok(())
}

/// How much of `buffer` holds at most `remaining` lines; decrements
/// `remaining` by the number of complete lines taken.
fn take_lines(buffer: &[u8], remaining: &mut usize, delimiter: u8) -> usize {
    let mut position = 0;
    while let Some(found) = find_byte(&buffer[position..], delimiter) {
        position += found + 1;
        *remaining -= 1;
        if *remaining == 0 {
            return position;
        }
    }
    buffer.len()
}
