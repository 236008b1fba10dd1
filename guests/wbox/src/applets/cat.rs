//! `cat`: concatenate inputs, optionally numbering lines (-n, -b), squeezing
//! blank lines (-s) and making tabs, line ends and control bytes visible.

use std::ffi::OsString;
use std::io::{self, BufRead, Write};

use super::usage_failure;
use crate::args::{self, OptSpec};
use crate::lines::first_line_len;
use crate::numbers::push_right_aligned;
use crate::streams::{
    Failure, Io, copy_all, open_input, operands_or_stdin, report_file_error, settle,
};

const NAME: &str = "cat";
const SYNOPSIS: &str = "[-AbeEnstTuv] [FILE]...";
const SPEC: OptSpec = OptSpec {
    short: "AbeEnstTuv",
    long: &[
        ("show-all", 'A'),
        ("number-nonblank", 'b'),
        ("show-ends", 'E'),
        ("number", 'n'),
        ("squeeze-blank", 's'),
        ("show-tabs", 'T'),
        ("show-nonprinting", 'v'),
    ],
    negative_numbers_are_operands: false,
    number_option: None,
    stop_at_first_operand: false,
};

#[derive(Default)]
struct Style {
    number_all: bool,
    number_nonblank: bool,
    squeeze_blank: bool,
    show_ends: bool,
    show_tabs: bool,
    show_nonprinting: bool,
}

impl Style {
    fn is_plain(&self) -> bool {
        !(self.number_all
            || self.number_nonblank
            || self.squeeze_blank
            || self.show_ends
            || self.show_tabs
            || self.show_nonprinting)
    }
}

/// Numbering and blank-line state that carries over from one file to the next.
struct Progress {
    line_number: u64,
    at_line_start: bool,
    previous_blank: bool,
}

/// Runs `cat`.
pub fn run(args: &[OsString], io: &mut Io) -> io::Result<u8> {
    let parsed = match args::parse(args, &SPEC) {
        Ok(parsed) => parsed,
        Err(err) => return usage_failure(io, NAME, SYNOPSIS, &err),
    };
    let mut style = Style::default();
    for opt in &parsed.opts {
        match opt.letter {
            'A' => {
                style.show_nonprinting = true;
                style.show_ends = true;
                style.show_tabs = true;
            }
            'b' => style.number_nonblank = true,
            'e' => {
                style.show_nonprinting = true;
                style.show_ends = true;
            }
            'E' => style.show_ends = true,
            'n' => style.number_all = true,
            's' => style.squeeze_blank = true,
            't' => {
                style.show_nonprinting = true;
                style.show_tabs = true;
            }
            'T' => style.show_tabs = true,
            'v' => style.show_nonprinting = true,
            _ => {}
        }
    }
    let mut progress = Progress {
        line_number: 0,
        at_line_start: true,
        previous_blank: false,
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
        let outcome = if style.is_plain() {
            copy_all(&mut input, &mut *io.stdout)
        } else {
            copy_styled(&mut input, &mut *io.stdout, &style, &mut progress)
        };
        status |= settle(outcome, &mut *io.stdout, &mut *io.stderr, NAME, name)?;
    }
    Ok(status)
}

fn copy_styled(
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    style: &Style,
    progress: &mut Progress,
) -> Result<(), Failure> {
    let mut rendered = Vec::new();
    loop {
        let chunk = input.fill_buf().map_err(Failure::Read)?;
        if chunk.is_empty() {
            return Ok(());
        }
        rendered.clear();
        let mut rest = chunk;
        while !rest.is_empty() {
            let (segment, tail) = rest.split_at(first_line_len(rest, b'\n'));
            rest = tail;
            style_segment(segment, style, progress, &mut rendered);
        }
        out.write_all(&rendered).map_err(Failure::Write)?;
        let used = chunk.len();
        input.consume(used);
    }
}

/// Renders one line, or the part of a line that fits in the current chunk.
fn style_segment(segment: &[u8], style: &Style, progress: &mut Progress, rendered: &mut Vec<u8>) {
    if progress.at_line_start {
        let blank = segment == b"\n";
        if blank && style.squeeze_blank && progress.previous_blank {
            return;
        }
        progress.previous_blank = blank;
        let numbered = if style.number_nonblank {
            !blank
        } else {
            style.number_all
        };
        if numbered {
            progress.line_number += 1;
            push_right_aligned(rendered, progress.line_number, 6);
            rendered.push(b'\t');
        }
    }
    if style.show_ends || style.show_tabs || style.show_nonprinting {
        render_line(segment, style, rendered);
    } else {
        rendered.extend_from_slice(segment);
    }
    progress.at_line_start = segment.last() == Some(&b'\n');
}

fn render_line(line: &[u8], style: &Style, rendered: &mut Vec<u8>) {
    let (content, newline) = match line.split_last() {
        Some((b'\n', content)) => (content, true),
        _ => (line, false),
    };
    for &byte in content {
        match byte {
            b'\t' if style.show_tabs => rendered.extend_from_slice(b"^I"),
            b'\t' => rendered.push(byte),
            _ if style.show_nonprinting => push_visible(byte, rendered),
            _ => rendered.push(byte),
        }
    }
    if newline {
        if style.show_ends {
            rendered.push(b'$');
        }
        rendered.push(b'\n');
    }
}

/// `^X` for control bytes, `^?` for DEL and `M-` before bytes above 127.
fn push_visible(byte: u8, rendered: &mut Vec<u8>) {
    let low = if byte >= 128 {
        rendered.extend_from_slice(b"M-");
        byte - 128
    } else {
        byte
    };
    match low {
        0..=31 => rendered.extend_from_slice(&[b'^', low + 64]),
        127 => rendered.extend_from_slice(b"^?"),
        _ => rendered.push(low),
    }
}
