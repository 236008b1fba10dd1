//! Exact decimal numbers for `seq`: operands are parsed into a scaled
//! integer so that stepping by `.1` never drifts, and printed with a fixed
//! number of fraction digits like `printf("%.Nf")`.

/// A parsed operand: `mantissa / 10^scale`, plus how it was written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decimal {
    /// The value times `10^scale`.
    pub mantissa: i128,
    /// Number of fraction digits the value carries.
    pub scale: u32,
    /// Written with a minus sign (matters for `-0`).
    pub negative: bool,
    /// Characters the operand would take printed at its own scale.
    pub width: usize,
}

/// Largest scale accepted; keeps `10^scale` and products inside `i128`.
const MAX_SCALE: u32 = 30;

/// Parses `[+-]digits[.digits][e[+-]digits]` (at least one digit).
pub fn parse(text: &[u8]) -> Option<Decimal> {
    let text = std::str::from_utf8(text).ok()?.trim_start();
    let (negative, unsigned) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    if let Some(hex) = unsigned
        .strip_prefix("0x")
        .or_else(|| unsigned.strip_prefix("0X"))
    {
        return parse_hex(hex, negative);
    }
    let (number, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => (&unsigned[..at], Some(parse_exponent(&unsigned[at + 1..])?)),
        None => (unsigned, None),
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let all_digits = |part: &str| part.bytes().all(|b| b.is_ascii_digit());
    if whole.len() + fraction.len() == 0 || !all_digits(whole) || !all_digits(fraction) {
        return None;
    }
    let mut mantissa: i128 = 0;
    for digit in whole.bytes().chain(fraction.bytes()) {
        mantissa = mantissa
            .checked_mul(10)?
            .checked_add(i128::from(digit - b'0'))?;
    }
    let fraction_digits = i64::try_from(fraction.len()).ok()?;
    let shift = fraction_digits - exponent.unwrap_or(0);
    let scale = if shift >= 0 {
        u32::try_from(shift).ok()?
    } else {
        mantissa = mantissa.checked_mul(pow10(u32::try_from(-shift).ok()?)?)?;
        0
    };
    if scale > MAX_SCALE {
        return None;
    }
    if negative {
        mantissa = -mantissa;
    }
    let mut decimal = Decimal {
        mantissa,
        scale,
        negative,
        width: 0,
    };
    let rendered = render(mantissa, scale, negative).len();
    decimal.width = if exponent.is_some() {
        rendered
    } else {
        rendered.max(text.len() - usize::from(text.starts_with('+')))
    };
    Some(decimal)
}

fn parse_hex(digits: &str, negative: bool) -> Option<Decimal> {
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let magnitude = i128::from_str_radix(digits, 16).ok()?;
    let mantissa = if negative { -magnitude } else { magnitude };
    Some(Decimal {
        mantissa,
        scale: 0,
        negative,
        width: render(mantissa, 0, negative).len(),
    })
}

/// True for `inf` and `infinity` (any case, optionally signed); the flag
/// says whether it is negative.
pub fn parse_infinity(text: &[u8]) -> Option<bool> {
    let (negative, word) = match text.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, text),
    };
    let infinite = word.eq_ignore_ascii_case(b"inf") || word.eq_ignore_ascii_case(b"infinity");
    infinite.then_some(negative)
}

fn parse_exponent(text: &str) -> Option<i64> {
    let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) || digits.len() > 4 {
        return None;
    }
    text.parse().ok()
}

/// `10^exponent`, if it fits.
pub fn pow10(exponent: u32) -> Option<i128> {
    10i128.checked_pow(exponent)
}

impl Decimal {
    /// The mantissa rescaled to `scale` (which must not be smaller).
    pub fn at_scale(&self, scale: u32) -> Option<i128> {
        self.mantissa.checked_mul(pow10(scale - self.scale)?)
    }

    /// The width this operand needs when printed with `precision` digits.
    pub fn width_at(&self, precision: u32) -> usize {
        let missing = precision.saturating_sub(self.scale) as usize;
        let point = usize::from(self.scale == 0 && precision > 0);
        self.width + missing + point
    }
}

/// Renders `mantissa / 10^scale` with exactly `scale` fraction digits.
pub fn render(mantissa: i128, scale: u32, negative_zero: bool) -> String {
    let digits = mantissa.unsigned_abs().to_string();
    let scale = scale as usize;
    let mut text = String::with_capacity(digits.len() + scale + 3);
    if mantissa < 0 || (mantissa == 0 && negative_zero) {
        text.push('-');
    }
    if scale == 0 {
        text.push_str(&digits);
        return text;
    }
    if digits.len() <= scale {
        text.push_str("0.");
        text.extend(std::iter::repeat_n('0', scale - digits.len()));
        text.push_str(&digits);
    } else {
        let (whole, fraction) = digits.split_at(digits.len() - scale);
        text.push_str(whole);
        text.push('.');
        text.push_str(fraction);
    }
    text
}

/// Pads a rendered number with zeros after its sign up to `width`.
pub fn zero_pad(text: &str, width: usize) -> String {
    if text.len() >= width {
        return text.to_string();
    }
    let (sign, digits) = match text.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", text),
    };
    format!("{sign}{}{digits}", "0".repeat(width - text.len()))
}

/// The value as the nearest `f64` (for `-f` formats).
pub fn to_f64(mantissa: i128, scale: u32, negative_zero: bool) -> f64 {
    let value: f64 = format!("{mantissa}e-{scale}").parse().unwrap_or(0.0);
    if value == 0.0 && negative_zero {
        -0.0
    } else {
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions_and_exponents_become_scaled_integers() {
        let value = parse(b"-2.25").unwrap();
        assert_eq!((value.mantissa, value.scale, value.width), (-225, 2, 5));
        let value = parse(b"1.0e0").unwrap();
        assert_eq!((value.mantissa, value.scale), (10, 1));
        let value = parse(b"15e-1").unwrap();
        assert_eq!((value.mantissa, value.scale), (15, 1));
        assert_eq!(parse(b"2e3").unwrap().mantissa, 2000);
        assert_eq!(parse(b".5").unwrap().mantissa, 5);
        assert_eq!(parse(b"0x10").unwrap().mantissa, 16);
    }

    #[test]
    fn infinity_is_recognised_with_its_sign() {
        assert_eq!(parse_infinity(b"inf"), Some(false));
        assert_eq!(parse_infinity(b"-Infinity"), Some(true));
        assert_eq!(parse_infinity(b"info"), None);
    }

    #[test]
    fn malformed_operands_are_rejected() {
        for text in ["", "-", ".", "1f", "1..2", "e5", "1e", "--1", "1e99999"] {
            assert_eq!(parse(text.as_bytes()), None, "{text}");
        }
    }

    #[test]
    fn rendering_places_the_point_and_keeps_negative_zero() {
        assert_eq!(render(5, 2, false), "0.05");
        assert_eq!(render(-250, 2, false), "-2.50");
        assert_eq!(render(0, 2, true), "-0.00");
        assert_eq!(zero_pad("-2", 3), "-02");
    }
}
