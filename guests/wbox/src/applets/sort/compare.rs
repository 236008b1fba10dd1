//! Key values and how they order: byte text (optionally case-folded or
//! filtered), exact decimal numbers (`-n`), numbers with SI suffixes
//! (`-h`), floating point (`-g`) and month names (`-M`), plus the
//! order-preserving hints that settle most comparisons without the text.

use std::cmp::Ordering;

use super::keys::{Flags, is_blank};
use super::numbers::{
    Decimal, Float, MAGNITUDE_LIMIT, month_number, parse_decimal, parse_float, suffix_rank,
};

/// A key parsed according to its flags.
#[derive(Debug, Clone, Copy)]
pub enum Value<'a> {
    /// Compared as bytes (possibly filtered, see [`compare_text`]).
    Text(&'a [u8]),
    /// A decimal number, with its SI suffix rank for `-h` (0 otherwise).
    Number { number: Decimal<'a>, rank: u8 },
    /// `-g`: a parsed float.
    Float(Float),
    /// `-M`: 0 for unknown, 1 to 12 for JAN to DEC.
    Month(u8),
}

/// Parses `key` for the ordering its flags ask for.
pub fn parse_value<'a>(key: &'a [u8], flags: &Flags) -> Value<'a> {
    if flags.numeric || flags.human_numeric {
        let (number, rest) = parse_decimal(key);
        let rank = if flags.human_numeric {
            suffix_rank(rest.first().copied())
        } else {
            0
        };
        Value::Number { number, rank }
    } else if flags.general_numeric {
        Value::Float(parse_float(key))
    } else if flags.month {
        Value::Month(month_number(key))
    } else {
        Value::Text(key)
    }
}

/// Orders two values parsed with the same flags (reversal excluded).
pub fn compare_values(left: &Value, right: &Value, flags: &Flags) -> Ordering {
    match (left, right) {
        (Value::Text(a), Value::Text(b)) => compare_text(a, b, flags),
        (
            Value::Number {
                number: a,
                rank: ra,
            },
            Value::Number {
                number: b,
                rank: rb,
            },
        ) => {
            let sign = a.sign().cmp(&b.sign());
            if sign != Ordering::Equal {
                return sign;
            }
            let by_rank = ra.cmp(rb).then_with(|| a.magnitude_cmp(b));
            if a.sign() < 0 {
                by_rank.reverse()
            } else {
                by_rank
            }
        }
        (Value::Float(a), Value::Float(b)) => a.partial_cmp(b).unwrap_or(Ordering::Equal),
        (Value::Month(a), Value::Month(b)) => a.cmp(b),
        _ => Ordering::Equal,
    }
}

/// Byte comparison, honouring `-f`, `-d` and `-i`.
pub fn compare_text(left: &[u8], right: &[u8], flags: &Flags) -> Ordering {
    if !(flags.fold_case || flags.dictionary || flags.printable_only) {
        return left.cmp(right);
    }
    let keep = |byte: &u8| {
        (!flags.dictionary || is_blank(*byte) || byte.is_ascii_alphanumeric())
            && (!flags.printable_only || (b' '..=b'~').contains(byte))
    };
    let fold = |byte: &u8| {
        if flags.fold_case {
            byte.to_ascii_uppercase()
        } else {
            *byte
        }
    };
    let left = left.iter().filter(|b| keep(b)).map(fold);
    let right = right.iter().filter(|b| keep(b)).map(fold);
    left.cmp(right)
}

/// An order-preserving summary of a value: when two hints differ they
/// order the values the same way (before any reversal); equal hints say
/// nothing and the full comparison decides. Keeps most comparisons inside
/// the array being sorted instead of chasing pointers into the text.
pub fn hint(value: &Value, flags: &Flags) -> u64 {
    const MIDDLE: u64 = 1 << 62;
    match value {
        Value::Text(text) if !(flags.dictionary || flags.printable_only) => {
            let mut prefix = [0u8; 8];
            for (slot, byte) in prefix.iter_mut().zip(text.iter()) {
                *slot = if flags.fold_case {
                    byte.to_ascii_uppercase()
                } else {
                    *byte
                };
            }
            u64::from_be_bytes(prefix)
        }
        Value::Text(_) => 0,
        Value::Number { number, rank } => {
            let magnitude = u64::from(*rank) * MAGNITUDE_LIMIT + number.magnitude_hint();
            match number.sign() {
                0 => MIDDLE,
                sign if sign < 0 => MIDDLE - magnitude,
                _ => MIDDLE + magnitude,
            }
        }
        Value::Float(Float::Missing) => 0,
        Value::Float(Float::NaN) => 1,
        Value::Float(Float::Number(number)) => {
            let number = if *number == 0.0 { 0.0 } else { *number };
            let bits = number.to_bits();
            if bits >> 63 == 1 {
                !bits
            } else {
                bits | (1 << 63)
            }
        }
        Value::Month(month) => u64::from(*month),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn order(flags: Flags, left: &str, right: &str) -> Ordering {
        let a = parse_value(left.as_bytes(), &flags);
        let b = parse_value(right.as_bytes(), &flags);
        compare_values(&a, &b, &flags)
    }

    #[test]
    fn numeric_order_is_exact_and_treats_text_as_zero() {
        let numeric = Flags {
            numeric: true,
            ..Flags::default()
        };
        assert_eq!(order(numeric, "10", "9"), Ordering::Greater);
        assert_eq!(order(numeric, "-10", "-9"), Ordering::Less);
        assert_eq!(order(numeric, "0.5", "0.50"), Ordering::Equal);
        assert_eq!(order(numeric, "-0", "abc"), Ordering::Equal);
        assert_eq!(order(numeric, " 007", "7"), Ordering::Equal);
        assert_eq!(order(numeric, "1.05", "1.5"), Ordering::Less);
    }

    #[test]
    fn human_numbers_order_by_suffix_first() {
        let human = Flags {
            human_numeric: true,
            ..Flags::default()
        };
        assert_eq!(order(human, "2K", "1023"), Ordering::Greater);
        assert_eq!(order(human, "1M", "3k"), Ordering::Greater);
        assert_eq!(order(human, "5y", "4m"), Ordering::Greater);
    }

    #[test]
    fn general_numbers_put_text_and_nan_first() {
        let general = Flags {
            general_numeric: true,
            ..Flags::default()
        };
        assert_eq!(order(general, "bork", "NaN"), Ordering::Less);
        assert_eq!(order(general, "NaN", "-inf"), Ordering::Less);
        assert_eq!(order(general, "1e3", "999"), Ordering::Greater);
        assert_eq!(order(general, "+infinity", "1e308"), Ordering::Greater);
    }

    #[test]
    fn hints_never_contradict_the_full_comparison() {
        let numeric = Flags {
            numeric: true,
            ..Flags::default()
        };
        let samples = [
            "-10",
            "-9.5",
            "-0",
            "0",
            "0.0000001",
            "1.5",
            "1.50001",
            "12",
            "123456789012345",
        ];
        for left in samples {
            for right in samples {
                let a = parse_value(left.as_bytes(), &numeric);
                let b = parse_value(right.as_bytes(), &numeric);
                let by_hint = hint(&a, &numeric).cmp(&hint(&b, &numeric));
                if by_hint != Ordering::Equal {
                    assert_eq!(
                        by_hint,
                        compare_values(&a, &b, &numeric),
                        "{left} vs {right}"
                    );
                }
            }
        }
    }

    #[test]
    fn months_and_folded_text() {
        let month = Flags {
            month: true,
            ..Flags::default()
        };
        assert_eq!(order(month, " march", "APRIL"), Ordering::Less);
        assert_eq!(order(month, "xyz", "jan"), Ordering::Less);
        let fold = Flags {
            fold_case: true,
            ..Flags::default()
        };
        assert_eq!(order(fold, "a", "B"), Ordering::Less);
        assert_eq!(order(fold, "_", "a"), Ordering::Greater);
    }
}
