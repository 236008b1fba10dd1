//! Serialises filter outputs as JSON text, pretty or compact, like jq.
//!
//! Writes straight into a byte buffer with precomputed indentation, so
//! printing large documents costs no per-token allocation. Numbers that JSON
//! cannot express are printed the way jq prints them (NaN as `null`,
//! infinities as the largest finite double).

use crate::cli::Indent;
use jaq_json::{Num, Val};
use std::io::{self, Write};

/// Largest finite double, the text jq prints for infinity.
const MAX_FINITE: &str = "1.7976931348623157e+308";

/// How values are rendered.
#[derive(Debug, Clone)]
pub struct Style {
    /// One level of indentation; empty for compact output.
    pub indent_unit: Vec<u8>,
    pub sort_keys: bool,
    pub ascii: bool,
}

impl Style {
    pub fn new(indent: Indent, sort_keys: bool, ascii: bool) -> Self {
        let indent_unit = match indent {
            Indent::Spaces(width) => vec![b' '; width],
            Indent::Tab => vec![b'\t'],
        };
        Self {
            indent_unit,
            sort_keys,
            ascii,
        }
    }

    /// Compact single-line rendering, as used for diagnostics.
    pub fn compact() -> Self {
        Self::new(Indent::Spaces(0), false, false)
    }

    fn pretty(&self) -> bool {
        !self.indent_unit.is_empty()
    }
}

/// Appends values to an output stream through a reusable buffer.
pub struct JsonWriter {
    style: Style,
    /// `indent_unit` repeated for the deepest level seen so far.
    indents: Vec<u8>,
}

impl JsonWriter {
    pub fn new(style: Style) -> Self {
        Self {
            style,
            indents: Vec::new(),
        }
    }

    /// Writes `value` as JSON (without a trailing newline).
    pub fn write_value<W: Write + ?Sized>(&mut self, out: &mut W, value: &Val) -> io::Result<()> {
        self.value(out, value, 0)
    }

    /// Writes strings as their bytes, unquoted and unescaped (raw output
    /// mode), and other values as JSON.
    pub fn write_raw_or_value<W: Write + ?Sized>(
        &mut self,
        out: &mut W,
        value: &Val,
    ) -> io::Result<()> {
        match value {
            Val::TStr(bytes) | Val::BStr(bytes) => out.write_all(bytes),
            _ => self.value(out, value, 0),
        }
    }

    fn newline_and_indent<W: Write + ?Sized>(
        &mut self,
        out: &mut W,
        level: usize,
    ) -> io::Result<()> {
        let unit = self.style.indent_unit.len();
        let wanted = unit * level;
        while self.indents.len() < wanted {
            self.indents.extend_from_slice(&self.style.indent_unit);
        }
        out.write_all(b"\n")?;
        out.write_all(&self.indents[..wanted])
    }

    fn value<W: Write + ?Sized>(
        &mut self,
        out: &mut W,
        value: &Val,
        level: usize,
    ) -> io::Result<()> {
        match value {
            Val::Null => out.write_all(b"null"),
            Val::Bool(true) => out.write_all(b"true"),
            Val::Bool(false) => out.write_all(b"false"),
            Val::Num(number) => write_number(out, number),
            Val::TStr(bytes) | Val::BStr(bytes) => write_string(out, bytes, self.style.ascii),
            Val::Arr(items) => {
                if items.is_empty() {
                    return out.write_all(b"[]");
                }
                out.write_all(b"[")?;
                for (position, item) in items.iter().enumerate() {
                    self.separator(out, position, level + 1)?;
                    self.value(out, item, level + 1)?;
                }
                self.close(out, b"]", level)
            }
            Val::Obj(entries) => {
                if entries.is_empty() {
                    return out.write_all(b"{}");
                }
                out.write_all(b"{")?;
                if self.style.sort_keys {
                    let mut sorted: Vec<_> = entries.iter().collect();
                    sorted.sort_by_key(|(key, _)| *key);
                    for (position, (key, item)) in sorted.into_iter().enumerate() {
                        self.entry(out, position, level, key, item)?;
                    }
                } else {
                    for (position, (key, item)) in entries.iter().enumerate() {
                        self.entry(out, position, level, key, item)?;
                    }
                }
                self.close(out, b"}", level)
            }
        }
    }

    fn entry<W: Write + ?Sized>(
        &mut self,
        out: &mut W,
        position: usize,
        level: usize,
        key: &Val,
        item: &Val,
    ) -> io::Result<()> {
        self.separator(out, position, level + 1)?;
        self.value(out, key, level + 1)?;
        out.write_all(if self.style.pretty() { b": " } else { b":" })?;
        self.value(out, item, level + 1)
    }

    fn separator<W: Write + ?Sized>(
        &mut self,
        out: &mut W,
        position: usize,
        level: usize,
    ) -> io::Result<()> {
        if position > 0 {
            out.write_all(b",")?;
        }
        if self.style.pretty() {
            self.newline_and_indent(out, level)?;
        }
        Ok(())
    }

    fn close<W: Write + ?Sized>(
        &mut self,
        out: &mut W,
        bracket: &[u8],
        level: usize,
    ) -> io::Result<()> {
        if self.style.pretty() {
            self.newline_and_indent(out, level)?;
        }
        out.write_all(bracket)
    }
}

fn write_number<W: Write + ?Sized>(out: &mut W, number: &Num) -> io::Result<()> {
    match number {
        Num::Float(float) if float.is_nan() => out.write_all(b"null"),
        Num::Float(float) if float.is_infinite() => {
            if *float < 0.0 {
                out.write_all(b"-")?;
            }
            out.write_all(MAX_FINITE.as_bytes())
        }
        Num::Int(int) => write!(out, "{int}"),
        other => write!(out, "{other}"),
    }
}

/// Whether a byte must be written as an escape sequence inside a string.
fn needs_escape(byte: u8, ascii: bool) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\' || byte == 0x7f || (ascii && byte >= 0x80)
}

/// Writes `bytes` as a quoted JSON string. Invalid UTF-8 is passed through.
pub fn write_string<W: Write + ?Sized>(out: &mut W, bytes: &[u8], ascii: bool) -> io::Result<()> {
    out.write_all(b"\"")?;
    let mut start = 0;
    let mut index = 0;
    while index < bytes.len() {
        let byte = bytes[index];
        if !needs_escape(byte, ascii) {
            index += 1;
            continue;
        }
        out.write_all(&bytes[start..index])?;
        if byte >= 0x80 {
            index += write_escaped_char(out, &bytes[index..])?;
        } else {
            write_escaped_byte(out, byte)?;
            index += 1;
        }
        start = index;
    }
    out.write_all(&bytes[start..])?;
    out.write_all(b"\"")
}

fn write_escaped_byte<W: Write + ?Sized>(out: &mut W, byte: u8) -> io::Result<()> {
    match byte {
        b'"' => out.write_all(b"\\\""),
        b'\\' => out.write_all(b"\\\\"),
        b'\n' => out.write_all(b"\\n"),
        b'\t' => out.write_all(b"\\t"),
        b'\r' => out.write_all(b"\\r"),
        0x08 => out.write_all(b"\\b"),
        0x0c => out.write_all(b"\\f"),
        other => write!(out, "\\u{other:04x}"),
    }
}

/// Escapes the non-ASCII character at the start of `rest` as `\uXXXX`
/// (a surrogate pair above the BMP); returns how many bytes it consumed.
fn write_escaped_char<W: Write + ?Sized>(out: &mut W, rest: &[u8]) -> io::Result<usize> {
    let prefix = &rest[..rest.len().min(4)];
    let decoded = match std::str::from_utf8(prefix) {
        Ok(text) => text.chars().next(),
        Err(error) if error.valid_up_to() > 0 => {
            std::str::from_utf8(&prefix[..error.valid_up_to()])
                .ok()
                .and_then(|text| text.chars().next())
        }
        Err(_) => None,
    };
    let Some(character) = decoded else {
        out.write_all("\\ufffd".as_bytes())?;
        return Ok(1);
    };
    let mut units = [0u16; 2];
    for unit in character.encode_utf16(&mut units) {
        write!(out, "\\u{unit:04x}")?;
    }
    Ok(character.len_utf8())
}
