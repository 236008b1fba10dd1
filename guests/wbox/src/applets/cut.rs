//! `cut`: print selected parts of every line: bytes (`-b`), characters
//! (`-c`, UTF-8 aware) or fields split on a one-byte delimiter (`-f`, `-d`,
//! TAB by default; `-s` drops lines without one). A LIST is ranges joined
//! by commas: `N`, `N-M`, `N-` and `-M`, counted from 1; selected parts
//! come out in input order, each once, as POSIX says.

use std::ffi::OsString;
use std::io::{self, BufRead, Write};

use super::usage_failure;
use crate::args::{self, OptSpec, UsageError};
use crate::lines::split_terminator;
use crate::streams::{Failure, Io, open_input, operands_or_stdin, report_file_error, settle};

const NAME: &str = "cut";
const SYNOPSIS: &str = "-b LIST | -c LIST | -f LIST [-d DELIM] [-s] [-z] [FILE]...";
const SPEC: OptSpec = OptSpec {
    short: "b:c:f:d:snz",
    long: &[
        ("bytes", 'b'),
        ("characters", 'c'),
        ("fields", 'f'),
        ("delimiter", 'd'),
        ("only-delimited", 's'),
        ("zero-terminated", 'z'),
    ],
    negative_numbers_are_operands: false,
    number_option: None,
    stop_at_first_operand: false,
};

/// What a line is cut into.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Unit {
    Bytes,
    Chars,
    Fields,
}

/// Inclusive 1-based ranges, sorted and merged.
struct List(Vec<(usize, usize)>);

impl List {
    fn parse(text: &[u8]) -> Result<List, String> {
        let text = std::str::from_utf8(text).map_err(|_| "the list is not text".to_string())?;
        let number = |s: &str| -> Result<usize, String> {
            match s.parse::<usize>() {
                Ok(0) => Err("fields and positions are numbered from 1".into()),
                Ok(n) => Ok(n),
                Err(_) => Err(format!("invalid list value: '{s}'")),
            }
        };
        let mut ranges = Vec::new();
        for part in text.split(',') {
            let range = match part.split_once('-') {
                None => {
                    let n = number(part)?;
                    (n, n)
                }
                Some(("", "")) => return Err("invalid range with no endpoint: -".into()),
                Some(("", hi)) => (1, number(hi)?),
                Some((lo, "")) => (number(lo)?, usize::MAX),
                Some((lo, hi)) => {
                    let (lo, hi) = (number(lo)?, number(hi)?);
                    if hi < lo {
                        return Err(format!("invalid decreasing range: '{part}'"));
                    }
                    (lo, hi)
                }
            };
            ranges.push(range);
        }
        ranges.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::new();
        for (lo, hi) in ranges {
            match merged.last_mut() {
                Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi)),
            }
        }
        Ok(List(merged))
    }

    fn has(&self, position: usize) -> bool {
        self.0
            .iter()
            .any(|(lo, hi)| (*lo..=*hi).contains(&position))
    }
}

struct Settings {
    unit: Unit,
    list: List,
    delimiter: u8,
    only_delimited: bool,
    terminator: u8,
}

/// Runs `cut`.
pub fn run(args: &[OsString], io: &mut Io) -> io::Result<u8> {
    let parsed = match args::parse(args, &SPEC) {
        Ok(parsed) => parsed,
        Err(err) => return usage_failure(io, NAME, SYNOPSIS, &err),
    };
    let usage = |io: &mut Io, message: String| {
        usage_failure(io, NAME, SYNOPSIS, &UsageError::Message(message))
    };
    let mut chosen: Option<(Unit, &[u8])> = None;
    let mut delimiter = None;
    let mut only_delimited = false;
    let mut terminator = b'\n';
    for opt in &parsed.opts {
        let unit = match opt.letter {
            'b' => Unit::Bytes,
            'c' => Unit::Chars,
            'f' => Unit::Fields,
            'd' => {
                match opt.value_bytes() {
                    [byte] => delimiter = Some(*byte),
                    _ => return usage(io, "the delimiter must be a single byte".into()),
                }
                continue;
            }
            's' => {
                only_delimited = true;
                continue;
            }
            'z' => {
                terminator = 0;
                continue;
            }
            // -n: do not split multibyte characters; bytes are bytes here.
            _ => continue,
        };
        if chosen.is_some() {
            return usage(io, "only one list may be specified".into());
        }
        chosen = Some((unit, opt.value_bytes()));
    }
    let Some((unit, list)) = chosen else {
        return usage(
            io,
            "you must specify a list of bytes, characters, or fields".into(),
        );
    };
    if unit != Unit::Fields && (delimiter.is_some() || only_delimited) {
        return usage(
            io,
            "a delimiter or -s may be given only when operating on fields".into(),
        );
    }
    let list = match List::parse(list) {
        Ok(list) => list,
        Err(message) => return usage(io, message),
    };
    let settings = Settings {
        unit,
        list,
        delimiter: delimiter.unwrap_or(b'\t'),
        only_delimited,
        terminator,
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
        let outcome = cut_lines(&mut input, &mut *io.stdout, &settings);
        status |= settle(outcome, &mut *io.stdout, &mut *io.stderr, NAME, name)?;
    }
    Ok(status)
}

fn cut_lines(input: &mut dyn BufRead, out: &mut dyn Write, s: &Settings) -> Result<(), Failure> {
    let mut line = Vec::new();
    let mut kept = Vec::new();
    loop {
        line.clear();
        if input
            .read_until(s.terminator, &mut line)
            .map_err(Failure::Read)?
            == 0
        {
            return Ok(());
        }
        let (content, _) = split_terminator(&line, s.terminator);
        kept.clear();
        if !cut_one(content, s, &mut kept) {
            continue;
        }
        kept.push(s.terminator);
        out.write_all(&kept).map_err(Failure::Write)?;
    }
}

/// Appends the selected parts of `content` to `kept`; false when the line
/// is dropped (`-s` and no delimiter in it).
fn cut_one(content: &[u8], s: &Settings, kept: &mut Vec<u8>) -> bool {
    match s.unit {
        Unit::Bytes => {
            for (i, byte) in content.iter().enumerate() {
                if s.list.has(i + 1) {
                    kept.push(*byte);
                }
            }
        }
        Unit::Chars => match std::str::from_utf8(content) {
            Ok(text) => {
                for (i, c) in text.chars().enumerate() {
                    if s.list.has(i + 1) {
                        let mut encoded = [0u8; 4];
                        kept.extend_from_slice(c.encode_utf8(&mut encoded).as_bytes());
                    }
                }
            }
            // Not UTF-8: one byte, one character.
            Err(_) => {
                let bytes = Settings {
                    unit: Unit::Bytes,
                    list: List(s.list.0.clone()),
                    ..*s
                };
                return cut_one(content, &bytes, kept);
            }
        },
        Unit::Fields => {
            if !content.contains(&s.delimiter) {
                // A line without a delimiter is printed whole, unless -s.
                if s.only_delimited {
                    return false;
                }
                kept.extend_from_slice(content);
                return true;
            }
            let mut first = true;
            for (i, field) in content.split(|b| *b == s.delimiter).enumerate() {
                if s.list.has(i + 1) {
                    if !first {
                        kept.push(s.delimiter);
                    }
                    kept.extend_from_slice(field);
                    first = false;
                }
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(args: &[&str], input: &str) -> (u8, String) {
        let args: Vec<OsString> = args.iter().map(OsString::from).collect();
        let mut stdin = io::Cursor::new(input.as_bytes().to_vec());
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        let mut io = Io {
            stdin: &mut stdin,
            stdout: &mut stdout,
            stderr: &mut stderr,
        };
        let code = run(&args, &mut io).unwrap();
        (code, String::from_utf8(stdout).unwrap())
    }

    #[test]
    fn fields_on_a_delimiter_come_out_in_input_order_each_once() {
        assert_eq!(cut(&["-d,", "-f2"], "a,b,c\nd,e,f\n"), (0, "b\ne\n".into()));
        assert_eq!(
            cut(&["-d", ",", "-f", "3,1,1"], "a,b,c\n"),
            (0, "a,c\n".into())
        );
        assert_eq!(cut(&["-d:", "-f2-"], "a:b:c\n"), (0, "b:c\n".into()));
        assert_eq!(cut(&["-f1"], "a\tb\nno-tab\n"), (0, "a\nno-tab\n".into()));
        assert_eq!(cut(&["-s", "-f1"], "a\tb\nno-tab\n"), (0, "a\n".into()));
    }

    #[test]
    fn bytes_and_characters_are_counted_from_one() {
        assert_eq!(cut(&["-b", "1-2,4"], "abcde\n"), (0, "abd\n".into()));
        assert_eq!(cut(&["-c", "-2"], "héllo\n"), (0, "hé\n".into()));
        assert_eq!(cut(&["-c3-"], "abcd"), (0, "cd\n".into()));
    }

    #[test]
    fn a_bad_list_or_two_lists_are_usage_errors() {
        assert_eq!(cut(&["-f0"], "a\n").0, crate::EXIT_USAGE);
        assert_eq!(cut(&["-f", "3-1"], "a\n").0, crate::EXIT_USAGE);
        assert_eq!(cut(&["-b1", "-f1"], "a\n").0, crate::EXIT_USAGE);
        assert_eq!(cut(&["-b1", "-d,"], "a\n").0, crate::EXIT_USAGE);
        assert_eq!(cut(&[], "a\n").0, crate::EXIT_USAGE);
    }
}
