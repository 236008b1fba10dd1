//! `sort`: order the lines of all inputs. Byte order by default (like
//! `LC_ALL=C`), keys (`-k`) with field separators (`-t`), numeric, general,
//! human and month orderings, reverse, unique, stable, check (`-c`, `-C`),
//! NUL-terminated lines and `-o` output that may overwrite an input.

mod bytes;
mod compare;
mod keys;
mod numbers;
mod table;

use std::cmp::Ordering;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, BufWriter, Write};

use super::usage_failure;
use crate::args::{self, OptSpec, UsageError};
use crate::lines::{count_byte, find_byte};
use crate::streams::{
    Io, display_name, operands_or_stdin, os_string_from_bytes, read_all, report, report_file_error,
};
use bytes::WRITE_BATCH;
use keys::{Flags, Key};
use table::Table;

const NAME: &str = "sort";
const SYNOPSIS: &str = "[-bcCdfghiMmnrsuz] [-k POS1[,POS2]]... [-t SEP] [-o FILE] [FILE]...";
const SPEC: OptSpec = OptSpec {
    short: "bcCdfghik:mMno:rsS:t:T:uz",
    long: &[
        ("ignore-leading-blanks", 'b'),
        ("check", 'c'),
        ("dictionary-order", 'd'),
        ("ignore-case", 'f'),
        ("general-numeric-sort", 'g'),
        ("human-numeric-sort", 'h'),
        ("ignore-nonprinting", 'i'),
        ("key", 'k'),
        ("merge", 'm'),
        ("month-sort", 'M'),
        ("numeric-sort", 'n'),
        ("output", 'o'),
        ("reverse", 'r'),
        ("stable", 's'),
        ("buffer-size", 'S'),
        ("field-separator", 't'),
        ("temporary-directory", 'T'),
        ("unique", 'u'),
        ("zero-terminated", 'z'),
    ],
    negative_numbers_are_operands: false,
    number_option: None,
    stop_at_first_operand: false,
};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Check {
    Off,
    Report,
    Quiet,
}

struct Settings {
    keys: Vec<Key>,
    global: Flags,
    separator: Option<u8>,
    unique: bool,
    stable: bool,
    check: Check,
    output: Option<OsString>,
    delimiter: u8,
}

/// Runs `sort`.
pub fn run(args: &[OsString], io: &mut Io) -> io::Result<u8> {
    let parsed = match args::parse(args, &SPEC) {
        Ok(parsed) => parsed,
        Err(err) => return usage_failure(io, NAME, SYNOPSIS, &err),
    };
    let settings = match settings_from(&parsed.opts) {
        Ok(settings) => settings,
        Err(message) => {
            return usage_failure(io, NAME, SYNOPSIS, &UsageError::Message(message));
        }
    };
    let names = operands_or_stdin(&parsed.operands);
    let mut status = 0;
    let mut data = Vec::new();
    for name in &names {
        match read_all(&mut *io.stdin, name) {
            Ok(content) => {
                if data.is_empty() {
                    data = content;
                } else {
                    data.extend_from_slice(&content);
                }
                if data.last().is_some_and(|&last| last != settings.delimiter) {
                    data.push(settings.delimiter);
                }
            }
            Err(err) => {
                report_file_error(&mut *io.stdout, &mut *io.stderr, NAME, name, &err);
                status = 1;
            }
        }
    }
    if settings.check != Check::Off {
        let lines = split_lines(&data, settings.delimiter);
        return check_order(&lines, &settings, names[0], io);
    }
    let sort_into = |out: &mut dyn Write| {
        if is_plain_byte_order(&settings) {
            let reverse = settings.global.reverse;
            bytes::sort_and_write(&data, settings.delimiter, reverse, settings.unique, out)
        } else {
            let sorted = sort_lines(split_lines(&data, settings.delimiter), &settings);
            write_lines(out, &sorted, settings.delimiter)
        }
    };
    match &settings.output {
        None => sort_into(&mut *io.stdout)?,
        Some(path) => {
            let written = File::create(path).and_then(|file| {
                let mut out = BufWriter::new(file);
                sort_into(&mut out)?;
                out.flush()
            });
            if let Err(err) = written {
                report_file_error(&mut *io.stdout, &mut *io.stderr, NAME, path, &err);
                return Ok(1);
            }
        }
    }
    Ok(status)
}

fn settings_from(opts: &[args::Opt]) -> Result<Settings, String> {
    let mut settings = Settings {
        keys: Vec::new(),
        global: Flags::default(),
        separator: None,
        unique: false,
        stable: false,
        check: Check::Off,
        output: None,
        delimiter: b'\n',
    };
    for opt in opts {
        let value = opt.value_bytes();
        match opt.letter {
            'c' => settings.check = Check::Report,
            'C' => settings.check = Check::Quiet,
            'k' => settings.keys.push(keys::parse_key(value)?),
            'm' | 'S' | 'T' => {}
            'o' => settings.output = Some(os_string_from_bytes(value)),
            's' => settings.stable = true,
            't' => {
                settings.separator = Some(match value {
                    [single] => *single,
                    b"\\0" => 0,
                    [] => return Err("empty tab".into()),
                    _ => {
                        let shown = String::from_utf8_lossy(value);
                        return Err(format!("multi-character tab '{shown}'"));
                    }
                });
            }
            'u' => settings.unique = true,
            'z' => settings.delimiter = 0,
            letter => {
                let ascii = u8::try_from(letter).unwrap_or(0);
                settings.global.apply(ascii, false);
            }
        }
    }
    if settings.keys.is_empty() {
        settings.keys.push(Key::whole_line(settings.global));
    }
    let global = settings.global;
    for key in &mut settings.keys {
        key.inherit(global);
    }
    Ok(settings)
}

/// True when the only key is the whole line compared as plain bytes.
fn is_plain_byte_order(settings: &Settings) -> bool {
    let plain = Flags {
        reverse: settings.global.reverse,
        ..Flags::default()
    };
    settings.keys.len() == 1
        && settings.keys[0] == Key::whole_line(settings.global)
        && settings.keys[0].flags == plain
}

fn sort_lines<'a>(lines: Vec<&'a [u8]>, settings: &Settings) -> Vec<&'a [u8]> {
    let (table, mut entries) = Table::new(&lines, settings);
    if settings.stable || settings.unique {
        entries.sort_by(|a, b| table.compare(a, b));
    } else {
        entries.sort_unstable_by(|a, b| table.compare(a, b));
    }
    if settings.unique {
        entries.dedup_by(|later, kept| table.compare_keys(kept, later) == Ordering::Equal);
    }
    entries.into_iter().map(|entry| entry.line).collect()
}

fn check_order(lines: &[&[u8]], settings: &Settings, name: &OsStr, io: &mut Io) -> io::Result<u8> {
    let (table, entries) = Table::new(lines, settings);
    for index in 1..entries.len() {
        let order = table.compare(&entries[index - 1], &entries[index]);
        let disorder = order == Ordering::Greater || (settings.unique && order == Ordering::Equal);
        if disorder {
            if settings.check == Check::Report {
                let message = format!(
                    "{}:{}: disorder: {}",
                    display_name(name),
                    index + 1,
                    String::from_utf8_lossy(lines[index])
                );
                report(&mut *io.stderr, NAME, &message);
            }
            return Ok(1);
        }
    }
    Ok(0)
}

/// Splits terminated lines (the terminators are dropped).
fn split_lines(data: &[u8], delimiter: u8) -> Vec<&[u8]> {
    let mut lines = Vec::with_capacity(count_byte(data, delimiter));
    let mut rest = data;
    while let Some(end) = find_byte(rest, delimiter) {
        lines.push(&rest[..end]);
        rest = &rest[end + 1..];
    }
    lines
}

fn write_lines(out: &mut dyn Write, lines: &[&[u8]], delimiter: u8) -> io::Result<()> {
    let mut batch = Vec::with_capacity(WRITE_BATCH + 256);
    for line in lines {
        batch.extend_from_slice(line);
        batch.push(delimiter);
        if batch.len() >= WRITE_BATCH {
            out.write_all(&batch)?;
            batch.clear();
        }
    }
    out.write_all(&batch)
}
