//! `basename`: strip directories (and optionally a suffix) from names;
//! `-a` takes several names, `-s SUFFIX` implies `-a`, `-z` ends with NUL.

use std::ffi::OsString;
use std::io;

use super::usage_failure;
use crate::args::{self, OptSpec, UsageError};
use crate::streams::Io;

const NAME: &str = "basename";
const SYNOPSIS: &str = "NAME [SUFFIX] | -a [-s SUFFIX] [-z] NAME...";
const SPEC: OptSpec = OptSpec {
    short: "as:z",
    long: &[("multiple", 'a'), ("suffix", 's'), ("zero", 'z')],
    negative_numbers_are_operands: false,
    number_option: None,
    stop_at_first_operand: false,
};

/// Runs `basename`.
pub fn run(args: &[OsString], io: &mut Io) -> io::Result<u8> {
    let parsed = match args::parse(args, &SPEC) {
        Ok(parsed) => parsed,
        Err(err) => return usage_failure(io, NAME, SYNOPSIS, &err),
    };
    let mut multiple = false;
    let mut suffix: &[u8] = b"";
    let mut terminator = b'\n';
    for opt in &parsed.opts {
        match opt.letter {
            'a' => multiple = true,
            's' => {
                multiple = true;
                suffix = opt.value_bytes();
            }
            _ => terminator = 0,
        }
    }
    let names: Vec<&[u8]> = parsed
        .operands
        .iter()
        .map(|name| name.as_encoded_bytes())
        .collect();
    let names = match (multiple, names.as_slice()) {
        (_, []) => return missing(io, "missing operand"),
        (true, all) => all,
        (false, [name]) => &[*name][..],
        (false, [name, given_suffix]) => {
            suffix = given_suffix;
            &[*name][..]
        }
        (false, _) => return missing(io, "extra operand"),
    };
    let mut output = Vec::new();
    for name in names {
        output.extend_from_slice(&base_of(name, suffix));
        output.push(terminator);
    }
    io.stdout.write_all(&output)?;
    Ok(0)
}

fn missing(io: &mut Io, problem: &str) -> io::Result<u8> {
    usage_failure(io, NAME, SYNOPSIS, &UsageError::Message(problem.into()))
}

/// The last path component of `name`, minus `suffix` when it is a proper suffix.
pub fn base_of(name: &[u8], suffix: &[u8]) -> Vec<u8> {
    if name.is_empty() {
        return Vec::new();
    }
    let trimmed_len = name.iter().rposition(|&b| b != b'/').map_or(0, |p| p + 1);
    if trimmed_len == 0 {
        return b"/".to_vec();
    }
    let trimmed = &name[..trimmed_len];
    let start = trimmed
        .iter()
        .rposition(|&b| b == b'/')
        .map_or(0, |p| p + 1);
    let component = &trimmed[start..];
    match component.strip_suffix(suffix) {
        Some(stem) if !suffix.is_empty() && !stem.is_empty() => stem.to_vec(),
        _ => component.to_vec(),
    }
}
