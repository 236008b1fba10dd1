//! `rev`: reverse the characters of every line (UTF-8 aware; lines that are
//! not valid UTF-8 are reversed byte by byte). Line ends stay where they were.

use std::ffi::OsString;
use std::io::{self, BufRead, Write};

use super::usage_failure;
use crate::args::{self, OptSpec};
use crate::lines::split_terminator;
use crate::streams::{Failure, Io, open_input, operands_or_stdin, report_file_error, settle};

const NAME: &str = "rev";
const SYNOPSIS: &str = "[FILE]...";

/// Runs `rev`.
pub fn run(args: &[OsString], io: &mut Io) -> io::Result<u8> {
    let parsed = match args::parse(args, &OptSpec::short("")) {
        Ok(parsed) => parsed,
        Err(err) => return usage_failure(io, NAME, SYNOPSIS, &err),
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
        let outcome = reverse_lines(&mut input, &mut *io.stdout);
        status |= settle(outcome, &mut *io.stdout, &mut *io.stderr, NAME, name)?;
    }
    Ok(status)
}

fn reverse_lines(input: &mut dyn BufRead, out: &mut dyn Write) -> Result<(), Failure> {
    let mut line = Vec::new();
    let mut reversed = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line).map_err(Failure::Read)? == 0 {
            return Ok(());
        }
        let (content, terminator) = split_terminator(&line, b'\n');
        reversed.clear();
        reverse_into(content, &mut reversed);
        reversed.extend_from_slice(terminator);
        out.write_all(&reversed).map_err(Failure::Write)?;
    }
}

/// Appends `content` reversed: by characters when it is UTF-8, else by bytes.
pub fn reverse_into(content: &[u8], reversed: &mut Vec<u8>) {
    match std::str::from_utf8(content) {
        Ok(text) if !text.is_ascii() => {
            let mut encoded = [0u8; 4];
            for character in text.chars().rev() {
                reversed.extend_from_slice(character.encode_utf8(&mut encoded).as_bytes());
            }
        }
        _ => reversed.extend(content.iter().rev()),
    }
}
