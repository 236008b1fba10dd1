//! Input values: reads every source in bulk and parses it into a lazy
//! stream of JSON values (or raw lines with `-R`), tracking which file the
//! current value came from for `input_filename` and error messages.

use jaq_json::{Val, read};
use std::cell::RefCell;
use std::io::Read;
use std::path::PathBuf;

/// One input source, read completely before parsing.
pub struct Source {
    /// Shown in messages and by `input_filename`; `None` for stdin.
    pub name: Option<String>,
    pub bytes: Result<Vec<u8>, String>,
}

impl Source {
    /// Reads all of `reader` as the standard input source.
    pub fn stdin(reader: &mut dyn Read) -> Self {
        let mut bytes = Vec::new();
        let bytes = reader
            .read_to_end(&mut bytes)
            .map(|_| bytes)
            .map_err(|error| format!("Could not read <stdin>: {}", describe(&error)));
        Self { name: None, bytes }
    }

    /// Reads a whole file.
    pub fn file(path: &PathBuf) -> Self {
        let name = path.display().to_string();
        let bytes = std::fs::read(path)
            .map_err(|error| format!("Could not open {name}: {}", describe(&error)));
        Self {
            name: Some(name),
            bytes,
        }
    }

    fn display_name(&self) -> &str {
        self.name.as_deref().unwrap_or("<stdin>")
    }
}

/// Describes an I/O error without Rust's "(os error N)" suffix.
pub fn describe(error: &std::io::Error) -> String {
    let text = error.to_string();
    match text.find(" (os error") {
        Some(end) => text[..end].to_owned(),
        None => text,
    }
}

/// Why the input stream produced no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputError {
    /// A file could not be read; the remaining sources still follow.
    Unreadable(String),
    /// Malformed JSON; the stream ends here.
    Malformed(String),
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unreadable(message) | Self::Malformed(message) => f.write_str(message),
        }
    }
}

/// Strips a UTF-8 byte order mark.
fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

type Values<'a> = Box<dyn Iterator<Item = Result<Val, InputError>> + 'a>;

/// Parses a source's bytes into values.
fn parse_source<'a>(source: &'a Source, raw: bool) -> Values<'a> {
    let name = source.display_name();
    let bytes = match &source.bytes {
        Ok(bytes) => without_bom(bytes),
        Err(message) => {
            return Box::new(std::iter::once(Err(InputError::Unreadable(
                message.clone(),
            ))));
        }
    };
    if raw {
        return Box::new(raw_lines(bytes).map(|line| Ok(Val::utf8_str(line.to_vec()))));
    }
    let mut failed = false;
    Box::new(read::parse_many(bytes).map_while(move |parsed| {
        if failed {
            return None;
        }
        Some(parsed.map_err(|error| {
            failed = true;
            InputError::Malformed(format!("cannot parse input from {name}: {error}"))
        }))
    }))
}

/// Splits text into lines, dropping each line's `\n` terminator.
fn raw_lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    let empty = bytes.is_empty();
    body.split(|byte| *byte == b'\n').filter(move |_| !empty)
}

/// The values of all sources in order, as consumed by the main loop and by
/// the `input`/`inputs` filters.
pub struct InputStream<'a> {
    sources: std::slice::Iter<'a, Source>,
    current: Option<Values<'a>>,
    raw: bool,
    /// Name of the source the last value came from, for `input_filename`.
    filename: &'a RefCell<Val>,
    stopped: bool,
}

impl<'a> InputStream<'a> {
    pub fn new(sources: &'a [Source], raw: bool, filename: &'a RefCell<Val>) -> Self {
        Self {
            sources: sources.iter(),
            current: None,
            raw,
            filename,
            stopped: false,
        }
    }
}

impl Iterator for InputStream<'_> {
    type Item = Result<Val, InputError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.stopped {
            if let Some(values) = &mut self.current {
                match values.next() {
                    Some(Err(InputError::Malformed(message))) => {
                        self.stopped = true;
                        return Some(Err(InputError::Malformed(message)));
                    }
                    Some(item) => return Some(item),
                    None => self.current = None,
                }
            }
            let source = self.sources.next()?;
            *self.filename.borrow_mut() = match &source.name {
                Some(name) => Val::from(name.clone()),
                None => Val::Null,
            };
            self.current = Some(parse_source(source, self.raw));
        }
        None
    }
}

/// Concatenates all readable sources' text for `-R -s`; unreadable ones are
/// returned as errors.
pub fn slurp_text(sources: &[Source]) -> (Val, Vec<InputError>) {
    let mut text = Vec::new();
    let mut errors = Vec::new();
    for source in sources {
        match &source.bytes {
            Ok(bytes) => text.extend_from_slice(without_bom(bytes)),
            Err(message) => errors.push(InputError::Unreadable(message.clone())),
        }
    }
    (Val::utf8_str(text), errors)
}
