//! An output stream kept in memory under a cap, or written through to the
//! host process's stdout; clones write into the same place. Every captured
//! stdout and stderr of a session is one, and so is a command line's own
//! stdout, shared by every stage that writes it.
//!
//! The last stage of each pipeline on a command line writes here directly,
//! as it produces, instead of handing its output back through the shell
//! (one copy into the host, none through the shell's memory, and a line's
//! output reaches a terminal while the line still runs). The stages of a
//! line take turns: the shell runs one pipeline at a time, and only a
//! pipeline's last stage writes here.
//!
//! Invariant: captured, it never keeps more than its cap plus one byte. A
//! write past the cap traps, which ends the writing stage at once, and
//! [`SessionOutput::passed_cap`] tells the engine to report that stage as over
//! the output cap; until then `check-write` offers only the room left.
//! Inherited, it is the host process's stdout (or another writer, such as a
//! client's stdout across a socket), written through; once that stream is
//! closed (the reader of `wbx run … | head` exited) the writing stage ends
//! on a [`BrokenPipe`], as a shell's last stage ends on SIGPIPE.

use super::BrokenPipe;
use bytes::{Bytes, BytesMut};
use std::io::{self, Write};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::IsTerminal;
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError, StreamResult};

/// What an inherited session output offers a writer per `check-write`.
const INHERITED_WRITE_BUDGET: usize = 64 * 1024;

#[derive(Debug)]
enum Target {
    /// Kept in memory, up to `cap` bytes (one more marks it over).
    Capture { bytes: BytesMut, cap: usize },
    /// Written through, and flushed at every write: the host process's
    /// stdout, or another writer.
    Through(Through),
}

/// A writer an output is written through to, and whether it is a terminal.
struct Through {
    out: Box<dyn Write + Send>,
    terminal: bool,
}

impl std::fmt::Debug for Through {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Through")
            .field("terminal", &self.terminal)
            .finish_non_exhaustive()
    }
}

/// A failed write through to a stream, by what it means to the stage.
fn write_error(e: io::Error) -> SessionOutputError {
    match e.kind() {
        io::ErrorKind::BrokenPipe => SessionOutputError::Broken(BrokenPipe),
        _ => SessionOutputError::Io(e),
    }
}

#[derive(Debug)]
struct Sink {
    target: Target,
    written: u64,
}

/// A session's stdout, shared by the stages that write it. Cheap to clone;
/// clones write into the same place.
#[derive(Debug, Clone)]
pub struct SessionOutput {
    sink: Arc<Mutex<Sink>>,
}

/// Why a write into a session output failed.
#[derive(Debug, thiserror::Error)]
pub enum SessionOutputError {
    /// A captured output reached its cap.
    #[error("the output cap of {0} bytes is reached")]
    OverCap(usize),
    /// The inherited stdout was closed by its reader.
    #[error(transparent)]
    Broken(#[from] BrokenPipe),
    /// The inherited stdout failed otherwise.
    #[error("stdout: {0}")]
    Io(io::Error),
}

impl SessionOutput {
    /// An output kept in memory, at most `cap` bytes.
    pub fn capture(cap: usize) -> Self {
        Self::with(Target::Capture {
            bytes: BytesMut::new(),
            cap,
        })
    }

    /// The host process's own stdout, written through.
    pub(crate) fn inherit() -> Self {
        Self::with(Target::Through(Through {
            terminal: std::io::IsTerminal::is_terminal(&io::stdout()),
            out: Box::new(io::stdout()),
        }))
    }

    /// `writer`, written through (not a terminal); a write it fails with
    /// [`io::ErrorKind::BrokenPipe`] ends the writing stage as a closed
    /// stdout does.
    pub fn through(writer: impl Write + Send + 'static) -> Self {
        Self::with(Target::Through(Through {
            out: Box::new(writer),
            terminal: false,
        }))
    }

    fn with(target: Target) -> Self {
        Self {
            sink: Arc::new(Mutex::new(Sink { target, written: 0 })),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Sink> {
        self.sink.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Bytes written so far, by every stage.
    pub fn written(&self) -> u64 {
        self.lock().written
    }

    /// The cap a captured output was written past, if it was.
    pub(crate) fn passed_cap(&self) -> Option<usize> {
        match &self.lock().target {
            Target::Capture { bytes, cap } if bytes.len() > *cap => Some(*cap),
            _ => None,
        }
    }

    /// The captured bytes, leaving it empty (always empty when inherited).
    pub fn take(&self) -> Bytes {
        match &mut self.lock().target {
            Target::Capture { bytes, .. } => std::mem::take(bytes).freeze(),
            Target::Through(_) => Bytes::new(),
        }
    }

    /// Writes all of `data`.
    pub fn write_all(&self, data: &[u8]) -> Result<(), SessionOutputError> {
        let mut sink = self.lock();
        match &mut sink.target {
            Target::Capture { bytes, cap } => {
                let room = (*cap + 1).saturating_sub(bytes.len());
                bytes.extend_from_slice(&data[..data.len().min(room)]);
                if data.len() > room || bytes.len() > *cap {
                    return Err(SessionOutputError::OverCap(*cap));
                }
            }
            Target::Through(Through { out, .. }) => {
                out.write_all(data)
                    .and_then(|()| out.flush())
                    .map_err(write_error)?;
            }
        }
        sink.written += data.len() as u64;
        Ok(())
    }

    /// What `check-write` offers: the room left, or `None` once full.
    fn room(&self) -> Option<usize> {
        match &self.lock().target {
            Target::Capture { bytes, cap } => {
                (*cap + 1).checked_sub(bytes.len()).filter(|n| *n > 0)
            }
            Target::Through(_) => Some(INHERITED_WRITE_BUDGET),
        }
    }
}

impl From<SessionOutputError> for StreamError {
    fn from(e: SessionOutputError) -> Self {
        match e {
            SessionOutputError::Broken(b) => StreamError::Trap(wasmtime::Error::new(b)),
            other => StreamError::Trap(wasmtime::Error::msg(other.to_string())),
        }
    }
}

#[async_trait::async_trait]
impl Pollable for SessionOutput {
    async fn ready(&mut self) {}
}

impl OutputStream for SessionOutput {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        Ok(self.write_all(&bytes)?)
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        self.room().ok_or(StreamError::Closed)
    }
}

impl AsyncWrite for SessionOutput {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(
            self.write_all(data)
                .map(|()| data.len())
                .map_err(|e| match e {
                    SessionOutputError::Io(e) => e,
                    SessionOutputError::Broken(_) => io::ErrorKind::BrokenPipe.into(),
                    over => io::Error::other(over.to_string()),
                }),
        )
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl IsTerminal for SessionOutput {
    fn is_terminal(&self) -> bool {
        match &self.lock().target {
            Target::Capture { .. } => false,
            Target::Through(through) => through.terminal,
        }
    }
}

super::stdout_stream_by_clone!(SessionOutput);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_captured_output_keeps_writes_from_every_clone_in_order() {
        let out = SessionOutput::capture(16);
        let mut a = out.clone();
        let mut b = out.clone();
        a.write(Bytes::from_static(b"one ")).unwrap();
        b.write(Bytes::from_static(b"two")).unwrap();
        assert_eq!(out.written(), 7);
        assert_eq!(out.passed_cap(), None);
        assert_eq!(&out.take()[..], b"one two");
    }

    #[test]
    fn a_write_past_the_cap_traps_and_marks_the_output_over() {
        let mut out = SessionOutput::capture(4);
        assert_eq!(out.check_write().unwrap(), 5);
        assert!(matches!(
            out.write(Bytes::from_static(b"123456")),
            Err(StreamError::Trap(_))
        ));
        assert_eq!(out.passed_cap(), Some(4));
        assert!(matches!(out.check_write(), Err(StreamError::Closed)));
        // It kept no more than its cap plus the byte that marks it over.
        assert_eq!(out.take().len(), 5);
    }

    #[test]
    fn exactly_the_cap_is_not_over_it() {
        let out = SessionOutput::capture(4);
        out.write_all(b"1234").unwrap();
        assert_eq!(out.passed_cap(), None);
        assert!(matches!(
            out.write_all(b"5"),
            Err(SessionOutputError::OverCap(4))
        ));
        assert_eq!(out.passed_cap(), Some(4));
    }
}
