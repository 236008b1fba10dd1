//! `seq -f FORMAT`: a printf-style template holding exactly one floating
//! point conversion (`%e %f %g`, upper-case too) with flags, width and
//! precision; `%%` stands for a literal percent sign.

/// A validated `-f` template.
#[derive(Debug)]
pub struct Template {
    prefix: Vec<u8>,
    suffix: Vec<u8>,
    spec: Conversion,
}

#[derive(Debug, Default)]
struct Conversion {
    left_align: bool,
    plus_sign: bool,
    space_sign: bool,
    zero_pad: bool,
    alternate: bool,
    width: usize,
    precision: Option<usize>,
    letter: u8,
}

/// Parses and validates a template; the error text explains the rejection.
pub fn parse(text: &[u8]) -> Result<Template, String> {
    let mut prefix = Vec::new();
    let mut suffix = Vec::new();
    let mut spec = None;
    let mut index = 0;
    while index < text.len() {
        let byte = text[index];
        index += 1;
        let literal = if spec.is_some() {
            &mut suffix
        } else {
            &mut prefix
        };
        if byte != b'%' {
            literal.push(byte);
            continue;
        }
        if text.get(index) == Some(&b'%') {
            literal.push(b'%');
            index += 1;
            continue;
        }
        if spec.is_some() {
            return Err(format!(
                "format '{}' has too many % directives",
                lossy(text)
            ));
        }
        let (conversion, used) = parse_conversion(&text[index..])
            .ok_or_else(|| format!("format '{}' has an invalid % directive", lossy(text)))?;
        spec = Some(conversion);
        index += used;
    }
    let spec = spec.ok_or_else(|| format!("format '{}' has no % directive", lossy(text)))?;
    Ok(Template {
        prefix,
        suffix,
        spec,
    })
}

fn lossy(text: &[u8]) -> String {
    String::from_utf8_lossy(text).into_owned()
}

fn parse_conversion(text: &[u8]) -> Option<(Conversion, usize)> {
    let mut spec = Conversion::default();
    let mut index = 0;
    while let Some(&flag) = text.get(index) {
        match flag {
            b'-' => spec.left_align = true,
            b'+' => spec.plus_sign = true,
            b' ' => spec.space_sign = true,
            b'0' => spec.zero_pad = true,
            b'#' => spec.alternate = true,
            b'\'' => {}
            _ => break,
        }
        index += 1;
    }
    let (width, used) = leading_number(&text[index..])?;
    spec.width = width;
    index += used;
    if text.get(index) == Some(&b'.') {
        let (precision, used) = leading_number(&text[index + 1..])?;
        spec.precision = Some(precision);
        index += 1 + used;
    }
    let letter = *text.get(index)?;
    if !b"eEfFgG".contains(&letter) {
        return None;
    }
    spec.letter = letter;
    Some((spec, index + 1))
}

/// Widths and precisions above this are rejected rather than padded out.
const MAX_FIELD: usize = 1 << 16;

/// A run of decimal digits (possibly empty) and its length.
fn leading_number(text: &[u8]) -> Option<(usize, usize)> {
    let used = text.iter().take_while(|b| b.is_ascii_digit()).count();
    let mut value: usize = 0;
    for &digit in &text[..used] {
        value = value * 10 + usize::from(digit - b'0');
        if value > MAX_FIELD {
            return None;
        }
    }
    Some((value, used))
}

impl Template {
    /// Appends `value` formatted through the template to `out`.
    pub fn write(&self, value: f64, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.prefix);
        let spec = &self.spec;
        let sign = if value.is_sign_negative() && !value.is_nan() {
            "-"
        } else if spec.plus_sign {
            "+"
        } else if spec.space_sign {
            " "
        } else {
            ""
        };
        let body = render_magnitude(spec, value.abs());
        let length = sign.len() + body.len();
        let padding = spec.width.saturating_sub(length);
        if spec.left_align {
            out.extend_from_slice(sign.as_bytes());
            out.extend_from_slice(body.as_bytes());
            out.extend(std::iter::repeat_n(b' ', padding));
        } else if spec.zero_pad && value.is_finite() {
            out.extend_from_slice(sign.as_bytes());
            out.extend(std::iter::repeat_n(b'0', padding));
            out.extend_from_slice(body.as_bytes());
        } else {
            out.extend(std::iter::repeat_n(b' ', padding));
            out.extend_from_slice(sign.as_bytes());
            out.extend_from_slice(body.as_bytes());
        }
        out.extend_from_slice(&self.suffix);
    }
}

fn render_magnitude(spec: &Conversion, magnitude: f64) -> String {
    let upper = spec.letter.is_ascii_uppercase();
    if !magnitude.is_finite() {
        let word = if magnitude.is_nan() { "nan" } else { "inf" };
        return if upper {
            word.to_uppercase()
        } else {
            word.to_string()
        };
    }
    let precision = spec.precision.unwrap_or(6);
    let text = match spec.letter.to_ascii_lowercase() {
        b'f' => fixed(magnitude, precision, spec.alternate),
        b'e' => scientific(magnitude, precision, spec.alternate),
        _ => shortest(magnitude, precision.max(1), spec.alternate),
    };
    if upper { text.to_uppercase() } else { text }
}

fn fixed(magnitude: f64, precision: usize, alternate: bool) -> String {
    let mut text = format!("{magnitude:.precision$}");
    if alternate && precision == 0 {
        text.push('.');
    }
    text
}

fn scientific(magnitude: f64, precision: usize, alternate: bool) -> String {
    let rust = format!("{magnitude:.precision$e}");
    let (mantissa, exponent) = rust.split_once('e').unwrap_or((&rust, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let sign = if exponent < 0 { '-' } else { '+' };
    let point = if alternate && precision == 0 { "." } else { "" };
    format!("{mantissa}{point}e{sign}{:02}", exponent.unsigned_abs())
}

/// `%g`: scientific for very large or small exponents, fixed otherwise,
/// without trailing zeros unless `#` was given.
fn shortest(magnitude: f64, precision: usize, alternate: bool) -> String {
    let exponent = if magnitude == 0.0 {
        0
    } else {
        let rust = format!("{magnitude:.*e}", precision - 1);
        rust.split_once('e')
            .and_then(|(_, exponent)| exponent.parse::<i64>().ok())
            .unwrap_or(0)
    };
    let limit = i64::try_from(precision).unwrap_or(i64::MAX);
    let text = if exponent < -4 || exponent >= limit {
        scientific(magnitude, precision - 1, alternate)
    } else {
        let digits = usize::try_from(limit - 1 - exponent).unwrap_or(0);
        fixed(magnitude, digits, alternate)
    };
    if alternate {
        return text;
    }
    let (number, exponent_part) = match text.find('e') {
        Some(at) => text.split_at(at),
        None => (text.as_str(), ""),
    };
    let number = if number.contains('.') {
        number.trim_end_matches('0').trim_end_matches('.')
    } else {
        number
    };
    format!("{number}{exponent_part}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(template: &str, value: f64) -> String {
        let mut out = Vec::new();
        parse(template.as_bytes()).unwrap().write(value, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn conversions_match_printf() {
        assert_eq!(apply("%g", 100000.0), "100000");
        assert_eq!(apply("%g", 1000000.0), "1e+06");
        assert_eq!(apply("%g", 0.0001), "0.0001");
        assert_eq!(apply("%e", 1.5), "1.500000e+00");
        assert_eq!(apply("%.2f", 2.005), "2.00");
        assert_eq!(apply("%+01g", 0.0), "+0");
        assert_eq!(apply("%03g", 5.0), "005");
        assert_eq!(apply("%-4g|", 5.0), "5   |");
        assert_eq!(apply("x%%%G", 1e-10), "x%1E-10");
    }

    #[test]
    fn templates_need_exactly_one_float_directive() {
        for bad in [
            "%d", "%s", "", "%f %f", "%*f", "%-1.2.3f", "%2$f", "%1-f", "%%%f%%%",
        ] {
            assert!(parse(bad.as_bytes()).is_err(), "{bad}");
        }
        for good in ["%f", "boo %f yah", "% f", "%+-f", "%'.2f", "%%%f%%"] {
            assert!(parse(good.as_bytes()).is_ok(), "{good}");
        }
    }
}
