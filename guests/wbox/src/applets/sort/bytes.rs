//! The plain byte order (`sort`, `sort -r`, `sort -u` with no keys and no
//! ordering flags), which most pipelines ask for, done without comparing
//! lines one pair at a time.
//!
//! Each line becomes a record: its first eight bytes (zero-padded, its
//! head), its offset and its length. The records are put in order of their
//! heads by a least-significant-digit radix sort, one pass per byte
//! position that is not the same for every line; only runs of records
//! whose heads tie (lines sharing their first eight bytes, or equal up to
//! trailing zero bytes) are then compared in full. The lines
//! are written straight from the input, eight bytes at a time where they
//! are short, in batches of [`WRITE_BATCH`] bytes.

use std::convert::Infallible;
use std::io::{self, Write};

use crate::lines::matching_bytes;

/// Below this many lines a comparison sort is cheaper than eight counts.
const RADIX_MIN_LINES: usize = 64;

/// Bytes gathered before each write: one write per batch of lines, not
/// two per line through the caller's writer.
pub const WRITE_BATCH: usize = 64 * 1024;

/// One line of the input, as the sort sees it.
#[derive(Clone, Copy, Default)]
struct Record {
    head: u64,
    start: usize,
    len: usize,
}

/// The lines of `data` (each ended by `delimiter`, the last one included)
/// in byte order, reversed when `reverse`, repeated lines dropped when
/// `unique`, written to `out`.
pub fn sort_and_write(
    data: &[u8],
    delimiter: u8,
    reverse: bool,
    unique: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut records = records_of(data, delimiter);
    sort_records(&mut records, data);
    let line = |r: &Record| &data[r.start..r.start + r.len];
    let mut writer = Batch::new(data, delimiter, out);
    if unique {
        let mut previous: Option<&[u8]> = None;
        in_fours(&records, reverse, |r| {
            if previous == Some(line(r)) {
                return Ok(());
            }
            previous = Some(line(r));
            writer.push(r)
        })?;
    } else {
        in_fours(&records, reverse, |r| writer.push(r))?;
    }
    writer.flush()
}

/// One record per terminated line, found eight bytes at a time.
fn records_of(data: &[u8], delimiter: u8) -> Vec<Record> {
    let mut records = Vec::with_capacity(crate::lines::count_byte(data, delimiter));
    let mut start = 0;
    let mut words = data.chunks_exact(8);
    let mut offset = 0;
    let mut line_at = |end: usize, records: &mut Vec<Record>| {
        records.push(Record {
            head: head_at(data, start, end - start),
            start,
            len: end - start,
        });
        start = end + 1;
    };
    for word in &mut words {
        let mut matches = matching_bytes(word, delimiter);
        while matches != 0 {
            line_at(offset + matches.trailing_zeros() as usize / 8, &mut records);
            matches &= matches - 1;
        }
        offset += 8;
    }
    for (i, &b) in words.remainder().iter().enumerate() {
        if b == delimiter {
            line_at(offset + i, &mut records);
        }
    }
    records
}

/// The first eight bytes of the line at `start` (of `len` bytes), zero
/// past the line's end, as a little-endian number: byte `i` of the line is
/// bits `8i..8i+8`. Two lines whose heads differ are ordered as their
/// heads with the bytes swapped; the radix sort reads the bytes in place,
/// so the common path never swaps (WebAssembly has no byte-swap
/// instruction).
fn head_at(data: &[u8], start: usize, len: usize) -> u64 {
    let word = match data.get(start..start + 8) {
        Some(word) => u64::from_le_bytes(word.try_into().expect("eight bytes")),
        None => {
            let mut padded = [0u8; 8];
            let n = len.min(8);
            padded[..n].copy_from_slice(&data[start..start + n]);
            return u64::from_le_bytes(padded);
        }
    };
    if len >= 8 {
        word
    } else {
        // Keep the line's own `len` bytes, the low ones.
        word & ((1u64 << (8 * len)) - 1)
    }
}

/// Orders `records` by their lines' bytes.
fn sort_records(records: &mut Vec<Record>, data: &[u8]) {
    if records.len() < RADIX_MIN_LINES {
        records.sort_unstable_by_key(|r| r.head.swap_bytes());
    } else {
        radix_sort_by_head(records);
    }
    let line = |r: &Record| &data[r.start..r.start + r.len];
    let heads_tie = |records: &[Record], i: usize| records[i].head == records[i + 1].head;
    let mut start = 0;
    while start + 1 < records.len() {
        // Most neighbours differ: step over four of them at a time.
        if start + 4 < records.len()
            && !(heads_tie(records, start)
                | heads_tie(records, start + 1)
                | heads_tie(records, start + 2)
                | heads_tie(records, start + 3))
        {
            start += 4;
            continue;
        }
        if !heads_tie(records, start) {
            start += 1;
            continue;
        }
        let head = records[start].head;
        let end = start
            + 2
            + records[start + 2..]
                .iter()
                .take_while(|r| r.head == head)
                .count();
        records[start..end].sort_unstable_by(|a, b| line(a).cmp(line(b)));
        start = end;
    }
}

/// Calls `f` on each record in order (or in reverse), four per loop turn:
/// in the sandbox every turn of a loop pays a fuel and a deadline check,
/// so the hot loops here take their items in fours.
fn in_fours<E>(
    records: &[Record],
    reverse: bool,
    mut f: impl FnMut(&Record) -> Result<(), E>,
) -> Result<(), E> {
    if reverse {
        let mut fours = records.rchunks_exact(4);
        for four in &mut fours {
            f(&four[3])?;
            f(&four[2])?;
            f(&four[1])?;
            f(&four[0])?;
        }
        fours.remainder().iter().rev().try_for_each(f)
    } else {
        let mut fours = records.chunks_exact(4);
        for four in &mut fours {
            f(&four[0])?;
            f(&four[1])?;
            f(&four[2])?;
            f(&four[3])?;
        }
        fours.remainder().iter().try_for_each(f)
    }
}

/// Least-significant byte first, over the byte positions where the records
/// differ: one pass counts them all, then one scatter per position.
fn radix_sort_by_head(records: &mut Vec<Record>) {
    let first = records[0].head;
    let mut differing = 0;
    let Ok(()) = in_fours(records, false, |r| {
        differing |= r.head ^ first;
        Ok::<_, Infallible>(())
    });
    // The byte positions where records differ, the line's last byte first;
    // the others are skipped.
    let shifts: Vec<u32> = (0..64)
        .step_by(8)
        .rev()
        .filter(|&shift| (differing >> shift) & 0xff != 0)
        .collect();
    // All eight positions are counted in one pass, a fixed number of
    // increments per record (no inner loop to run, no position to skip).
    let mut counts = vec![[0usize; 256]; 8];
    let Ok(()) = in_fours(records, false, |r| {
        for (position, byte) in r.head.to_le_bytes().into_iter().enumerate() {
            counts[position][byte as usize] += 1;
        }
        Ok::<_, Infallible>(())
    });
    let mut spare = vec![Record::default(); records.len()];
    for &shift in &shifts {
        let counts = &counts[shift as usize / 8];
        let mut next = [0usize; 256];
        let mut sum = 0;
        for (slot, &count) in next.iter_mut().zip(counts.iter()) {
            *slot = sum;
            sum += count;
        }
        let Ok(()) = in_fours(records, false, |r| {
            let digit = (r.head >> shift) as u8 as usize;
            spare[next[digit]] = *r;
            next[digit] += 1;
            Ok::<_, Infallible>(())
        });
        std::mem::swap(records, &mut spare);
    }
}

/// Lines gathered from the input into one buffer and written a batch at a
/// time.
struct Batch<'a> {
    data: &'a [u8],
    delimiter: u8,
    buffer: Vec<u8>,
    filled: usize,
    out: &'a mut dyn Write,
}

impl<'a> Batch<'a> {
    fn new(data: &'a [u8], delimiter: u8, out: &'a mut dyn Write) -> Self {
        Batch {
            data,
            delimiter,
            // No more than the whole output (at most the input), and eight
            // spare bytes: a short line is copied as one word.
            buffer: vec![0; WRITE_BATCH.min(data.len()) + 8],
            filled: 0,
            out,
        }
    }

    /// Adds one line. A short line with room to spare is one word copied
    /// and the delimiter: small enough to inline into the loop that calls
    /// it; everything else takes [`Batch::push_long`].
    #[inline(always)]
    fn push(&mut self, r: &Record) -> io::Result<()> {
        let at = self.filled;
        if r.len < 8
            && at + r.len < self.buffer.len() - 8
            && let Some(word) = self.data.get(r.start..r.start + 8)
        {
            // Past the line's end the word holds the next lines' bytes; the
            // delimiter and the next line overwrite them.
            self.buffer[at..at + 8].copy_from_slice(word);
            self.buffer[at + r.len] = self.delimiter;
            self.filled = at + r.len + 1;
            return Ok(());
        }
        self.push_long(r)
    }

    #[inline(never)]
    fn push_long(&mut self, r: &Record) -> io::Result<()> {
        let room = self.buffer.len() - 8;
        let line = &self.data[r.start..r.start + r.len];
        if self.filled + r.len + 1 > room {
            self.flush()?;
            if r.len + 1 > room {
                self.out.write_all(line)?;
                return self.out.write_all(&[self.delimiter]);
            }
        }
        let at = self.filled;
        self.buffer[at..at + r.len].copy_from_slice(line);
        self.buffer[at + r.len] = self.delimiter;
        self.filled = at + r.len + 1;
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buffer[..self.filled])?;
        self.filled = 0;
        Ok(())
    }
}
