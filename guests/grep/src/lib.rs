//! The `grep` command: prints lines matching POSIX basic, extended or
//! fixed-string patterns, matching bytes so invalid UTF-8 input is fine.
//!
//! [`run`] takes argv (without the program name) and the standard streams
//! and returns the exit code: 0 if a line was selected, 1 if none, 2 on
//! error (unless `-q` found a match).

mod bracket;
pub mod cli;
mod glob;
mod matcher;
mod search;
mod syntax;
mod walk;

use cli::{Command, Options, PatternSource};
use matcher::{MatchMode, Matcher};
use search::Searcher;
use std::io::{self, BufWriter, Read, Write};

pub const EXIT_SELECTED: u8 = 0;
pub const EXIT_NOTHING_SELECTED: u8 = 1;
pub const EXIT_ERROR: u8 = 2;

/// Name printed for standard input.
const STDIN_NAME: &str = "(standard input)";

fn describe(error: &io::Error) -> String {
    let text = error.to_string();
    match text.find(" (os error") {
        Some(end) => text[..end].to_owned(),
        None => text,
    }
}

/// Reads all of `reader`.
fn read_all(reader: &mut dyn Read) -> io::Result<Vec<u8>> {
    let mut data = Vec::new();
    reader.read_to_end(&mut data)?;
    Ok(data)
}

/// Collects the pattern texts: newline-separated, from `-e`, operands and `-f`.
fn pattern_texts(options: &Options, stdin: &mut dyn Read) -> Result<Vec<String>, String> {
    let mut texts = Vec::new();
    for source in &options.patterns {
        match source {
            PatternSource::Text(text) => texts.extend(text.split('\n').map(str::to_owned)),
            PatternSource::File(path) => {
                let data = if path == "-" {
                    read_all(stdin)
                } else {
                    std::fs::read(path)
                }
                .map_err(|error| format!("{path}: {}", describe(&error)))?;
                let text = String::from_utf8_lossy(&data);
                let body = text.strip_suffix('\n').unwrap_or(&text);
                if !body.is_empty() || text.ends_with('\n') {
                    texts.extend(body.split('\n').map(str::to_owned));
                }
            }
        }
    }
    Ok(texts)
}

fn compile(options: &Options, texts: &[String]) -> Result<Matcher, String> {
    let mut alternatives = Vec::new();
    for text in texts {
        alternatives.extend(syntax::translate(text, options.syntax)?);
    }
    let mode = MatchMode {
        ignore_case: options.ignore_case,
        whole_line: options.whole_line,
        word: options.word,
        need_positions: options.only_matching,
    };
    Matcher::new(&alternatives, &mode)
}

/// Runs `grep` with `args` and returns its exit code.
pub fn run(
    args: &[String],
    stdin: &mut dyn Read,
    stdout: &mut dyn Write,
    stderr: &mut dyn Write,
) -> u8 {
    let options = match cli::parse(args) {
        Ok(Command::Search(options)) => options,
        Ok(Command::Help) => {
            let _ = stdout.write_all(cli::USAGE.as_bytes());
            return EXIT_SELECTED;
        }
        Err(message) => {
            let _ = writeln!(stderr, "grep: {message}");
            let _ = writeln!(stderr, "Usage: grep [OPTION]... PATTERNS [FILE]...");
            return EXIT_ERROR;
        }
    };
    let matcher = match pattern_texts(&options, stdin).and_then(|texts| compile(&options, &texts)) {
        Ok(matcher) => matcher,
        Err(message) => {
            let _ = writeln!(stderr, "grep: {message}");
            return EXIT_ERROR;
        }
    };

    let inputs = walk::inputs(&options.files, options.recursion, &options.name_filter);
    let show_names = options
        .with_filename
        .unwrap_or_else(|| walk::names_by_default(&options.files, options.recursion));
    let mut searcher = Searcher::new(&options, &matcher, show_names);
    let mut out = BufWriter::with_capacity(1 << 16, stdout);
    let mut any_selected = false;
    let mut had_error = false;

    for input in &inputs {
        let (name, data) = match input {
            walk::Input::Stdin => (STDIN_NAME, read_all(stdin)),
            walk::Input::File(path) => (path.as_str(), std::fs::read(path)),
            walk::Input::Unlistable(path, error) => (
                path.as_str(),
                Err(io::Error::new(error.kind(), error.to_string())),
            ),
        };
        let data = match data {
            Ok(data) => data,
            Err(error) => {
                had_error = true;
                if !options.no_messages {
                    let _ = out.flush();
                    let _ = writeln!(stderr, "grep: {name}: {}", describe(&error));
                }
                continue;
            }
        };
        match searcher.search(&mut out, name, &data) {
            Ok(found) => {
                any_selected |= found.selected > 0;
                if found.binary_matched {
                    let _ = out.flush();
                    let _ = writeln!(stderr, "grep: {name}: binary file matches");
                }
            }
            Err(error) if error.kind() == io::ErrorKind::BrokenPipe => return EXIT_ERROR,
            Err(error) => {
                let _ = writeln!(stderr, "grep: write error: {}", describe(&error));
                return EXIT_ERROR;
            }
        }
        if options.quiet && any_selected {
            break;
        }
    }
    if out.flush().is_err() {
        return EXIT_ERROR;
    }

    if options.quiet && any_selected {
        EXIT_SELECTED
    } else if had_error {
        EXIT_ERROR
    } else if any_selected {
        EXIT_SELECTED
    } else {
        EXIT_NOTHING_SELECTED
    }
}
