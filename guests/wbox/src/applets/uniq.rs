//! `uniq`: collapse runs of equal adjacent lines, optionally counting them
//! (`-c`), keeping only repeated (`-d`, `-D`) or unique (`-u`) ones, and
//! comparing case-insensitively or past skipped fields and characters.

use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, BufRead, BufWriter, Write};

use super::usage_failure;
use crate::args::{self, OptSpec, UsageError};
use crate::lines::split_terminator;
use crate::numbers::{parse_u64, saturating_usize};
use crate::streams::{Failure, Io, is_stdin, open_input, report_file_error, settle};

const NAME: &str = "uniq";
const SYNOPSIS: &str = "[-cdDiuz] [-f FIELDS] [-s CHARS] [-w CHARS] [INPUT [OUTPUT]]";
const SPEC: OptSpec = OptSpec {
    short: "cdDiuzf:s:w:",
    long: &[
        ("count", 'c'),
        ("repeated", 'd'),
        ("all-repeated", 'D'),
        ("ignore-case", 'i'),
        ("unique", 'u'),
        ("zero-terminated", 'z'),
        ("skip-fields", 'f'),
        ("skip-chars", 's'),
        ("check-chars", 'w'),
    ],
    negative_numbers_are_operands: false,
    number_option: None,
    stop_at_first_operand: false,
};

#[derive(Default)]
struct Settings {
    count: bool,
    repeated_only: bool,
    all_repeated: bool,
    unique_only: bool,
    ignore_case: bool,
    skip_fields: usize,
    skip_chars: usize,
    check_chars: Option<usize>,
    delimiter: u8,
}

/// Runs `uniq`.
pub fn run(args: &[OsString], io: &mut Io) -> io::Result<u8> {
    let parsed = match args::parse(args, &SPEC) {
        Ok(parsed) => parsed,
        Err(err) => return usage_failure(io, NAME, SYNOPSIS, &err),
    };
    let mut settings = Settings {
        delimiter: b'\n',
        ..Settings::default()
    };
    for opt in &parsed.opts {
        let number = || parse_u64(opt.value_bytes()).map(saturating_usize);
        match opt.letter {
            'c' => settings.count = true,
            'd' => settings.repeated_only = true,
            'D' => settings.all_repeated = true,
            'i' => settings.ignore_case = true,
            'u' => settings.unique_only = true,
            'z' => settings.delimiter = 0,
            letter => {
                let Some(value) = number() else {
                    let message = format!(
                        "invalid number: '{}'",
                        String::from_utf8_lossy(opt.value_bytes())
                    );
                    return usage_failure(io, NAME, SYNOPSIS, &UsageError::Message(message));
                };
                match letter {
                    'f' => settings.skip_fields = value,
                    's' => settings.skip_chars = value,
                    _ => settings.check_chars = Some(value),
                }
            }
        }
    }
    let (input_name, output_name) = match parsed.operands.as_slice() {
        [] => (OsStr::new("-"), None),
        [input] => (*input, None),
        [input, output] => (*input, Some(*output)),
        _ => {
            let err = UsageError::Message("extra operand".into());
            return usage_failure(io, NAME, SYNOPSIS, &err);
        }
    };
    let mut input = match open_input(&mut *io.stdin, input_name) {
        Ok(input) => input,
        Err(err) => {
            report_file_error(&mut *io.stdout, &mut *io.stderr, NAME, input_name, &err);
            return Ok(1);
        }
    };
    match output_name.filter(|name| !is_stdin(name)) {
        None => {
            let outcome = collapse(&mut input, &mut *io.stdout, &settings);
            settle(outcome, &mut *io.stdout, &mut *io.stderr, NAME, input_name)
        }
        Some(name) => {
            let mut file = match File::create(name) {
                Ok(file) => BufWriter::new(file),
                Err(err) => {
                    report_file_error(&mut *io.stdout, &mut *io.stderr, NAME, name, &err);
                    return Ok(1);
                }
            };
            let outcome = collapse(&mut input, &mut file, &settings)
                .and_then(|()| file.flush().map_err(Failure::Write));
            match outcome {
                Err(Failure::Write(err)) => {
                    report_file_error(&mut *io.stdout, &mut *io.stderr, NAME, name, &err);
                    Ok(1)
                }
                other => settle(other, &mut *io.stdout, &mut *io.stderr, NAME, input_name),
            }
        }
    }
}

fn collapse(
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    settings: &Settings,
) -> Result<(), Failure> {
    let mut group = Vec::new();
    let mut group_size: u64 = 0;
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = input
            .read_until(settings.delimiter, &mut line)
            .map_err(Failure::Read)?;
        let (content, _) = split_terminator(&line, settings.delimiter);
        if read > 0 && group_size > 0 && same_key(&group, content, settings) {
            group_size += 1;
            if settings.all_repeated {
                if group_size == 2 {
                    emit(out, &group, None, settings)?;
                }
                emit(out, content, None, settings)?;
            }
            continue;
        }
        if group_size > 0 && !settings.all_repeated {
            let keep = match group_size {
                1 => !settings.repeated_only,
                _ => !settings.unique_only,
            };
            if keep {
                emit(out, &group, settings.count.then_some(group_size), settings)?;
            }
        }
        if read == 0 {
            return Ok(());
        }
        group.clear();
        group.extend_from_slice(content);
        group_size = 1;
    }
}

fn emit(
    out: &mut dyn Write,
    line: &[u8],
    count: Option<u64>,
    settings: &Settings,
) -> Result<(), Failure> {
    let mut write = || -> io::Result<()> {
        if let Some(count) = count {
            write!(out, "{count:7} ")?;
        }
        out.write_all(line)?;
        out.write_all(&[settings.delimiter])
    };
    write().map_err(Failure::Write)
}

fn same_key(left: &[u8], right: &[u8], settings: &Settings) -> bool {
    let left = comparison_key(left, settings);
    let right = comparison_key(right, settings);
    if settings.ignore_case {
        left.eq_ignore_ascii_case(right)
    } else {
        left == right
    }
}

/// The part of a line uniq compares: after skipped fields and characters,
/// limited to the checked characters.
fn comparison_key<'a>(line: &'a [u8], settings: &Settings) -> &'a [u8] {
    let mut start = 0;
    for _ in 0..settings.skip_fields {
        while start < line.len() && is_blank(line[start]) {
            start += 1;
        }
        while start < line.len() && !is_blank(line[start]) {
            start += 1;
        }
    }
    let start = start.saturating_add(settings.skip_chars).min(line.len());
    let rest = &line[start..];
    match settings.check_chars {
        Some(limit) => &rest[..limit.min(rest.len())],
        None => rest,
    }
}

fn is_blank(byte: u8) -> bool {
    byte == b' ' || byte == b'\t'
}
