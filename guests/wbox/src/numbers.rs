//! Defensive parsing of the numbers applets take as option values: plain
//! integers and coreutils-style counts with size suffixes (`2K`, `1MB`).

/// Parses an optionally signed decimal integer; `None` on anything else or overflow.
pub fn parse_i64(text: &[u8]) -> Option<i64> {
    std::str::from_utf8(text).ok()?.parse().ok()
}

/// Parses an unsigned decimal integer (a leading `+` is accepted).
pub fn parse_u64(text: &[u8]) -> Option<u64> {
    let digits = text.strip_prefix(b"+").unwrap_or(text);
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(digits).ok()?.parse().ok()
}

/// Parses a count such as `10`, `3b` (512-byte blocks), `2K`/`2KiB` (1024s)
/// or `2KB` (1000s). Values too large for `u64` saturate, as "everything".
pub fn parse_count(text: &[u8]) -> Option<u64> {
    let digits_end = text
        .iter()
        .position(|b| !b.is_ascii_digit())
        .unwrap_or(text.len());
    if digits_end == 0 {
        return None;
    }
    let base = text[..digits_end].iter().fold(0u64, |acc, &d| {
        acc.saturating_mul(10).saturating_add(u64::from(d - b'0'))
    });
    let multiplier = suffix_multiplier(&text[digits_end..])?;
    Some(base.saturating_mul(multiplier))
}

fn suffix_multiplier(suffix: &[u8]) -> Option<u64> {
    let Some((&first, rest)) = suffix.split_first() else {
        return Some(1);
    };
    if first == b'b' && rest.is_empty() {
        return Some(512);
    }
    let power = b"KMGTPEZY"
        .iter()
        .position(|&letter| letter == first.to_ascii_uppercase())?;
    let exponent = u32::try_from(power + 1).ok()?;
    let unit: u64 = match rest {
        b"" | b"iB" => 1024,
        b"B" => 1000,
        _ => return None,
    };
    Some(unit.checked_pow(exponent).unwrap_or(u64::MAX))
}

/// Converts a count to `usize`, saturating on narrow targets.
pub fn saturating_usize(value: u64) -> usize {
    usize::try_from(value).unwrap_or(usize::MAX)
}

/// Writes `value` in decimal into the end of `buffer` and returns the
/// digits; cheaper than `core::fmt` in per-line loops.
pub fn decimal_digits(value: u64, buffer: &mut [u8; 20]) -> &[u8] {
    let mut rest = value;
    let mut start = buffer.len();
    loop {
        start -= 1;
        buffer[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            return &buffer[start..];
        }
    }
}

/// Appends `value` right-aligned in `width` columns, padded with spaces.
pub fn push_right_aligned(out: &mut Vec<u8>, value: u64, width: usize) {
    let mut buffer = [0u8; 20];
    let digits = decimal_digits(value, &mut buffer);
    out.extend(std::iter::repeat_n(
        b' ',
        width.saturating_sub(digits.len()),
    ));
    out.extend_from_slice(digits);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_accept_size_suffixes() {
        assert_eq!(parse_count(b"10"), Some(10));
        assert_eq!(parse_count(b"2K"), Some(2048));
        assert_eq!(parse_count(b"2kB"), Some(2000));
        assert_eq!(parse_count(b"1b"), Some(512));
        assert_eq!(parse_count(b"99999999999999999999999"), Some(u64::MAX));
    }

    #[test]
    fn decimal_digits_cover_zero_and_the_largest_value() {
        let mut buffer = [0u8; 20];
        assert_eq!(decimal_digits(0, &mut buffer), b"0");
        assert_eq!(
            decimal_digits(u64::MAX, &mut buffer),
            b"18446744073709551615"
        );
        let mut out = Vec::new();
        push_right_aligned(&mut out, 42, 6);
        assert_eq!(out, b"    42");
    }

    #[test]
    fn malformed_counts_are_rejected() {
        assert_eq!(parse_count(b""), None);
        assert_eq!(parse_count(b"x"), None);
        assert_eq!(parse_count(b"3q"), None);
        assert_eq!(parse_u64(b"-3"), None);
        assert_eq!(parse_i64(b"12a"), None);
    }
}
