//! Streaming uppercase conversion of bytes that are mostly UTF-8.
//!
//! Valid UTF-8 is uppercased with Unicode rules (so `ß` becomes `SS`);
//! bytes that are not valid UTF-8 pass through unchanged. A character split
//! across two reads is carried over and converted whole.

use std::io::{self, Write};

/// Longest UTF-8 sequence; at most one byte less is ever carried over.
const MAX_UTF8_LEN: usize = 4;

/// Converts chunks of input, remembering an incomplete trailing character.
#[derive(Default)]
pub struct Uppercaser {
    carried: Vec<u8>,
    converted: String,
}

impl Uppercaser {
    /// Converts `chunk` (continuing any carried-over bytes) into `out`.
    pub fn push(&mut self, chunk: &[u8], out: &mut impl Write) -> io::Result<()> {
        if self.carried.is_empty() {
            let rest = self.convert(chunk, out)?;
            self.carried.extend_from_slice(rest);
            return Ok(());
        }
        let mut joined = std::mem::take(&mut self.carried);
        joined.extend_from_slice(chunk);
        let rest = self.convert(&joined, out)?.to_vec();
        self.carried = rest;
        Ok(())
    }

    /// Flushes carried-over bytes, which can no longer become a character.
    pub fn finish(&mut self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(&std::mem::take(&mut self.carried))
    }

    /// Converts as much of `bytes` as possible; returns an incomplete tail.
    fn convert<'b>(&mut self, mut bytes: &'b [u8], out: &mut impl Write) -> io::Result<&'b [u8]> {
        loop {
            match std::str::from_utf8(bytes) {
                Ok(text) => {
                    self.write_upper(text, out)?;
                    return Ok(&[]);
                }
                Err(error) => {
                    let (valid, rest) = bytes.split_at(error.valid_up_to());
                    let valid = std::str::from_utf8(valid).unwrap_or_default();
                    self.write_upper(valid, out)?;
                    let Some(invalid_len) = error.error_len() else {
                        debug_assert!(rest.len() < MAX_UTF8_LEN);
                        return Ok(rest);
                    };
                    out.write_all(&rest[..invalid_len])?;
                    bytes = &rest[invalid_len..];
                }
            }
        }
    }

    fn write_upper(&mut self, text: &str, out: &mut impl Write) -> io::Result<()> {
        if text.is_ascii() {
            let upper: Vec<u8> = text.bytes().map(|byte| byte.to_ascii_uppercase()).collect();
            return out.write_all(&upper);
        }
        self.converted.clear();
        self.converted
            .extend(text.chars().flat_map(char::to_uppercase));
        out.write_all(self.converted.as_bytes())
    }
}
