//! The daemon's protocol, one Unix stream socket per line.
//!
//! Every message is a frame: a tag byte, a little-endian `u32` length and
//! that many bytes. The client opens with `Q` (the [`Request`], JSON); the
//! daemon answers `R` (refused, with the reason: the client runs the line
//! itself) or `A` (accepted: from here on the line is the daemon's, and the
//! client never runs it again). Then the daemon sends `I` when a stage
//! first reads stdin (the client starts sending `S` chunks and `Z` at its
//! end; until then it reads none of its stdin), `O` chunks of the line's
//! stdout as they are produced, `E` the line's stderr and `X` the exit
//! code. A client whose stdout was closed says `P`, and the stage writing
//! it ends as on a closed pipe. A client that goes away cancels its line.

use crate::options::StageArgs;
use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard};

/// The file in a home the daemon listens on.
pub(crate) const SOCKET: &str = "daemon.sock";

/// The largest frame either side accepts: a bound on what one frame makes
/// the other allocate (stdin and stdout travel in 64 KiB chunks).
pub(crate) const MAX_FRAME_BYTES: usize = 1 << 20;

/// Client: the request.
pub(crate) const REQUEST: u8 = b'Q';
/// Client: a chunk of stdin.
pub(crate) const STDIN: u8 = b'S';
/// Client: the end of stdin.
pub(crate) const STDIN_END: u8 = b'Z';
/// Client: its stdout was closed by its reader.
pub(crate) const STDOUT_CLOSED: u8 = b'P';
/// Daemon: refused, with the reason; the client runs the line itself.
pub(crate) const REFUSED: u8 = b'R';
/// Daemon: accepted; the line is the daemon's from here on.
pub(crate) const ACCEPTED: u8 = b'A';
/// Daemon: a stage reads stdin; start sending it.
pub(crate) const WANT_STDIN: u8 = b'I';
/// Daemon: a chunk of the line's stdout.
pub(crate) const STDOUT: u8 = b'O';
/// Daemon: the line's stderr.
pub(crate) const STDERR: u8 = b'E';
/// Daemon: the exit code, one byte.
pub(crate) const EXIT: u8 = b'X';

/// What a client asks the daemon to run: the `run` verb's arguments, with
/// every path made absolute on the client's side.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Request {
    /// The client's [`workbooks::build_id`]; the daemon serves its own only.
    pub(crate) build: String,
    /// The client's `WB_NET_ALLOW`; the daemon serves its own only.
    pub(crate) net_allow: Option<String>,
    /// The fingerprint of the client's model endpoint (`WB_LLM_*`); the
    /// daemon serves its own only.
    pub(crate) llm: String,
    /// The client binary's name, which starts its messages.
    pub(crate) bin: String,
    pub(crate) line: String,
    pub(crate) json: bool,
    /// Whether the client has a stdin to offer (not a terminal).
    pub(crate) stdin: bool,
    /// The stage flags as given, but the preopens.
    pub(crate) stage: StageArgs,
    /// `(absolute host path, guest path, read-only)`.
    pub(crate) dirs: Vec<(PathBuf, String, bool)>,
}

/// The socket a side shares between its threads.
pub(crate) fn lock(m: &Mutex<UnixStream>) -> MutexGuard<'_, UnixStream> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Writes one frame.
pub(crate) fn write_frame(to: &mut impl Write, tag: u8, payload: &[u8]) -> io::Result<()> {
    let len = u32::try_from(payload.len())
        .ok()
        .filter(|n| *n as usize <= MAX_FRAME_BYTES)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "frame too large"))?;
    let mut head = [0u8; 5];
    head[0] = tag;
    head[1..].copy_from_slice(&len.to_le_bytes());
    to.write_all(&head)?;
    to.write_all(payload)?;
    to.flush()
}

/// Reads one frame; a length past [`MAX_FRAME_BYTES`] is an error before
/// anything is allocated for it.
pub(crate) fn read_frame(from: &mut impl Read) -> io::Result<(u8, Vec<u8>)> {
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
