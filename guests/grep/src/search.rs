//! Searches one input's bytes line by line and prints what the options ask
//! for: selected lines (with context), only the matches, a count, or the
//! file name.

use crate::cli::Options;
use crate::matcher::Matcher;
use std::collections::VecDeque;
use std::io::{self, Write};

/// Separator after prefixes: `:` for selected lines, `-` for context.
const SELECTED: u8 = b':';
const CONTEXT: u8 = b'-';

/// A line of the input: its number (from 1), byte offset and text.
#[derive(Clone, Copy)]
struct Line<'d> {
    number: u64,
    offset: usize,
    text: &'d [u8],
}

/// Splits input into lines; a final line without `\n` still counts.
fn lines(data: &[u8]) -> impl Iterator<Item = Line<'_>> {
    let body = data.strip_suffix(b"\n").unwrap_or(data);
    let mut offset = 0;
    let mut number = 0;
    body.split(|byte| *byte == b'\n')
        .filter(move |_| !data.is_empty())
        .map(move |text| {
            number += 1;
            let line = Line {
                number,
                offset,
                text,
            };
            offset += text.len() + 1;
            line
        })
}

/// State shared across all inputs of one invocation.
pub struct Searcher<'o> {
    pub options: &'o Options,
    pub matcher: &'o Matcher,
    pub show_names: bool,
    /// Whether a context group was printed, so the next one needs `--`.
    printed_group: bool,
}

/// What searching one input found.
pub struct Found {
    pub selected: u64,
    /// The input holds NUL bytes and a line was selected but not printed.
    pub binary_matched: bool,
}

impl<'o> Searcher<'o> {
    pub fn new(options: &'o Options, matcher: &'o Matcher, show_names: bool) -> Self {
        Self {
            options,
            matcher,
            show_names,
            printed_group: false,
        }
    }

    fn uses_context(&self) -> bool {
        self.options.before_context > 0 || self.options.after_context > 0
    }

    fn prefix(
        &self,
        out: &mut impl Write,
        name: &str,
        line: Line,
        offset: usize,
        separator: u8,
    ) -> io::Result<()> {
        if self.show_names {
            self.name(out, name, separator)?;
        }
        if self.options.line_number {
            write!(out, "{}", line.number)?;
            out.write_all(&[separator])?;
        }
        if self.options.byte_offset {
            write!(out, "{offset}")?;
            out.write_all(&[separator])?;
        }
        Ok(())
    }

    /// Writes a file name followed by `terminator`, or by NUL with `-Z`.
    fn name(&self, out: &mut impl Write, name: &str, terminator: u8) -> io::Result<()> {
        out.write_all(name.as_bytes())?;
        out.write_all(&[if self.options.null_after_name {
            0
        } else {
            terminator
        }])
    }

    fn print_line(
        &self,
        out: &mut impl Write,
        name: &str,
        line: Line,
        separator: u8,
    ) -> io::Result<()> {
        self.prefix(out, name, line, line.offset, separator)?;
        out.write_all(line.text)?;
        out.write_all(b"\n")
    }

    fn print_matches(&self, out: &mut impl Write, name: &str, line: Line) -> io::Result<()> {
        if self.options.invert {
            return Ok(());
        }
        let mut position = 0;
        while let Some((start, end)) = self.matcher.find_at(line.text, position) {
            if start == end {
                position = end + 1;
                if position > line.text.len() {
                    break;
                }
                continue;
            }
            self.prefix(out, name, line, line.offset + start, SELECTED)?;
            out.write_all(&line.text[start..end])?;
            out.write_all(b"\n")?;
            position = end;
        }
        Ok(())
    }

    /// Only a yes/no or a number per input is printed, not lines.
    fn summary_only(&self) -> bool {
        let options = self.options;
        options.quiet || options.count || options.files_with_matches || options.files_without_match
    }

    /// Searches `data`, named `name` in output, and prints the results.
    pub fn search(&mut self, out: &mut impl Write, name: &str, data: &[u8]) -> io::Result<Found> {
        let options = self.options;
        let limit = options.max_count.unwrap_or(u64::MAX);
        let binary = !options.binary_as_text && data.contains(&0);
        let stop_at_first =
            options.quiet || options.files_with_matches || options.files_without_match;
        let print_lines = !self.summary_only() && !binary;
        let context = print_lines && self.uses_context() && !options.only_matching;

        let mut selected = 0;
        let mut before: VecDeque<Line> = VecDeque::with_capacity(options.before_context);
        let mut after_remaining = 0;
        let mut last_printed: Option<u64> = None;

        for line in lines(data) {
            if selected >= limit {
                if after_remaining == 0 || !context {
                    break;
                }
                if self.matcher.matches(line.text) != options.invert {
                    break;
                }
            }
            let is_selected = selected < limit && self.matcher.matches(line.text) != options.invert;
            if !is_selected {
                if context && after_remaining > 0 {
                    self.print_line(out, name, line, CONTEXT)?;
                    last_printed = Some(line.number);
                    after_remaining -= 1;
                } else if context && options.before_context > 0 {
                    if before.len() == options.before_context {
                        before.pop_front();
                    }
                    before.push_back(line);
                }
                continue;
            }
            selected += 1;
            if stop_at_first {
                break;
            }
            if binary && !self.summary_only() {
                break;
            }
            if !print_lines {
                continue;
            }
            if context {
                let first = before
                    .front()
                    .map_or(line.number, |earliest| earliest.number);
                let adjacent = last_printed.is_some_and(|printed| printed + 1 >= first);
                if self.printed_group && !adjacent {
                    out.write_all(b"--\n")?;
                }
                self.printed_group = true;
                for context_line in before.drain(..) {
                    self.print_line(out, name, context_line, CONTEXT)?;
                }
                after_remaining = options.after_context;
                last_printed = Some(line.number);
            }
            if options.only_matching {
                self.print_matches(out, name, line)?;
            } else {
                self.print_line(out, name, line, SELECTED)?;
            }
        }

        let binary_matched = binary && selected > 0 && !self.summary_only();
        if options.quiet {
            return Ok(Found {
                selected,
                binary_matched,
            });
        }
        if options.files_with_matches && selected > 0
            || options.files_without_match && selected == 0
        {
            self.name(out, name, b'\n')?;
        } else if options.count && !options.files_with_matches && !options.files_without_match {
            if self.show_names {
                self.name(out, name, SELECTED)?;
            }
            writeln!(out, "{selected}")?;
        }
        Ok(Found {
            selected,
            binary_matched,
        })
    }
}
