//! Byte-level line helpers shared by the applets: separating a line from
//! its terminator, locating the last N lines and counting delimiters.

/// Splits a line into its content and its terminator (empty when missing).
pub fn split_terminator(line: &[u8], delimiter: u8) -> (&[u8], &[u8]) {
    match line.last() {
        Some(&last) if last == delimiter => line.split_at(line.len() - 1),
        _ => (line, &[]),
    }
}

/// Offset where the last `n` lines of `data` begin (0 when there are fewer).
/// A final line without a terminator counts as a line.
pub fn last_lines_start(data: &[u8], n: usize, delimiter: u8) -> usize {
    if n == 0 {
        return data.len();
    }
    let body = match data.last() {
        Some(&last) if last == delimiter => &data[..data.len() - 1],
        _ => data,
    };
    let mut remaining = n;
    let mut end = body.len();
    while let Some(found) = body[..end].iter().rposition(|&b| b == delimiter) {
        remaining -= 1;
        if remaining == 0 {
            return found + 1;
        }
        end = found;
    }
    0
}

const LOW_SEVEN: u64 = 0x7f7f_7f7f_7f7f_7f7f;

/// For each byte of `word` equal to `byte`, the top bit of that byte (and
/// nothing else) is set in the result.
pub fn matching_bytes(word: &[u8], byte: u8) -> u64 {
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(word);
    let diff = u64::from_le_bytes(bytes) ^ u64::from_le_bytes([byte; 8]);
    !(((diff & LOW_SEVEN) + LOW_SEVEN) | diff | LOW_SEVEN)
}

/// Number of occurrences of `byte` in `data`, thirty-two bytes per loop
/// turn (in the sandbox each turn also pays a fuel and a deadline check).
pub fn count_byte(data: &[u8], byte: u8) -> usize {
    let mut blocks = data.chunks_exact(32);
    let mut count = 0;
    for block in &mut blocks {
        let (a, rest) = block.split_at(8);
        let (b, rest) = rest.split_at(8);
        let (c, d) = rest.split_at(8);
        let found = matching_bytes(a, byte).count_ones()
            + matching_bytes(b, byte).count_ones()
            + matching_bytes(c, byte).count_ones()
            + matching_bytes(d, byte).count_ones();
        count += found as usize;
    }
    let mut words = blocks.remainder().chunks_exact(8);
    for word in &mut words {
        count += matching_bytes(word, byte).count_ones() as usize;
    }
    count + words.remainder().iter().filter(|&&b| b == byte).count()
}

/// Position of the first `byte` in `data`, eight bytes at a time.
pub fn find_byte(data: &[u8], byte: u8) -> Option<usize> {
    let mut words = data.chunks_exact(8);
    let mut offset = 0;
    for word in &mut words {
        let matches = matching_bytes(word, byte);
        if matches != 0 {
            return Some(offset + matches.trailing_zeros() as usize / 8);
        }
        offset += 8;
    }
    let tail = words.remainder().iter().position(|&b| b == byte)?;
    Some(offset + tail)
}

/// Length of the first line of `data` including its terminator (all of
/// `data` when there is no terminator).
pub fn first_line_len(data: &[u8], delimiter: u8) -> usize {
    find_byte(data, delimiter).map_or(data.len(), |at| at + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_byte_agrees_with_a_plain_count() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 37 % 251) as u8).collect();
        // Every split into 32-byte blocks, 8-byte words and a tail.
        for len in (0..80).chain([999, 1000]) {
            for byte in [0u8, 10, 127, 128, 255] {
                let expected = data[..len].iter().filter(|&&b| b == byte).count();
                assert_eq!(count_byte(&data[..len], byte), expected, "{len} bytes");
            }
        }
        assert_eq!(count_byte(b"a\nb\n\n", b'\n'), 3);
    }

    #[test]
    fn find_byte_reports_the_first_match_in_words_and_tail() {
        let data = b"abcdefghijklmnopq\nrs\n";
        assert_eq!(find_byte(data, b'\n'), Some(17));
        assert_eq!(find_byte(data, b'a'), Some(0));
        assert_eq!(find_byte(data, b'z'), None);
        assert_eq!(find_byte(b"ab", b'b'), Some(1));
        assert_eq!(first_line_len(b"abc", b'\n'), 3);
    }

    #[test]
    fn last_lines_start_counts_an_unterminated_final_line() {
        assert_eq!(last_lines_start(b"a\nb\nc\n", 2, b'\n'), 2);
        assert_eq!(last_lines_start(b"a\nb\nc", 1, b'\n'), 4);
        assert_eq!(last_lines_start(b"a\nb\n", 5, b'\n'), 0);
        assert_eq!(last_lines_start(b"a\n", 0, b'\n'), 2);
    }
}
