//! Numeric and month readings of sort keys: exact decimals for `-n` and
//! `-h` (with SI suffix ranks), floats for `-g` and month numbers for `-M`.

use std::cmp::Ordering;

use super::keys::is_blank;

/// An exact decimal: sign, integer digits without leading zeros and
/// fraction digits without trailing zeros.
#[derive(Debug, Clone, Copy)]
pub struct Decimal<'a> {
    negative: bool,
    whole: &'a [u8],
    fraction: &'a [u8],
}

/// `-g` classes: text that is not a number sorts first, then NaN, then numbers.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub enum Float {
    /// No number at the start of the key.
    Missing,
    /// Not a number.
    NaN,
    /// A number, infinities included.
    Number(f64),
}

/// Magnitude hints stay below this (whole parts up to 11 digits, then six
/// fraction digits).
pub const MAGNITUDE_LIMIT: u64 = 100_000_000_000_000_000;

impl Decimal<'_> {
    /// -1, 0 or 1; negative zero counts as zero.
    pub fn sign(&self) -> i8 {
        if self.whole.is_empty() && self.fraction.is_empty() {
            0
        } else if self.negative {
            -1
        } else {
            1
        }
    }

    /// Compares absolute values.
    pub fn magnitude_cmp(&self, other: &Decimal) -> Ordering {
        self.whole
            .len()
            .cmp(&other.whole.len())
            .then_with(|| self.whole.cmp(other.whole))
            .then_with(|| self.fraction.cmp(other.fraction))
    }

    /// The magnitude as whole part and six fraction digits, saturating at
    /// [`MAGNITUDE_LIMIT`]` - 1`; never contradicts [`Self::magnitude_cmp`].
    pub fn magnitude_hint(&self) -> u64 {
        if self.whole.len() > 11 {
            return MAGNITUDE_LIMIT - 1;
        }
        let digits = self.whole.iter().copied().chain(
            self.fraction
                .iter()
                .copied()
                .chain(std::iter::repeat(b'0'))
                .take(6),
        );
        digits.fold(0u64, |acc, digit| acc * 10 + u64::from(digit - b'0'))
    }
}

/// Parses blanks, an optional `-`, digits and an optional fraction; a key
/// without digits is zero. Returns the number and what follows it.
pub fn parse_decimal(key: &[u8]) -> (Decimal<'_>, &[u8]) {
    let mut position = key.iter().take_while(|&&b| is_blank(b)).count();
    let negative = key.get(position) == Some(&b'-');
    if negative {
        position += 1;
    }
    let digits = |from: usize| {
        key[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let whole_len = digits(position);
    let mut whole = &key[position..position + whole_len];
    position += whole_len;
    let mut fraction: &[u8] = &[];
    if key.get(position) == Some(&b'.') {
        let fraction_len = digits(position + 1);
        fraction = &key[position + 1..position + 1 + fraction_len];
        position += 1 + fraction_len;
    }
    while let [b'0', rest @ ..] = whole {
        whole = rest;
    }
    while let [rest @ .., b'0'] = fraction {
        fraction = rest;
    }
    let number = Decimal {
        negative,
        whole,
        fraction,
    };
    (number, &key[position..])
}

/// Rank of an SI suffix letter for `-h` (K=1 ... Q=10), 0 for none.
pub fn suffix_rank(suffix: Option<u8>) -> u8 {
    let Some(letter) = suffix else {
        return 0;
    };
    let letter = if letter == b'k' { b'K' } else { letter };
    b"KMGTPEZYRQ"
        .iter()
        .position(|&unit| unit == letter)
        .map_or(0, |index| u8::try_from(index + 1).unwrap_or(0))
}

/// Parses the longest floating point prefix of `key` (after blanks).
pub fn parse_float(key: &[u8]) -> Float {
    let start = key.iter().take_while(|&&b| is_blank(b)).count();
    let text = &key[start..];
    let sign_len = usize::from(matches!(text.first(), Some(b'+' | b'-')));
    let body = &text[sign_len..];
    let starts_with = |word: &[u8]| {
        body.get(..word.len())
            .is_some_and(|prefix| prefix.eq_ignore_ascii_case(word))
    };
    let negative = text.first() == Some(&b'-');
    if starts_with(b"nan") {
        return Float::NaN;
    }
    if starts_with(b"inf") {
        return Float::Number(if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    }
    let count_digits = |from: usize| {
        body[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let mut length = count_digits(0);
    let mut mantissa_digits = length;
    if body.get(length) == Some(&b'.') {
        let fraction = count_digits(length + 1);
        mantissa_digits += fraction;
        length += 1 + fraction;
    }
    if mantissa_digits == 0 {
        return Float::Missing;
    }
    if matches!(body.get(length), Some(b'e' | b'E')) {
        let exponent_sign = usize::from(matches!(body.get(length + 1), Some(b'+' | b'-')));
        let exponent_digits = count_digits(length + 1 + exponent_sign);
        if exponent_digits > 0 {
            length += 1 + exponent_sign + exponent_digits;
        }
    }
    let literal = &text[..sign_len + length];
    std::str::from_utf8(literal)
        .ok()
        .and_then(|text| text.parse::<f64>().ok())
        .map_or(Float::Missing, Float::Number)
}

/// 1 to 12 for a key starting (after blanks) with JAN to DEC, else 0.
pub fn month_number(key: &[u8]) -> u8 {
    const MONTHS: [&[u8; 3]; 12] = [
        b"JAN", b"FEB", b"MAR", b"APR", b"MAY", b"JUN", b"JUL", b"AUG", b"SEP", b"OCT", b"NOV",
        b"DEC",
    ];
    let start = key.iter().take_while(|&&b| is_blank(b)).count();
    let Some(name) = key.get(start..start + 3) else {
        return 0;
    };
    MONTHS
        .iter()
        .position(|month| month.eq_ignore_ascii_case(name))
        .map_or(0, |index| u8::try_from(index + 1).unwrap_or(0))
}
