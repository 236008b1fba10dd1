//! Bounded in-memory pipes between the stages of a pipeline.
//!
//! A pipe joins one stage's stdout to the next stage's stdin, as a shell's
//! pipe does, and serves both ends as WASI streams (`wasi:io/streams`, which
//! the preview 1 lane uses too) and as tokio `AsyncRead`/`AsyncWrite`.
//!
//! Invariant: a pipe never holds more than its capacity
//! ([`crate::limits::PIPE_CAPACITY`]) of the writer's bytes, so memory stays
//! bounded whatever a producer writes: while the pipe is full the writer
//! waits (back-pressure). The reader sees end of input once every handle
//! of the writer is gone or closed. Once the reader is gone, the writer's
//! next write fails with [`BrokenPipe`] as a trap, which ends that stage at
//! once and tears its instance down; the engine reports it as a quiet end
//! ([`BROKEN_PIPE_EXIT`]), as SIGPIPE ends a process in a shell pipeline.

use bytes::{Buf, Bytes, BytesMut};
use std::io;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use wasmtime_wasi::cli::{IsTerminal, StdinStream};
use wasmtime_wasi::p2::{InputStream, OutputStream, Pollable, StreamError, StreamResult};

/// The exit code of a stage ended by a closed pipe: 128 + SIGPIPE, what a
/// shell reports for a writer its reader left behind.
pub const BROKEN_PIPE_EXIT: i32 = 141;

/// The trap a write into a pipe whose reader is gone ends its stage with.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("broken pipe: the reading stage has exited")]
pub struct BrokenPipe;

#[derive(Debug, Default)]
struct State {
    buf: BytesMut,
    writer_gone: bool,
    reader_gone: bool,
    readable: Option<Waker>,
    writable: Option<Waker>,
    written: u64,
    /// Why the writer failed, when it did: the reader's next read, once
    /// the bytes before it are taken, fails with it.
    failed: Option<String>,
    /// Run when the reader first reads or waits to: what starts filling
    /// the pipe from a source that must not be touched before then.
    on_first_read: Option<FirstRead>,
}

/// The hook of [`PipeReader::on_first_read`].
struct FirstRead(Box<dyn FnOnce() + Send>);

impl std::fmt::Debug for FirstRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FirstRead")
    }
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    capacity: usize,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn close_writer(&self) {
        let waker = {
            let mut s = self.lock();
            s.writer_gone = true;
            s.readable.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    fn fail_writer(&self, why: String) {
        let waker = {
            let mut s = self.lock();
            s.failed = Some(why);
            s.writer_gone = true;
            s.readable.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    fn close_reader(&self) {
        let (waker, unread) = {
            let mut s = self.lock();
            s.reader_gone = true;
            s.buf = BytesMut::new();
            (s.writable.take(), s.on_first_read.take())
        };
        // A reader gone unread never needs its hook, and the hook may hold
        // this very pipe's writer (a cycle that would keep both alive):
        // dropped here, outside the lock its writer's drop takes.
        drop(unread);
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// The state, for the reader: the first time, runs the first-read
    /// hook (outside the lock: it may start a writer) before locking.
    fn lock_to_read(&self) -> MutexGuard<'_, State> {
        let mut s = self.lock();
        if let Some(FirstRead(hook)) = s.on_first_read.take() {
            drop(s);
            hook();
            s = self.lock();
        }
        s
    }

    /// Ready to read: bytes waiting, or the writer gone (end of input).
    fn poll_readable(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut s = self.lock_to_read();
        if !s.buf.is_empty() || s.writer_gone {
            return Poll::Ready(());
        }
        s.readable = Some(cx.waker().clone());
        Poll::Pending
    }

    /// Ready to write: room in the pipe, or the reader gone (the write
    /// will fail).
    fn poll_writable(&self, cx: &mut Context<'_>) -> Poll<()> {
        let mut s = self.lock();
        if s.buf.len() < self.capacity || s.reader_gone {
            return Poll::Ready(());
        }
        s.writable = Some(cx.waker().clone());
        Poll::Pending
    }

    /// Takes up to `max` bytes; `None` at end of input, the writer's
    /// failure once the bytes before it are taken.
    fn take(&self, max: usize) -> io::Result<Option<Bytes>> {
        let (bytes, waker) = {
            let mut s = self.lock_to_read();
            if s.buf.is_empty() {
                return match (&s.failed, s.writer_gone) {
                    (Some(why), _) => Err(io::Error::other(why.clone())),
                    (None, true) => Ok(None),
                    (None, false) => Ok(Some(Bytes::new())),
                };
            }
            let n = max.min(s.buf.len());
            (s.buf.split_to(n).freeze(), s.writable.take())
        };
        if let Some(waker) = waker {
            waker.wake();
        }
        Ok(Some(bytes))
    }

    /// Room for this many bytes, or the broken pipe.
    fn room(&self) -> Result<usize, BrokenPipe> {
        let s = self.lock();
        if s.reader_gone {
            return Err(BrokenPipe);
        }
        Ok(self.capacity.saturating_sub(s.buf.len()))
    }

    /// Appends `bytes`, which must fit (`Ok(false)` if they do not).
    fn put(&self, bytes: &[u8]) -> Result<bool, BrokenPipe> {
        let waker = {
            let mut s = self.lock();
            if s.reader_gone {
                return Err(BrokenPipe);
            }
            if bytes.len() > self.capacity.saturating_sub(s.buf.len()) {
                return Ok(false);
            }
            s.buf.extend_from_slice(bytes);
            s.written += bytes.len() as u64;
            s.readable.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
        Ok(true)
    }
}

/// Closes its side of the pipe when the last handle of that side goes.
#[derive(Debug)]
struct End {
    shared: Arc<Shared>,
    writer: bool,
}

impl Drop for End {
    fn drop(&mut self) {
        if self.writer {
            self.shared.close_writer();
        } else {
            self.shared.close_reader();
        }
    }
}

/// The writing end of a pipe (a stage's stdout). Clones share the end.
#[derive(Debug, Clone)]
pub struct PipeWriter {
    end: Arc<End>,
}

/// The reading end of a pipe (a stage's stdin). Clones share the end.
#[derive(Debug, Clone)]
pub struct PipeReader {
    end: Arc<End>,
}

/// A new pipe holding at most `capacity` bytes in flight, with `preload`
/// already in it (it may exceed the capacity: it is the caller's bytes,
/// not the writer's).
pub fn pipe(capacity: usize, preload: &[u8]) -> (PipeWriter, PipeReader) {
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            buf: BytesMut::from(preload),
            ..State::default()
        }),
        capacity: capacity.max(1),
    });
    let writer = PipeWriter {
        end: Arc::new(End {
            shared: shared.clone(),
            writer: true,
        }),
    };
    let reader = PipeReader {
        end: Arc::new(End {
            shared,
            writer: false,
        }),
    };
    (writer, reader)
}

impl PipeWriter {
    /// Ends the input of the reader, whatever other handles remain.
    pub fn close(&self) {
        self.end.shared.close_writer();
    }

    /// Ends the input of the reader with `error`: its read after the
    /// bytes already written fails with it, rather than seeing an end of
    /// input that would pass a truncated input off as whole.
    pub fn fail(&self, error: io::Error) {
        self.end.shared.fail_writer(error.to_string());
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.end.shared.lock().written
    }

    /// Whether the reader is gone.
    #[cfg(test)]
    fn is_broken(&self) -> bool {
        self.end.shared.lock().reader_gone
    }
}

impl PipeReader {
    /// Goes away as a reader: the writer's next write is a broken pipe.
    pub fn close(&self) {
        self.end.shared.close_reader();
    }

    /// Runs `hook` when the reader first reads or waits to (not before,
    /// and never if it does not), in place of any hook set before: how a
    /// pipe's writer is started only once its bytes are wanted.
    pub fn on_first_read(&self, hook: impl FnOnce() + Send + 'static) {
        self.end.shared.lock().on_first_read = Some(FirstRead(Box::new(hook)));
    }
}

/// A pipe fed from `source` by a thread of its own (the host process's
/// stdin, say), started when the reader first reads: a line whose stages
/// never read leaves `source` untouched, for whatever reads it next, as a
/// shell's `true` leaves its stdin. It holds at most `capacity` bytes ahead
/// of its reader, and stops reading `source` once the reader is gone.
pub fn feed(source: impl io::Read + Send + 'static, capacity: usize) -> PipeReader {
    let (writer, reader) = pipe(capacity, b"");
    let failed = writer.clone();
    reader.on_first_read(move || {
        let started = std::thread::Builder::new()
            .name("wb-stdin".into())
            .spawn(move || pump(source, writer));
        if let Err(e) = started {
            failed.fail(io::Error::other(format!(
                "stdin: no thread to read it: {e}"
            )));
        }
    });
    reader
}

/// Where a session's stdin for its pipelines comes from. Either is read
/// only once a stage reads it: a line that never reads stdin starts no
/// thread and takes nothing from the host's stdin.
#[derive(Debug, Clone)]
pub enum SessionInput {
    /// A pipe already holding (or being fed) the bytes; one whose writer
    /// starts only when it is read says so with
    /// [`PipeReader::on_first_read`].
    Pipe(PipeReader),
    /// The host process's own stdin, fed into a pipe once read.
    ProcessStdin,
}

impl SessionInput {
    /// The stream itself, for the stage wired to the session's stdin.
    pub fn open(self) -> PipeReader {
        match self {
            SessionInput::Pipe(reader) => reader,
            SessionInput::ProcessStdin => feed(std::io::stdin(), crate::limits::PIPE_CAPACITY),
        }
    }
}

fn pump(mut source: impl io::Read, mut writer: PipeWriter) {
    use tokio::io::AsyncWriteExt;
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        let n = match source.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return writer.fail(e),
        };
        if futures::executor::block_on(writer.write_all(&chunk[..n])).is_err() {
            break;
        }
    }
    writer.close();
}

fn broken() -> StreamError {
    StreamError::Trap(wasmtime::Error::new(BrokenPipe))
}

#[async_trait::async_trait]
impl Pollable for PipeWriter {
    async fn ready(&mut self) {
        std::future::poll_fn(|cx| self.end.shared.poll_writable(cx)).await
    }
}

impl OutputStream for PipeWriter {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        match self.end.shared.put(&bytes) {
            Ok(true) => Ok(()),
            Ok(false) => Err(StreamError::trap("write larger than check-write permitted")),
            Err(BrokenPipe) => Err(broken()),
        }
    }

    fn flush(&mut self) -> StreamResult<()> {
        self.end.shared.room().map(drop).map_err(|_| broken())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        self.end.shared.room().map_err(|_| broken())
    }
}

#[async_trait::async_trait]
impl Pollable for PipeReader {
    async fn ready(&mut self) {
        std::future::poll_fn(|cx| self.end.shared.poll_readable(cx)).await
    }
}

impl InputStream for PipeReader {
    fn read(&mut self, size: usize) -> StreamResult<Bytes> {
        match self.end.shared.take(size) {
            Ok(Some(bytes)) => Ok(bytes),
            Ok(None) => Err(StreamError::Closed),
            Err(e) => Err(StreamError::LastOperationFailed(wasmtime::Error::new(e))),
        }
    }
}

impl AsyncRead for PipeReader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let shared = &self.end.shared;
        if shared.poll_readable(cx).is_pending() {
            return Poll::Pending;
        }
        if let Some(bytes) = shared.take(buf.remaining())? {
            buf.put_slice(bytes.chunk());
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for PipeWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        let shared = &self.end.shared;
        if shared.poll_writable(cx).is_pending() {
            return Poll::Pending;
        }
        let pipe_error = |_| io::Error::from(io::ErrorKind::BrokenPipe);
        let n = bytes.len().min(shared.room().map_err(pipe_error)?);
        shared.put(&bytes[..n]).map_err(pipe_error)?;
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.close();
        Poll::Ready(Ok(()))
    }
}

impl IsTerminal for PipeReader {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl IsTerminal for PipeWriter {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdinStream for PipeReader {
    fn p2_stream(&self) -> Box<dyn InputStream> {
        Box::new(self.clone())
    }

    fn async_stream(&self) -> Box<dyn AsyncRead + Send + Sync> {
        Box::new(self.clone())
    }
}

/// Serves a cheaply cloned writer as a WASI stdout: each store gets a
/// clone, writing into the same place.
macro_rules! stdout_stream_by_clone {
    ($writer:ty) => {
        impl wasmtime_wasi::cli::StdoutStream for $writer {
            fn p2_stream(&self) -> Box<dyn wasmtime_wasi::p2::OutputStream> {
                Box::new(self.clone())
            }

            fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
                Box::new(self.clone())
            }
        }
    };
}
use stdout_stream_by_clone;

stdout_stream_by_clone!(PipeWriter);

mod session_output;
pub use session_output::{SessionOutput, SessionOutputError};

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[test]
    fn a_writer_never_puts_more_than_the_capacity_in_flight() {
        let (mut w, _r) = pipe(8, b"");
        assert_eq!(w.check_write().unwrap(), 8);
        OutputStream::write(&mut w, Bytes::from_static(b"12345678")).unwrap();
        assert_eq!(w.check_write().unwrap(), 0);
        assert!(matches!(
            OutputStream::write(&mut w, Bytes::from_static(b"9")),
            Err(StreamError::Trap(_))
        ));
        assert_eq!(w.written(), 8);
    }

    #[tokio::test]
    async fn a_reader_gets_the_bytes_in_order_then_end_of_input() {
        let (mut w, mut r) = pipe(4, b"ab");
        let writer = async move {
            w.write_all(b"cdefghij").await.unwrap();
        };
        let reader = async move {
            let mut all = Vec::new();
            r.read_to_end(&mut all).await.unwrap();
            all
        };
        let ((), all) = tokio::join!(writer, reader);
        assert_eq!(all, b"abcdefghij");
    }

    #[test]
    fn a_write_after_the_reader_is_gone_is_a_broken_pipe_trap() {
        let (mut w, r) = pipe(8, b"");
        drop(r);
        assert!(w.is_broken());
        let err = match w.check_write() {
            Err(StreamError::Trap(e)) => e,
            other => panic!("{other:?}"),
        };
        assert!(err.downcast_ref::<BrokenPipe>().is_some());
        assert!(matches!(
            OutputStream::write(&mut w, Bytes::from_static(b"x")),
            Err(StreamError::Trap(_))
        ));
    }

    #[tokio::test]
    async fn a_writer_blocked_on_a_full_pipe_wakes_when_the_reader_leaves() {
        let (mut w, r) = pipe(2, b"");
        let writer = tokio::spawn(async move { w.write_all(b"too long").await });
        tokio::task::yield_now().await;
        r.close();
        let e = writer.await.unwrap().unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
    }

    #[tokio::test]
    async fn a_fed_pipe_streams_its_source_then_ends() {
        let source: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let mut r = feed(std::io::Cursor::new(source.clone()), 1024);
        let mut all = Vec::new();
        r.read_to_end(&mut all).await.unwrap();
        assert_eq!(all, source);
    }

    /// A source that counts its reads, gives `data` once, then fails, and
    /// says when it is dropped.
    struct Counted {
        reads: Arc<AtomicUsize>,
        dropped: Arc<AtomicBool>,
        data: Option<Vec<u8>>,
    }

    impl io::Read for Counted {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.reads.fetch_add(1, SeqCst);
            match self.data.take() {
                Some(data) => {
                    buf[..data.len()].copy_from_slice(&data);
                    Ok(data.len())
                }
                None => Err(io::Error::other("the disk is gone")),
            }
        }
    }

    impl Drop for Counted {
        fn drop(&mut self) {
            self.dropped.store(true, SeqCst);
        }
    }

    fn counted(data: &[u8]) -> (Counted, Arc<AtomicUsize>, Arc<AtomicBool>) {
        let (reads, dropped) = (Arc::default(), Arc::default());
        let source = Counted {
            reads: Arc::clone(&reads),
            dropped: Arc::clone(&dropped),
            data: Some(data.to_vec()),
        };
        (source, reads, dropped)
    }

    #[tokio::test]
    async fn a_fed_pipe_whose_reader_never_reads_never_touches_its_source() {
        let (source, reads, dropped) = counted(b"for the next command");
        let r = feed(source, 1024);
        let clone = r.clone();
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        r.close();
        drop((r, clone));
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert_eq!(reads.load(SeqCst), 0);
        // And it is let go of with the reader: nothing keeps it.
        assert!(dropped.load(SeqCst));
    }

    #[tokio::test]
    async fn a_source_that_fails_fails_the_read_after_the_bytes_before_it() {
        let (source, reads, dropped) = counted(b"first part");
        let mut r = feed(source, 1024);
        let mut all = Vec::new();
        let e = r.read_to_end(&mut all).await.unwrap_err();
        assert_eq!(all, b"first part");
        assert_eq!(e.to_string(), "the disk is gone");
        assert_eq!(reads.load(SeqCst), 2);
        // Its pump ended on the failure, and let it go.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        assert!(dropped.load(SeqCst));
        // And the same through the WASI stream a guest reads.
        let (source, ..) = counted(b"x");
        let mut r = feed(source, 1024);
        let mut got = Vec::new();
        let failure = loop {
            match InputStream::read(&mut r, 64) {
                Ok(bytes) if bytes.is_empty() => r.ready().await,
                Ok(bytes) => got.extend_from_slice(&bytes),
                Err(e) => break e,
            }
        };
        assert_eq!(got, b"x");
        assert!(
            matches!(&failure, StreamError::LastOperationFailed(e) if e.to_string() == "the disk is gone"),
            "{failure:?}"
        );
    }

    #[test]
    fn closing_one_clone_of_the_writer_ends_the_input() {
        let (w, mut r) = pipe(8, b"x");
        let other = w.clone();
        w.close();
        assert_eq!(
            InputStream::read(&mut r, 8).unwrap(),
            Bytes::from_static(b"x")
        );
        assert!(matches!(
            InputStream::read(&mut r, 8),
            Err(StreamError::Closed)
        ));
        drop(other);
    }
}
