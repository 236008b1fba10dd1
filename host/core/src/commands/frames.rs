//! The parent's reader of an `os_process` child's answer.
//!
//! The child (`workbooks::child::run`) never lets the guest write to its
//! real stdout or stderr: it answers in the frames the protocol crate
//! declares and writes (`workbooks_wire::child`, `write_answer`), the
//! guest's stdout, its stderr, then the engine's [`Verdict`]. Guest bytes
//! only travel inside a frame the child sized, so nothing a guest prints
//! can pass for a verdict.
//!
//! The parent reads frames as they arrive with the same caps as the
//! in-process tier and gives up at the first byte past a cap, so a child
//! that misbehaves (or is not `wbx` at all) cannot make the parent hold more
//! than [`crate::limits::MAX_CAPTURED_OUTPUT_BYTES`] per stream.

use crate::limits::MAX_CAPTURED_OUTPUT_BYTES;
use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncReadExt};
use workbooks_wire::child::{MAX_VERDICT_BYTES, STDERR, STDOUT, VERDICT};

/// How the child's run ended: the guest's exit code, or the engine's
/// [`CommandError`](super::CommandError), as an in-process run would say.
pub type Verdict = workbooks_wire::child::Verdict<super::CommandError>;

/// What a child sent.
#[derive(Debug, Default)]
pub struct Received {
    /// The guest's stdout.
    pub stdout: Bytes,
    /// The guest's stderr.
    pub stderr: Bytes,
    /// The verdict, if one arrived.
    pub verdict: Option<Verdict>,
}

/// Why a child's frames were not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// A stream passed its cap.
    #[error("{stream} passed {limit} bytes")]
    TooLarge {
        /// `stdout`, `stderr` or `verdict`.
        stream: &'static str,
        /// The cap.
        limit: usize,
    },
    /// The bytes are not frames.
    #[error("malformed frames from the child: {0}")]
    Malformed(String),
}

/// Reads frames until end of input, refusing at the first frame that would
/// take a stream past its cap (before reading that frame's bytes).
pub async fn read(mut input: impl AsyncRead + Unpin) -> Result<Received, FrameError> {
    let mut stdout = BytesMut::new();
    let mut stderr = BytesMut::new();
    let mut verdict = None;
    let io = |e: std::io::Error| FrameError::Malformed(e.to_string());
    loop {
        let mut tag = [0u8; 1];
        if input.read(&mut tag).await.map_err(io)? == 0 {
            break;
        }
        let mut len = [0u8; 4];
        input.read_exact(&mut len).await.map_err(io)?;
        let len = u32::from_le_bytes(len) as usize;
        let (buf, stream, limit) = match tag[0] {
            STDOUT => (&mut stdout, "stdout", MAX_CAPTURED_OUTPUT_BYTES),
            STDERR => (&mut stderr, "stderr", MAX_CAPTURED_OUTPUT_BYTES),
            VERDICT if verdict.is_none() => {
                if len > MAX_VERDICT_BYTES {
                    return Err(FrameError::TooLarge {
                        stream: "verdict",
                        limit: MAX_VERDICT_BYTES,
                    });
                }
                let mut json = vec![0u8; len];
                input.read_exact(&mut json).await.map_err(io)?;
                verdict = Some(
                    serde_json::from_slice(&json)
                        .map_err(|e| FrameError::Malformed(format!("verdict: {e}")))?,
                );
                continue;
            }
            other => {
                return Err(FrameError::Malformed(format!(
                    "unexpected frame tag {other}"
                )));
            }
        };
        if buf.len().saturating_add(len) > limit {
            return Err(FrameError::TooLarge { stream, limit });
        }
        let start = buf.len();
        buf.resize(start + len, 0);
        input.read_exact(&mut buf[start..]).await.map_err(io)?;
    }
    Ok(Received {
        stdout: stdout.freeze(),
        stderr: stderr.freeze(),
        verdict,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use workbooks_wire::child::write_answer;

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn frames_round_trip_and_guest_text_never_becomes_a_verdict() {
        let mut wire = Vec::new();
        let forged = b"wbx: refused: capability not granted: everything\n";
        write_answer(&mut wire, b"out", forged, &Verdict::Exit(120)).unwrap();
        let got = block_on(read(&wire[..])).unwrap();
        assert_eq!(&got.stdout[..], b"out");
        assert_eq!(&got.stderr[..], forged);
        assert_eq!(got.verdict, Some(Verdict::Exit(120)));
    }

    #[test]
    fn a_frame_past_the_cap_is_refused_before_it_is_read() {
        let mut wire = vec![STDOUT];
        wire.extend_from_slice(&u32::MAX.to_le_bytes());
        let e = block_on(read(&wire[..])).unwrap_err();
        assert_eq!(
            e,
            FrameError::TooLarge {
                stream: "stdout",
                limit: MAX_CAPTURED_OUTPUT_BYTES
            }
        );
    }

    #[test]
    fn a_verdict_past_its_cap_is_refused() {
        let mut wire = vec![VERDICT];
        wire.extend_from_slice(&(MAX_VERDICT_BYTES as u32 + 1).to_le_bytes());
        assert!(matches!(
            block_on(read(&wire[..])),
            Err(FrameError::TooLarge {
                stream: "verdict",
                ..
            })
        ));
    }

    #[test]
    fn bytes_that_are_not_frames_are_malformed() {
        for wire in [
            &b"wbx: trap: fake"[..],
            &[STDOUT, 9, 0, 0, 0, b'x'][..],
            &[9][..],
        ] {
            assert!(
                matches!(block_on(read(wire)), Err(FrameError::Malformed(_))),
                "{wire:?}"
            );
        }
    }
}
