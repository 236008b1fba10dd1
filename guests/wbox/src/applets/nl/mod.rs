//! `nl`: number lines. Body/header/footer styles (`a`, `t`, `n`, `pREGEX`),
//! number format and width, separator, start and increment, joined blank
//! lines and `\:` logical-page delimiters (numbering restarts at each one
//! unless `-p`). All inputs form one stream; every output line ends in a
//! newline, as in GNU nl.

mod pattern;

use std::ffi::OsString;
use std::io::{self, BufRead, Write};

use super::usage_failure;
use crate::args::{self, OptSpec, UsageError};
use crate::lines::split_terminator;
use crate::numbers::{decimal_digits, parse_i64, parse_u64, saturating_usize};
use crate::streams::{Failure, Io, open_input, operands_or_stdin, report_file_error, settle};
use pattern::Pattern;

const NAME: &str = "nl";
const SYNOPSIS: &str = "[-b STYLE] [-h STYLE] [-f STYLE] [-d CC] [-i INCR] [-l N] [-n ln|rn|rz] \
                        [-p] [-s SEP] [-v START] [-w WIDTH] [FILE]...";
const SPEC: OptSpec = OptSpec {
    short: "b:h:f:d:i:l:n:ps:v:w:",
    long: &[
        ("body-numbering", 'b'),
        ("header-numbering", 'h'),
        ("footer-numbering", 'f'),
        ("section-delimiter", 'd'),
        ("line-increment", 'i'),
        ("join-blank-lines", 'l'),
        ("number-format", 'n'),
        ("no-renumber", 'p'),
        ("number-separator", 's'),
        ("starting-line-number", 'v'),
        ("number-width", 'w'),
    ],
    negative_numbers_are_operands: false,
    number_option: None,
    stop_at_first_operand: false,
};

/// Which lines of a section get numbers.
enum Style {
    All,
    NonEmpty,
    None,
    Matching(Pattern),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Align {
    Left,
    Right,
    RightZeros,
}

struct Settings {
    styles: [Style; 3],
    delimiter: Vec<u8>,
    increment: i64,
    join_blank: u64,
    align: Align,
    renumber: bool,
    separator: Vec<u8>,
    start: i64,
    width: usize,
}

/// Numbering state that runs across all inputs.
struct State {
    number: i64,
    section: usize,
    blank_run: u64,
}

/// Widest number column accepted for `-w`.
const MAX_WIDTH: u64 = 1 << 16;

const HEADER: usize = 0;
const BODY: usize = 1;
const FOOTER: usize = 2;

/// Runs `nl`.
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
    let mut state = State {
        number: settings.start,
        section: BODY,
        blank_run: 0,
    };
    let mut status = 0;
    for name in operands_or_stdin(&parsed.operands) {
        let mut input = match open_input(&mut *io.stdin, name) {
            Ok(input) => input,
            Err(err) => {
                report_file_error(&mut *io.stdout, &mut *io.stderr, NAME, name, &err);
                status = 1;
                continue;
            }
        };
        let outcome = number_lines(&mut input, &mut *io.stdout, &settings, &mut state);
        status |= settle(outcome, &mut *io.stdout, &mut *io.stderr, NAME, name)?;
    }
    Ok(status)
}

fn settings_from(opts: &[args::Opt]) -> Result<Settings, String> {
    let mut settings = Settings {
        styles: [Style::None, Style::NonEmpty, Style::None],
        delimiter: b"\\:".to_vec(),
        increment: 1,
        join_blank: 1,
        align: Align::Right,
        renumber: true,
        separator: b"\t".to_vec(),
        start: 1,
        width: 6,
    };
    for opt in opts {
        let value = opt.value_bytes();
        let shown = String::from_utf8_lossy(value);
        let invalid = |what: &str| format!("invalid {what}: '{shown}'");
        match opt.letter {
            'b' | 'h' | 'f' => {
                let section = match opt.letter {
                    'h' => HEADER,
                    'b' => BODY,
                    _ => FOOTER,
                };
                settings.styles[section] = parse_style(value).ok_or_else(|| invalid("style"))?;
            }
            'd' => {
                settings.delimiter = match value {
                    [single] => vec![*single, b':'],
                    _ => value.to_vec(),
                }
            }
            'i' => settings.increment = parse_i64(value).ok_or_else(|| invalid("increment"))?,
            'l' => {
                settings.join_blank = parse_u64(value)
                    .filter(|&n| n > 0)
                    .ok_or_else(|| invalid("line count"))?;
            }
            'n' => {
                settings.align = match value {
                    b"ln" => Align::Left,
                    b"rn" => Align::Right,
                    b"rz" => Align::RightZeros,
                    _ => return Err(invalid("line numbering format")),
                }
            }
            'p' => settings.renumber = false,
            's' => settings.separator = value.to_vec(),
            'v' => settings.start = parse_i64(value).ok_or_else(|| invalid("starting number"))?,
            _ => {
                let width = parse_u64(value).filter(|&n| n > 0 && n <= MAX_WIDTH);
                settings.width =
                    saturating_usize(width.ok_or_else(|| invalid("line number field width"))?);
            }
        }
    }
    Ok(settings)
}

fn parse_style(value: &[u8]) -> Option<Style> {
    match value {
        b"a" => Some(Style::All),
        b"t" => Some(Style::NonEmpty),
        b"n" => Some(Style::None),
        [b'p', regex @ ..] => Some(Style::Matching(pattern::compile(regex))),
        _ => None,
    }
}

fn number_lines(
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    settings: &Settings,
    state: &mut State,
) -> Result<(), Failure> {
    let mut line = Vec::new();
    let mut rendered = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line).map_err(Failure::Read)? == 0 {
            return Ok(());
        }
        let (content, _) = split_terminator(&line, b'\n');
        rendered.clear();
        if let Some(section) = section_marker(content, &settings.delimiter) {
            if settings.renumber {
                state.number = settings.start;
            }
            state.section = section;
            state.blank_run = 0;
            rendered.push(b'\n');
        } else {
            if wants_number(content, settings, state) {
                push_number(state.number, settings, &mut rendered);
                rendered.extend_from_slice(&settings.separator);
                state.number = state.number.wrapping_add(settings.increment);
            } else {
                let blank = settings.width + settings.separator.len();
                rendered.extend(std::iter::repeat_n(b' ', blank));
            }
            rendered.extend_from_slice(content);
            rendered.push(b'\n');
        }
        out.write_all(&rendered).map_err(Failure::Write)?;
    }
}

/// The section a delimiter line switches to (`\:\:\:` header, `\:\:` body,
/// `\:` footer), or `None` for an ordinary line.
fn section_marker(content: &[u8], delimiter: &[u8]) -> Option<usize> {
    if delimiter.is_empty() || content.is_empty() || !content.len().is_multiple_of(delimiter.len())
    {
        return None;
    }
    if !content
        .chunks(delimiter.len())
        .all(|chunk| chunk == delimiter)
    {
        return None;
    }
    match content.len() / delimiter.len() {
        3 => Some(HEADER),
        2 => Some(BODY),
        1 => Some(FOOTER),
        _ => None,
    }
}

fn wants_number(content: &[u8], settings: &Settings, state: &mut State) -> bool {
    match &settings.styles[state.section] {
        Style::All if content.is_empty() => {
            state.blank_run += 1;
            if state.blank_run >= settings.join_blank {
                state.blank_run = 0;
                true
            } else {
                false
            }
        }
        Style::All => {
            state.blank_run = 0;
            true
        }
        Style::NonEmpty => !content.is_empty(),
        Style::None => false,
        Style::Matching(pattern) => pattern.is_match(content),
    }
}

fn push_number(number: i64, settings: &Settings, rendered: &mut Vec<u8>) {
    let mut buffer = [0u8; 20];
    let digits = decimal_digits(number.unsigned_abs(), &mut buffer);
    let sign: &[u8] = if number < 0 { b"-" } else { b"" };
    let padding = settings.width.saturating_sub(sign.len() + digits.len());
    match settings.align {
        Align::Left => {
            rendered.extend_from_slice(sign);
            rendered.extend_from_slice(digits);
            rendered.extend(std::iter::repeat_n(b' ', padding));
        }
        Align::Right => {
            rendered.extend(std::iter::repeat_n(b' ', padding));
            rendered.extend_from_slice(sign);
            rendered.extend_from_slice(digits);
        }
        Align::RightZeros => {
            rendered.extend_from_slice(sign);
            rendered.extend(std::iter::repeat_n(b'0', padding));
            rendered.extend_from_slice(digits);
        }
    }
}
