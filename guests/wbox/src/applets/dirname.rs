//! `dirname`: strip the last component from each name (`.` when there is
//! no directory part); `-z` ends each result with NUL instead of newline.

use std::ffi::OsString;
use std::io;

use super::usage_failure;
use crate::args::{self, OptSpec, UsageError};
use crate::streams::Io;

const NAME: &str = "dirname";
const SYNOPSIS: &str = "[-z] NAME...";
const SPEC: OptSpec = OptSpec {
    short: "z",
    long: &[("zero", 'z')],
    negative_numbers_are_operands: false,
    number_option: None,
    stop_at_first_operand: false,
};

/// Runs `dirname`.
pub fn run(args: &[OsString], io: &mut Io) -> io::Result<u8> {
    let parsed = match args::parse(args, &SPEC) {
        Ok(parsed) => parsed,
        Err(err) => return usage_failure(io, NAME, SYNOPSIS, &err),
    };
    if parsed.operands.is_empty() {
        let err = UsageError::Message("missing operand".into());
        return usage_failure(io, NAME, SYNOPSIS, &err);
    }
    let terminator = if parsed.opts.is_empty() { b'\n' } else { 0 };
    let mut output = Vec::new();
    for name in &parsed.operands {
        output.extend_from_slice(dir_of(name.as_encoded_bytes()));
        output.push(terminator);
    }
    io.stdout.write_all(&output)?;
    Ok(0)
}

/// The directory part of `name`.
pub fn dir_of(name: &[u8]) -> &[u8] {
    let Some(last_kept) = name.iter().rposition(|&b| b != b'/') else {
        return if name.is_empty() { b"." } else { b"/" };
    };
    let Some(slash) = name[..last_kept].iter().rposition(|&b| b == b'/') else {
        return b".";
    };
    match name[..slash].iter().rposition(|&b| b != b'/') {
        Some(end) => &name[..=end],
        None => b"/",
    }
}
