//! `true` and `false`: ignore all arguments and exit 0 or 1.

use std::ffi::OsString;
use std::io;

use crate::streams::Io;

/// Runs `true`.
pub fn run_true(_args: &[OsString], _io: &mut Io) -> io::Result<u8> {
    Ok(0)
}

/// Runs `false`.
pub fn run_false(_args: &[OsString], _io: &mut Io) -> io::Result<u8> {
    Ok(1)
}
