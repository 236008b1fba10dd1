//! Parsing of `tr` character sets: ranges (`a-z`), backslash escapes
//! (`\n`, `\\`, octal `\NNN`), classes (`[:alpha:]`), equivalence classes
//! (`[=c=]`) and, in the second set, repeats (`[c*N]`, `[c*]`).

/// One parsed element of a set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Literal bytes, ranges and classes already expanded in order.
    Bytes(Vec<u8>),
    /// `[c*N]`: `c` repeated N times; `None` for `[c*]` (fill to length).
    Repeat(u8, Option<usize>),
}

/// Parses a set operand.
pub fn parse(text: &[u8]) -> Result<Vec<Piece>, String> {
    let mut pieces = Vec::new();
    let mut literal = Vec::new();
    let mut index = 0;
    while index < text.len() {
        if text[index] == b'['
            && let Some((piece, used)) = bracket(&text[index..])?
        {
            match piece {
                Piece::Bytes(bytes) => literal.extend_from_slice(&bytes),
                repeat => {
                    if !literal.is_empty() {
                        pieces.push(Piece::Bytes(std::mem::take(&mut literal)));
                    }
                    pieces.push(repeat);
                }
            }
            index += used;
            continue;
        }
        let (first, used) = one_char(&text[index..]);
        index += used;
        let is_range = text.get(index) == Some(&b'-') && index + 1 < text.len();
        if !is_range {
            literal.push(first);
            continue;
        }
        let (last, used) = one_char(&text[index + 1..]);
        index += 1 + used;
        if last < first {
            return Err(format!(
                "range-endpoints of '{}-{}' are in reverse collating sequence order",
                char::from(first),
                char::from(last)
            ));
        }
        literal.extend(first..=last);
    }
    if !literal.is_empty() {
        pieces.push(Piece::Bytes(literal));
    }
    Ok(pieces)
}

/// A bracketed construct at the start of `text`, with the bytes it used;
/// `None` when the `[` is just a literal.
fn bracket(text: &[u8]) -> Result<Option<(Piece, usize)>, String> {
    match text.get(1) {
        Some(b':') => {
            if let Some(end) = find(text, b":]", 2) {
                let name = &text[2..end];
                let members = class_members(name).ok_or_else(|| {
                    format!(
                        "invalid character class '{}'",
                        String::from_utf8_lossy(name)
                    )
                })?;
                return Ok(Some((Piece::Bytes(members), end + 2)));
            }
        }
        Some(b'=') => {
            if let Some(end) = find(text, b"=]", 2) {
                let (byte, used) = one_char(&text[2..end]);
                if used == end - 2 && used > 0 {
                    return Ok(Some((Piece::Bytes(vec![byte]), end + 2)));
                }
            }
        }
        Some(_) => {
            let (byte, used) = one_char(&text[1..]);
            let star = 1 + used;
            if text.get(star) == Some(&b'*') {
                let digits_end = star
                    + 1
                    + text[star + 1..]
                        .iter()
                        .take_while(|b| b.is_ascii_digit())
                        .count();
                if text.get(digits_end) == Some(&b']') {
                    let count = repeat_count(&text[star + 1..digits_end])?;
                    return Ok(Some((Piece::Repeat(byte, count), digits_end + 1)));
                }
            }
        }
        None => {}
    }
    Ok(None)
}

/// `N` in `[c*N]`: decimal, or octal with a leading zero; empty or zero means fill.
fn repeat_count(digits: &[u8]) -> Result<Option<usize>, String> {
    if digits.is_empty() {
        return Ok(None);
    }
    let text = String::from_utf8_lossy(digits);
    let parsed = if digits[0] == b'0' {
        usize::from_str_radix(&text, 8)
    } else {
        text.parse()
    };
    match parsed {
        Ok(0) => Ok(None),
        Ok(count) => Ok(Some(count)),
        Err(_) => Err(format!("invalid repeat count '{text}' in [c*n] construct")),
    }
}

fn find(text: &[u8], needle: &[u8], from: usize) -> Option<usize> {
    text.get(from..)?
        .windows(needle.len())
        .position(|window| window == needle)
        .map(|at| at + from)
}

/// One possibly escaped character at the start of `text` and its length.
fn one_char(text: &[u8]) -> (u8, usize) {
    if text.first() != Some(&b'\\') || text.len() == 1 {
        return (text[0], 1);
    }
    let octal_digits = text[1..]
        .iter()
        .take(3)
        .take_while(|b| (b'0'..=b'7').contains(b))
        .count();
    if octal_digits > 0 {
        let value = text[1..=octal_digits]
            .iter()
            .fold(0u32, |acc, &digit| acc * 8 + u32::from(digit - b'0'));
        return (value.to_le_bytes()[0], 1 + octal_digits);
    }
    let byte = match text[1] {
        b'a' => 0x07,
        b'b' => 0x08,
        b'f' => 0x0c,
        b'n' => b'\n',
        b'r' => b'\r',
        b't' => b'\t',
        b'v' => 0x0b,
        other => other,
    };
    (byte, 2)
}

/// Members of a POSIX character class, in ascending byte order.
fn class_members(name: &[u8]) -> Option<Vec<u8>> {
    let test: fn(&u8) -> bool = match name {
        b"alpha" => u8::is_ascii_alphabetic,
        b"alnum" => u8::is_ascii_alphanumeric,
        b"digit" => u8::is_ascii_digit,
        b"lower" => u8::is_ascii_lowercase,
        b"upper" => u8::is_ascii_uppercase,
        b"space" => |b| matches!(b, b'\t'..=b'\r' | b' '),
        b"blank" => |b| matches!(b, b'\t' | b' '),
        b"punct" => u8::is_ascii_punctuation,
        b"cntrl" => u8::is_ascii_control,
        b"graph" => u8::is_ascii_graphic,
        b"print" => |b| matches!(b, b' '..=b'~'),
        b"xdigit" => u8::is_ascii_hexdigit,
        _ => return None,
    };
    Some((0..=255u8).filter(test).collect())
}

/// Expands a set to bytes; a `[c*]` fill grows to reach `target` bytes.
pub fn expand(pieces: &[Piece], target: usize) -> Vec<u8> {
    let fixed: usize = pieces
        .iter()
        .map(|piece| match piece {
            Piece::Bytes(bytes) => bytes.len(),
            Piece::Repeat(_, count) => count.unwrap_or(0),
        })
        .sum();
    let mut fill = target.saturating_sub(fixed);
    let mut bytes = Vec::new();
    for piece in pieces {
        match piece {
            Piece::Bytes(members) => bytes.extend_from_slice(members),
            Piece::Repeat(byte, Some(count)) => {
                // Positions past the target are never used for mapping.
                let useful = (*count).min(target.saturating_add(1));
                bytes.extend(std::iter::repeat_n(*byte, useful));
            }
            Piece::Repeat(byte, None) => {
                bytes.extend(std::iter::repeat_n(*byte, fill));
                fill = 0;
            }
        }
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(text: &str) -> Vec<u8> {
        expand(&parse(text.as_bytes()).unwrap(), 0)
    }

    #[test]
    fn ranges_escapes_and_classes_expand_in_order() {
        assert_eq!(flat("a-e"), b"abcde");
        assert_eq!(flat("\\n\\t\\\\\\101"), b"\n\t\\A");
        assert_eq!(flat("[:digit:]x"), b"0123456789x");
        assert_eq!(flat("[:xdigit:]"), b"0123456789ABCDEFabcdef");
        assert_eq!(flat("[q-z]"), b"[qrstuvwxyz]");
        assert_eq!(flat("[=a=]"), b"a");
    }

    #[test]
    fn repeats_fill_to_the_target_length() {
        let pieces = parse(b"a[x*]b").unwrap();
        assert_eq!(expand(&pieces, 5), b"axxxb");
        assert_eq!(expand(&parse(b"[y*3]").unwrap(), 5), b"yyy");
        assert_eq!(expand(&parse(b"[y*99999999999]z").unwrap(), 2), b"yyyz");
        assert_eq!(expand(&parse(b"[y*010]").unwrap(), 10).len(), 8);
    }

    #[test]
    fn bad_sets_are_rejected() {
        assert!(parse(b"z-a").is_err());
        assert!(parse(b"[:nope:]").is_err());
    }
}
