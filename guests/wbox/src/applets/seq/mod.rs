//! `seq`: print numbers from FIRST to LAST by INCREMENT. Arithmetic is exact
//! decimal; output precision follows FIRST and INCREMENT like GNU seq, with
//! `-s` separators, `-w` equal width and `-f` printf-style formats.

mod decimal;
mod format;

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};

use super::usage_failure;
use crate::args::{self, OptSpec, UsageError};
use crate::streams::{Io, report};
use decimal::Decimal;
use format::Template;

const NAME: &str = "seq";
const SYNOPSIS: &str = "[-w] [-s SEPARATOR] [-f FORMAT] [FIRST [INCREMENT]] LAST";
const SPEC: OptSpec = OptSpec {
    short: "f:s:w",
    long: &[("format", 'f'), ("separator", 's'), ("equal-width", 'w')],
    negative_numbers_are_operands: true,
    number_option: None,
    stop_at_first_operand: false,
};
const FLUSH_AT: usize = 64 * 1024;

struct Settings {
    template: Option<Template>,
    separator: Vec<u8>,
    equal_width: bool,
}

/// The sequence after parsing, all at one common scale.
struct Range {
    first: i128,
    step: i128,
    last: i128,
    scale: u32,
    precision: u32,
    width: usize,
    negative_zero_start: bool,
}

/// Runs `seq`.
pub fn run(args: &[OsString], io: &mut Io) -> io::Result<u8> {
    let parsed = match args::parse(args, &SPEC) {
        Ok(parsed) => parsed,
        Err(err) => return usage_failure(io, NAME, SYNOPSIS, &err),
    };
    let mut settings = Settings {
        template: None,
        separator: b"\n".to_vec(),
        equal_width: false,
    };
    for opt in &parsed.opts {
        match opt.letter {
            'f' => match format::parse(opt.value_bytes()) {
                Ok(template) => settings.template = Some(template),
                Err(message) => {
                    report(&mut *io.stderr, NAME, &message);
                    return Ok(1);
                }
            },
            's' => settings.separator = opt.value_bytes().to_vec(),
            _ => settings.equal_width = true,
        }
    }
    if settings.equal_width && settings.template.is_some() {
        let message = "format string may not be specified when printing equal width strings";
        return usage_failure(io, NAME, SYNOPSIS, &UsageError::Message(message.into()));
    }
    let Some((last_operand, leading)) = parsed.operands.split_last() else {
        let err = UsageError::Message("missing operand".into());
        return usage_failure(io, NAME, SYNOPSIS, &err);
    };
    if leading.len() > 2 {
        let err = UsageError::Message("extra operand".into());
        return usage_failure(io, NAME, SYNOPSIS, &err);
    }
    let mut values = Vec::with_capacity(3);
    for operand in leading {
        match decimal::parse(operand.as_encoded_bytes()) {
            Some(value) => values.push(value),
            None => return invalid_operand(io, operand),
        }
    }
    let last_bytes = last_operand.as_encoded_bytes();
    let last = match decimal::parse_infinity(last_bytes) {
        Some(negative) => Last::Infinite { negative },
        None => match decimal::parse(last_bytes) {
            Some(value) => Last::Finite(value),
            None => return invalid_operand(io, last_operand),
        },
    };
    let Some(range) = build_range(&values, last, settings.equal_width) else {
        report(&mut *io.stderr, NAME, "numbers out of range");
        return Ok(1);
    };
    emit(&range, &settings, &mut *io.stdout)?;
    Ok(0)
}

fn invalid_operand(io: &mut Io, operand: &OsStr) -> io::Result<u8> {
    let message = format!(
        "invalid floating point argument: '{}'",
        operand.to_string_lossy()
    );
    report(&mut *io.stderr, NAME, &message);
    Ok(1)
}

/// LAST may be infinite (`seq inf` counts until output fails).
enum Last {
    Finite(Decimal),
    Infinite { negative: bool },
}

fn build_range(leading: &[Decimal], last: Last, equal_width: bool) -> Option<Range> {
    let one = Decimal {
        mantissa: 1,
        scale: 0,
        negative: false,
        width: 1,
    };
    let (first, step) = match leading {
        [] => (one, one),
        [first] => (*first, one),
        [first, step] => (*first, *step),
        _ => return None,
    };
    let precision = first.scale.max(step.scale);
    let (scale, last_width) = match &last {
        Last::Finite(value) => (precision.max(value.scale), value.width_at(precision)),
        Last::Infinite { .. } => (precision, 0),
    };
    let width = if equal_width {
        first.width_at(precision).max(last_width)
    } else {
        0
    };
    let last = match last {
        Last::Finite(value) => value.at_scale(scale)?,
        Last::Infinite { negative: true } => i128::MIN,
        Last::Infinite { negative: false } => i128::MAX,
    };
    Some(Range {
        first: first.at_scale(scale)?,
        step: step.at_scale(scale)?,
        last,
        scale,
        precision,
        width,
        negative_zero_start: first.negative && first.mantissa == 0,
    })
}

fn emit(range: &Range, settings: &Settings, out: &mut dyn Write) -> io::Result<()> {
    if settings.template.is_none()
        && range.scale == 0
        && range.step == 1
        && range.width == 0
        && range.first >= 0
        && !range.negative_zero_start
    {
        return emit_counting(range, &settings.separator, out);
    }
    let divisor = decimal::pow10(range.scale - range.precision).unwrap_or(1);
    let mut buffer = Vec::with_capacity(FLUSH_AT + 256);
    let mut value = range.first;
    let mut index: u64 = 0;
    loop {
        let past_end = if range.step < 0 {
            value < range.last
        } else {
            value > range.last
        };
        if past_end {
            break;
        }
        if index > 0 {
            buffer.extend_from_slice(&settings.separator);
        }
        let negative_zero = index == 0 && range.negative_zero_start;
        match &settings.template {
            Some(template) => {
                let number = decimal::to_f64(value, range.scale, negative_zero);
                template.write(number, &mut buffer);
            }
            None => {
                let text = decimal::render(value / divisor, range.precision, negative_zero);
                buffer.extend_from_slice(decimal::zero_pad(&text, range.width).as_bytes());
            }
        }
        if buffer.len() >= FLUSH_AT {
            out.write_all(&buffer)?;
            buffer.clear();
        }
        index += 1;
        match value.checked_add(range.step) {
            Some(next) => value = next,
            None => break,
        }
    }
    if index > 0 {
        buffer.push(b'\n');
    }
    out.write_all(&buffer)
}

/// Fast path for whole numbers counting up by one: increments the decimal
/// text in place instead of formatting every number.
/// The widest number counted: an `i128` has at most 39 digits.
const COUNTING_DIGITS: usize = 40;

/// The most one turn of ten short numbers writes past the fill mark: ten
/// numbers of up to eight digits with their separators, and the last
/// eight-byte copy.
const TEN_NUMBERS_BYTES: usize = 10 * 9 + 8;

/// Counting by one from a non-negative integer, the most common `seq`: the
/// number is kept as text and incremented in place, and each one is copied
/// out as a fixed-size word (no length-dependent copy per line).
fn emit_counting(range: &Range, separator: &[u8], out: &mut dyn Write) -> io::Result<()> {
    if range.first > range.last {
        return Ok(());
    }
    let mut remaining = range.last.abs_diff(range.first).saturating_add(1);
    let first = range.first.to_string();
    let mut digits = [0u8; COUNTING_DIGITS];
    let mut len = first.len();
    digits[..len].copy_from_slice(first.as_bytes());
    // A short run needs less than a whole batch: the buffer is sized to
    // what the run writes (at most `FLUSH_AT`), with room past it for a
    // turn of ten, one more separator, one whole word of digits and the
    // final newline.
    let widest = range.last.unsigned_abs().to_string().len() + separator.len();
    let flush_at = remaining
        .saturating_mul(widest as u128)
        .min(FLUSH_AT as u128) as usize;
    let mut buffer =
        vec![0u8; flush_at + TEN_NUMBERS_BYTES + separator.len() + COUNTING_DIGITS + 1];
    let mut filled = 0;
    // Up to eight digits also live in one word (little-endian: the last
    // digit is the highest byte in use), incremented and written whole.
    // Rewriting one digit byte in memory and then reading the eight as a
    // word would stall the processor on every number.
    let mut word = word_of(&digits);
    loop {
        if filled >= flush_at {
            out.write_all(&buffer[..filled])?;
            filled = 0;
        }
        // Ten numbers that differ in their last digit only, in one loop
        // turn (each turn also pays a fuel and a deadline check in the
        // sandbox).
        let last_digit = 8 * (len.min(8) - 1);
        if let [one] = separator
            && len <= 8
            && (word >> last_digit) as u8 == b'0'
            && remaining > 10
        {
            for step in 0..10 {
                let number = word + (step << last_digit);
                buffer[filled..filled + 8].copy_from_slice(&number.to_le_bytes());
                buffer[filled + len] = *one;
                filled += len + 1;
            }
            remaining -= 10;
            digits[..8].copy_from_slice(&(word + (9 << last_digit)).to_le_bytes());
            len = increment_ascii(&mut digits, len);
            word = word_of(&digits);
            continue;
        }
        if len <= 8 {
            buffer[filled..filled + 8].copy_from_slice(&word.to_le_bytes());
        } else {
            buffer[filled..filled + COUNTING_DIGITS].copy_from_slice(&digits);
        }
        filled += len;
        remaining -= 1;
        if remaining == 0 {
            break;
        }
        match separator {
            [one] => buffer[filled] = *one,
            _ => buffer[filled..filled + separator.len()].copy_from_slice(separator),
        }
        filled += separator.len();
        if len <= 8 && ((word >> last_digit) as u8) < b'9' {
            word += 1 << last_digit;
        } else {
            if len <= 8 {
                digits[..8].copy_from_slice(&word.to_le_bytes());
            }
            len = increment_ascii(&mut digits, len);
            word = word_of(&digits);
        }
    }
    buffer[filled] = b'\n';
    out.write_all(&buffer[..filled + 1])
}

/// The first eight bytes of `digits` as one little-endian word.
fn word_of(digits: &[u8; COUNTING_DIGITS]) -> u64 {
    let mut first = [0u8; 8];
    first.copy_from_slice(&digits[..8]);
    u64::from_le_bytes(first)
}

/// Adds one to the `len` decimal digits at the start of `digits`; returns
/// the new length.
fn increment_ascii(digits: &mut [u8; COUNTING_DIGITS], len: usize) -> usize {
    for digit in digits[..len].iter_mut().rev() {
        if *digit == b'9' {
            *digit = b'0';
        } else {
            *digit += 1;
            return len;
        }
    }
    digits[0] = b'1';
    digits[len] = b'0';
    len + 1
}
