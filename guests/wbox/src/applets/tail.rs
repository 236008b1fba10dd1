//! `tail`: the last lines or bytes of each input, or everything from line
//! or byte N on (`+N`). Regular files are read backwards from the end.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};

use super::usage_failure;
use crate::args::{self, OptSpec, UsageError};
use crate::lines::{find_byte, last_lines_start};
use crate::numbers::{parse_count, saturating_usize};
use crate::streams::{Failure, Io, copy_all, header_name, is_stdin, report_file_error, settle};

const NAME: &str = "tail";
const SYNOPSIS: &str = "[-n [+]LINES | -c [+]BYTES | -LINES] [-qvz] [FILE]...";
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
const BLOCK: usize = 64 * 1024;

#[derive(Clone, Copy)]
struct Amount {
    count: usize,
    bytes: bool,
    from_start: bool,
    delimiter: u8,
}

/// Runs `tail`.
pub fn run(args: &[OsString], io: &mut Io) -> io::Result<u8> {
    let parsed = match args::parse(args, &SPEC) {
        Ok(parsed) => parsed,
        Err(err) => return usage_failure(io, NAME, SYNOPSIS, &err),
    };
    let mut amount = Amount {
        count: 10,
        bytes: false,
        from_start: false,
        delimiter: b'\n',
    };
    let mut headers = None;
    for opt in &parsed.opts {
        match opt.letter {
            'n' | 'c' => {
                let value = opt.value_bytes();
                let (from_start, digits) = match value.strip_prefix(b"+") {
                    Some(rest) => (true, rest),
                    None => (false, value.strip_prefix(b"-").unwrap_or(value)),
                };
                let Some(count) = parse_count(digits) else {
                    let what = if opt.letter == 'n' { "lines" } else { "bytes" };
                    let message = format!(
                        "invalid number of {what}: '{}'",
                        String::from_utf8_lossy(value)
                    );
                    return usage_failure(io, NAME, SYNOPSIS, &UsageError::Message(message));
                };
                amount.count = saturating_usize(count);
                amount.bytes = opt.letter == 'c';
                amount.from_start = from_start;
            }
            'q' => headers = Some(false),
            'v' => headers = Some(true),
            _ => amount.delimiter = 0,
        }
    }
    let files = crate::streams::operands_or_stdin(&parsed.operands);
    let show_headers = headers.unwrap_or(files.len() > 1);
    let mut status = 0;
    let mut first_header = true;
    for name in files {
        let source = if is_stdin(name) {
            None
        } else {
            match File::open(name) {
                Ok(file) => Some(file),
                Err(err) => {
                    report_file_error(&mut *io.stdout, &mut *io.stderr, NAME, name, &err);
                    status = 1;
                    continue;
                }
            }
        };
        if show_headers {
            let gap = if first_header { "" } else { "\n" };
            writeln!(io.stdout, "{gap}==> {} <==", header_name(name))?;
            first_header = false;
        }
        let outcome = match source {
            Some(file) => tail_file(file, &mut *io.stdout, amount),
            None => tail_stream(&mut *io.stdin, &mut *io.stdout, amount),
        };
        status |= settle(outcome, &mut *io.stdout, &mut *io.stderr, NAME, name)?;
    }
    Ok(status)
}

fn tail_stream(
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    amount: Amount,
) -> Result<(), Failure> {
    if amount.from_start {
        return copy_from(input, out, amount);
    }
    let mut data = Vec::new();
    input.read_to_end(&mut data).map_err(Failure::Read)?;
    let start = if amount.bytes {
        data.len().saturating_sub(amount.count)
    } else {
        last_lines_start(&data, amount.count, amount.delimiter)
    };
    out.write_all(&data[start..]).map_err(Failure::Write)
}

fn tail_file(mut file: File, out: &mut dyn Write, amount: Amount) -> Result<(), Failure> {
    let length = match file.metadata() {
        Ok(meta) if meta.is_file() && !amount.from_start => meta.len(),
        _ => return tail_stream(&mut BufReader::with_capacity(BLOCK, file), out, amount),
    };
    let start = if amount.bytes {
        length.saturating_sub(u64::try_from(amount.count).unwrap_or(u64::MAX))
    } else {
        last_lines_offset(&mut file, length, amount).map_err(Failure::Read)?
    };
    file.seek(SeekFrom::Start(start)).map_err(Failure::Read)?;
    let mut reader = BufReader::with_capacity(BLOCK, file);
    copy_all(&mut reader, out)
}

/// Scans a seekable file backwards for the start of its last lines.
fn last_lines_offset(file: &mut File, length: u64, amount: Amount) -> io::Result<u64> {
    if amount.count == 0 {
        return Ok(length);
    }
    let mut remaining = amount.count;
    let mut block = vec![0u8; BLOCK];
    let mut end = length;
    while end > 0 {
        let size = usize::try_from(end.min(BLOCK as u64)).unwrap_or(BLOCK);
        let begin = end - size as u64;
        file.seek(SeekFrom::Start(begin))?;
        file.read_exact(&mut block[..size])?;
        for index in (0..size).rev() {
            let offset = begin + index as u64;
            if block[index] == amount.delimiter && offset + 1 != length {
                remaining -= 1;
                if remaining == 0 {
                    return Ok(offset + 1);
                }
            }
        }
        end = begin;
    }
    Ok(0)
}

/// Skips to line or byte `count` (1-based) and copies the rest.
fn copy_from(input: &mut dyn BufRead, out: &mut dyn Write, amount: Amount) -> Result<(), Failure> {
    let mut to_skip = amount.count.saturating_sub(1);
    while to_skip > 0 {
        let buffer = input.fill_buf().map_err(Failure::Read)?;
        if buffer.is_empty() {
            return Ok(());
        }
        let skipped = if amount.bytes {
            let skipped = buffer.len().min(to_skip);
            to_skip -= skipped;
            skipped
        } else {
            skip_lines(buffer, &mut to_skip, amount.delimiter)
        };
        input.consume(skipped);
    }
    copy_all(input, out)
}

fn skip_lines(buffer: &[u8], to_skip: &mut usize, delimiter: u8) -> usize {
    let mut position = 0;
    while let Some(found) = find_byte(&buffer[position..], delimiter) {
        position += found + 1;
        *to_skip -= 1;
        if *to_skip == 0 {
            return position;
        }
    }
    buffer.len()
}
