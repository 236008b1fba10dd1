//! The relay's frames: a container-tier child's calls to its parent and
//! the parent's answers, over the one Unix stream socket the child
//! inherits (it has no network and no path to anything of its parent's).
//!
//! Both ways a frame is `[len u32 LE][id u64 LE][len - 8 bytes]`. A call's
//! bytes are the engine's encoded call; an answer's are a status byte
//! ([`ANSWERED`]: the call's encoded result follows; [`REFUSED`]: the UTF-8
//! reason follows) and those bytes. Answers are matched to calls by id, so
//! a child may have several calls out.
//!
//! Invariant: a head is checked against what its reader allows before
//! anything is allocated for the bytes behind it.

use std::io;
use std::ops::RangeInclusive;

/// Bytes in a head: the length, then the id.
pub const HEAD_BYTES: usize = 12;

/// The most an answer may hold: far past any real one (the largest are a
/// fan-out's outputs); stops a broken parent from making its child
/// allocate without bound.
pub const MAX_ANSWER_BYTES: usize = 1 << 30;

/// An answer's status: the result follows.
pub const ANSWERED: u8 = 0;
/// An answer's status: refused, the reason follows.
pub const REFUSED: u8 = 1;

/// A head that no frame the reader takes has.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("a relay frame of {len} bytes is not one (it holds its 8-byte id and {min} to {max} bytes)", min = .allowed.start(), max = .allowed.end())]
pub struct FrameError {
    /// The length the head gave, id included.
    pub len: usize,
    /// What the reader takes behind the id.
    pub allowed: RangeInclusive<usize>,
}

/// A frame's head, read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Head {
    /// The call's id (an answer carries its call's).
    pub id: u64,
    /// Bytes behind the head.
    pub body: usize,
}

impl Head {
    /// Reads a head whose frame may carry `allowed` bytes behind its id.
    pub fn parse(
        head: [u8; HEAD_BYTES],
        allowed: RangeInclusive<usize>,
    ) -> Result<Head, FrameError> {
        let [a, b, c, d, id @ ..] = head;
        let len = u32::from_le_bytes([a, b, c, d]) as usize;
        match len.checked_sub(8) {
            Some(body) if allowed.contains(&body) => Ok(Head {
                id: u64::from_le_bytes(id),
                body,
            }),
            _ => Err(FrameError { len, allowed }),
        }
    }

    /// The head of the frame of `id` with `body` bytes behind it; an error
    /// past what a `u32` length holds.
    pub fn encode(id: u64, body: usize) -> io::Result<[u8; HEAD_BYTES]> {
        let len = body
            .checked_add(8)
            .and_then(|len| u32::try_from(len).ok())
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "relay frame too large"))?;
        let mut head = [0u8; HEAD_BYTES];
        head[..4].copy_from_slice(&len.to_le_bytes());
        head[4..].copy_from_slice(&id.to_le_bytes());
        Ok(head)
    }
}

/// The whole frame answering call `id`: its encoded result, or why it was
/// refused.
pub fn answer_frame(id: u64, answer: Result<&[u8], &str>) -> io::Result<Vec<u8>> {
    let (status, bytes) = match answer {
        Ok(bytes) => (ANSWERED, bytes),
        Err(why) => (REFUSED, why.as_bytes()),
    };
    let head = Head::encode(id, 1 + bytes.len())?;
    let mut frame = Vec::with_capacity(HEAD_BYTES + 1 + bytes.len());
    frame.extend_from_slice(&head);
    frame.push(status);
    frame.extend_from_slice(bytes);
    Ok(frame)
}

/// An answer's bytes (read behind a head that allowed at least one): the
/// call's encoded result, or the reason it was refused.
pub fn read_answer(mut body: Vec<u8>) -> Result<Vec<u8>, String> {
    match body.first() {
        Some(&ANSWERED) => Ok(body.split_off(1)),
        Some(_) => Err(String::from_utf8_lossy(&body[1..]).into_owned()),
        None => Err("an empty answer".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_reads_back_as_it_was_written_both_ways() {
        for answer in [Ok(&b"\x00result"[..]), Err("no such key")] {
            let frame = answer_frame(7, answer).unwrap();
            let head = Head::parse(
                frame[..HEAD_BYTES].try_into().unwrap(),
                1..=MAX_ANSWER_BYTES,
            )
            .unwrap();
            assert_eq!(
                head,
                Head {
                    id: 7,
                    body: frame.len() - HEAD_BYTES
                }
            );
            let read = read_answer(frame[HEAD_BYTES..].to_vec());
            assert_eq!(read, answer.map(<[u8]>::to_vec).map_err(str::to_string));
        }
    }

    #[test]
    fn a_head_past_the_readers_limit_or_shorter_than_its_id_is_refused_by_length() {
        let big = Head::encode(1, 101).unwrap();
        assert_eq!(
            Head::parse(big, 0..=100),
            Err(FrameError {
                len: 109,
                allowed: 0..=100
            })
        );
        assert_eq!(
            Head::parse(Head::encode(1, 100).unwrap(), 0..=100)
                .unwrap()
                .body,
            100
        );
        let mut short = [0u8; HEAD_BYTES];
        short[0] = 7;
        let err = Head::parse(short, 0..=100).unwrap_err();
        assert_eq!(
            err.to_string(),
            "a relay frame of 7 bytes is not one (it holds its 8-byte id and 0 to 100 bytes)"
        );
        let empty = Head::encode(1, 0).unwrap();
        assert!(
            Head::parse(empty, 1..=MAX_ANSWER_BYTES).is_err(),
            "an answer has its status"
        );
    }

    #[test]
    fn a_frame_past_a_u32_length_is_not_written() {
        assert!(Head::encode(1, u32::MAX as usize - 7).is_err());
        assert!(Head::encode(1, u32::MAX as usize - 8).is_ok());
    }
}
