//! Frames: a tag byte, a little-endian `u32` length, the payload.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::{Mutex, MutexGuard};

/// The largest frame either side accepts: a bound on what one frame makes
/// the other allocate (stdin and stdout travel in 64 KiB chunks).
pub const MAX_FRAME_BYTES: usize = 1 << 20;

/// Client: the request.
pub const REQUEST: u8 = b'Q';
/// Client: a chunk of stdin.
pub const STDIN: u8 = b'S';
/// Client: the end of stdin.
pub const STDIN_END: u8 = b'Z';
/// Client: its stdout was closed by its reader.
pub const STDOUT_CLOSED: u8 = b'P';
/// Daemon: refused, with the reason; the client runs the line itself.
pub const REFUSED: u8 = b'R';
/// Daemon: accepted; the line is the daemon's from here on.
pub const ACCEPTED: u8 = b'A';
/// Daemon: a stage reads stdin; start sending it.
pub const WANT_STDIN: u8 = b'I';
/// Daemon: a chunk of the line's stdout.
pub const STDOUT: u8 = b'O';
/// Daemon: the line's stderr.
pub const STDERR: u8 = b'E';
/// Daemon: the exit code, one byte.
pub const EXIT: u8 = b'X';

/// The socket a side shares between its threads.
pub fn lock(m: &Mutex<UnixStream>) -> MutexGuard<'_, UnixStream> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Writes one frame, `[tag u8][len u32 LE][payload]`, of any length a
/// `u32` holds: the one encoder of the format, for the daemon's socket
/// ([`write_frame`]) and an `os_process` child's stdout alike.
pub fn encode_frame(to: &mut impl Write, tag: u8, payload: &[u8]) -> io::Result<()> {
    let len = u32::try_from(payload.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "frame too large"))?;
    let mut head = [0u8; 5];
    head[0] = tag;
    head[1..].copy_from_slice(&len.to_le_bytes());
    to.write_all(&head)?;
    to.write_all(payload)
}

/// Writes one frame of at most [`MAX_FRAME_BYTES`] to the daemon's
/// socket, and flushes it.
pub fn write_frame(to: &mut impl Write, tag: u8, payload: &[u8]) -> io::Result<()> {
    if payload.len() > MAX_FRAME_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "frame too large",
        ));
    }
    encode_frame(to, tag, payload)?;
    to.flush()
}

/// Reads one frame; a length past [`MAX_FRAME_BYTES`] is an error before
/// anything is allocated for it.
pub fn read_frame(from: &mut impl Read) -> io::Result<(u8, Vec<u8>)> {
    let mut head = [0u8; 5];
    from.read_exact(&mut head)?;
    let len = u32::from_le_bytes([head[1], head[2], head[3], head[4]]) as usize;
    if len > MAX_FRAME_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("a frame of {len} bytes, over the {MAX_FRAME_BYTES}-byte limit"),
        ));
    }
    let mut payload = vec![0u8; len];
    from.read_exact(&mut payload)?;
    Ok((head[0], payload))
}
