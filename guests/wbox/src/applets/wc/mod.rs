//! `wc`: count lines, words, characters, bytes and the widest line of each
//! input, with a `total` line for several inputs. A single count prints
//! bare; several counts use 7-wide columns like busybox and toybox.

mod display_width;

use std::ffi::OsString;
use std::io::{self, BufRead, Write};

use super::usage_failure;
use crate::args::{self, OptSpec};
use crate::streams::{
    Failure, Input, Io, open_input, operands_or_stdin, report_file_error, settle,
};

const NAME: &str = "wc";
const SYNOPSIS: &str = "[-clmwL] [FILE]...";
const SPEC: OptSpec = OptSpec {
    short: "clmwL",
    long: &[
        ("bytes", 'c'),
        ("lines", 'l'),
        ("chars", 'm'),
        ("words", 'w'),
        ("max-line-length", 'L'),
    ],
    negative_numbers_are_operands: false,
    number_option: None,
    stop_at_first_operand: false,
};

/// Which counts to show, in output order.
#[derive(Clone, Copy, Default)]
struct Selection {
    lines: bool,
    words: bool,
    chars: bool,
    bytes: bool,
    widest: bool,
}

#[derive(Clone, Copy, Default)]
struct Counts {
    lines: u64,
    words: u64,
    chars: u64,
    bytes: u64,
    widest: u64,
}

/// Runs `wc`.
pub fn run(args: &[OsString], io: &mut Io) -> io::Result<u8> {
    let parsed = match args::parse(args, &SPEC) {
        Ok(parsed) => parsed,
        Err(err) => return usage_failure(io, NAME, SYNOPSIS, &err),
    };
    let mut selection = Selection::default();
    for opt in &parsed.opts {
        match opt.letter {
            'c' => selection.bytes = true,
            'l' => selection.lines = true,
            'm' => selection.chars = true,
            'w' => selection.words = true,
            _ => selection.widest = true,
        }
    }
    if parsed.opts.is_empty() {
        selection = Selection {
            lines: true,
            words: true,
            bytes: true,
            ..Selection::default()
        };
    }
    let named = !parsed.operands.is_empty();
    let files = operands_or_stdin(&parsed.operands);
    let mut total = Counts::default();
    let mut status = 0;
    for name in &files {
        let mut input = match open_input(&mut *io.stdin, name) {
            Ok(input) => input,
            Err(err) => {
                report_file_error(&mut *io.stdout, &mut *io.stderr, NAME, name, &err);
                status = 1;
                continue;
            }
        };
        let mut counts = Counts::default();
        let outcome = count_input(&mut input, selection, &mut counts);
        let failed = settle(outcome, &mut *io.stdout, &mut *io.stderr, NAME, name)?;
        status |= failed;
        if failed != 0 {
            continue;
        }
        let label = named.then(|| name.to_string_lossy());
        write_counts(&mut *io.stdout, selection, &counts, label.as_deref())?;
        total.lines += counts.lines;
        total.words += counts.words;
        total.chars += counts.chars;
        total.bytes += counts.bytes;
        total.widest = total.widest.max(counts.widest);
    }
    if files.len() > 1 {
        write_counts(&mut *io.stdout, selection, &total, Some("total"))?;
    }
    Ok(status)
}

fn write_counts(
    out: &mut dyn Write,
    selection: Selection,
    counts: &Counts,
    label: Option<&str>,
) -> io::Result<()> {
    let columns: Vec<u64> = [
        (selection.lines, counts.lines),
        (selection.words, counts.words),
        (selection.chars, counts.chars),
        (selection.bytes, counts.bytes),
        (selection.widest, counts.widest),
    ]
    .into_iter()
    .filter_map(|(shown, value)| shown.then_some(value))
    .collect();
    let mut line = String::new();
    for (index, value) in columns.iter().enumerate() {
        if index > 0 {
            line.push(' ');
        }
        if columns.len() == 1 {
            line.push_str(&value.to_string());
        } else {
            line.push_str(&format!("{value:7}"));
        }
    }
    if let Some(label) = label {
        line.push(' ');
        line.push_str(label);
    }
    line.push('\n');
    out.write_all(line.as_bytes())
}

fn count_input(
    input: &mut Input,
    selection: Selection,
    counts: &mut Counts,
) -> Result<(), Failure> {
    let only_bytes = selection.bytes
        && !(selection.lines || selection.words || selection.chars || selection.widest);
    if only_bytes
        && let Input::File(reader) = input
        && let Ok(meta) = reader.get_ref().metadata()
        && meta.is_file()
    {
        counts.bytes = meta.len();
        return Ok(());
    }
    if selection.chars || selection.widest {
        return count_by_line(input, counts);
    }
    let mut in_word = false;
    loop {
        let buffer = input.fill_buf().map_err(Failure::Read)?;
        if buffer.is_empty() {
            return Ok(());
        }
        counts.bytes += buffer.len() as u64;
        counts.lines += crate::lines::count_byte(buffer, b'\n') as u64;
        if selection.words {
            for &byte in buffer {
                let space = is_space(byte);
                if !space && !in_word {
                    counts.words += 1;
                }
                in_word = !space;
            }
        }
        let used = buffer.len();
        input.consume(used);
    }
}

/// Slower path for character counts and line widths: whole lines at a time
/// so multi-byte characters are never split.
fn count_by_line(input: &mut dyn BufRead, counts: &mut Counts) -> Result<(), Failure> {
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line).map_err(Failure::Read)? == 0 {
            return Ok(());
        }
        let (content, terminator) = crate::lines::split_terminator(&line, b'\n');
        counts.bytes += line.len() as u64;
        counts.lines += terminator.len() as u64;
        counts.chars += line
            .utf8_chunks()
            .map(|chunk| chunk.valid().chars().count() as u64)
            .sum::<u64>();
        counts.words += content
            .split(|&b| is_space(b))
            .filter(|word| !word.is_empty())
            .count() as u64;
        counts.widest = counts.widest.max(display_width::line_width(content) as u64);
    }
}

fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}
