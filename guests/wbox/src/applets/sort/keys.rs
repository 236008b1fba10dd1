//! Sort keys: the `-k POS1[,POS2]` syntax with per-key ordering letters,
//! and locating a key's bytes inside a line (fields split by `-t SEP`, or
//! by runs of blanks that stay attached to the following field).

/// Ordering options, global or per key.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flags {
    /// `b` on the start position: skip leading blanks there.
    pub skip_start_blanks: bool,
    /// `b` on the end position: skip leading blanks of the end field.
    pub skip_end_blanks: bool,
    /// `d`: only blanks and alphanumerics take part.
    pub dictionary: bool,
    /// `f`: fold lower case to upper case.
    pub fold_case: bool,
    /// `i`: only printable characters take part.
    pub printable_only: bool,
    /// `n`: numeric value.
    pub numeric: bool,
    /// `g`: general (floating point) numeric value.
    pub general_numeric: bool,
    /// `h`: numbers with SI suffixes.
    pub human_numeric: bool,
    /// `M`: month names.
    pub month: bool,
    /// `r`: reverse the result.
    pub reverse: bool,
}

impl Flags {
    /// Applies one option letter; false when the letter is not an ordering option.
    pub fn apply(&mut self, letter: u8, at_end: bool) -> bool {
        match letter {
            b'b' if at_end => self.skip_end_blanks = true,
            b'b' => self.skip_start_blanks = true,
            b'd' => self.dictionary = true,
            b'f' => self.fold_case = true,
            b'i' => self.printable_only = true,
            b'n' => self.numeric = true,
            b'g' => self.general_numeric = true,
            b'h' => self.human_numeric = true,
            b'M' => self.month = true,
            b'r' => self.reverse = true,
            _ => return false,
        }
        true
    }
}

/// One `-k` key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key {
    /// First field (1-based).
    pub start_field: usize,
    /// Character within the first field (1-based).
    pub start_char: usize,
    /// Last field (1-based); `None` runs to the end of the line.
    pub end_field: Option<usize>,
    /// Last character within the end field; 0 means the whole field.
    pub end_char: usize,
    /// Ordering options.
    pub flags: Flags,
}

impl Key {
    /// The implicit key used when no `-k` is given: the whole line.
    pub fn whole_line(flags: Flags) -> Key {
        Key {
            start_field: 1,
            start_char: 1,
            end_field: None,
            end_char: 0,
            flags,
        }
    }

    /// Gives a key without ordering options of its own the global ones.
    pub fn inherit(&mut self, global: Flags) {
        if self.flags == Flags::default() {
            self.flags = global;
            self.flags.skip_end_blanks = global.skip_start_blanks;
        }
    }
}

/// Parses `F[.C][OPTS][,F[.C][OPTS]]`.
pub fn parse_key(text: &[u8]) -> Result<Key, String> {
    let shown = String::from_utf8_lossy(text);
    let (start, end) = match text.iter().position(|&b| b == b',') {
        Some(comma) => (&text[..comma], Some(&text[comma + 1..])),
        None => (text, None),
    };
    let mut flags = Flags::default();
    let (start_field, start_char) =
        parse_position(start, &mut flags, false).ok_or_else(|| format!("invalid key '{shown}'"))?;
    if start_field == 0 || start_char == Some(0) {
        return Err(format!(
            "invalid key '{shown}': field and character start at 1"
        ));
    }
    let (end_field, end_char) = match end {
        Some(end) => {
            let (field, character) = parse_position(end, &mut flags, true)
                .ok_or_else(|| format!("invalid key '{shown}'"))?;
            if field == 0 {
                return Err(format!("invalid key '{shown}': field numbers start at 1"));
            }
            (Some(field), character.unwrap_or(0))
        }
        None => (None, 0),
    };
    Ok(Key {
        start_field,
        start_char: start_char.unwrap_or(1),
        end_field,
        end_char,
        flags,
    })
}

fn parse_position(text: &[u8], flags: &mut Flags, at_end: bool) -> Option<(usize, Option<usize>)> {
    let (field, mut rest) = leading_number(text)?;
    let mut character = None;
    if let Some(after_dot) = rest.strip_prefix(b".") {
        let (value, after) = leading_number(after_dot)?;
        character = Some(value);
        rest = after;
    }
    for &letter in rest {
        if !flags.apply(letter, at_end) {
            return None;
        }
    }
    Some((field, character))
}

fn leading_number(text: &[u8]) -> Option<(usize, &[u8])> {
    let digits = text.iter().take_while(|b| b.is_ascii_digit()).count();
    if digits == 0 {
        return None;
    }
    let value = text[..digits].iter().fold(0usize, |acc, &d| {
        acc.saturating_mul(10).saturating_add(usize::from(d - b'0'))
    });
    Some((value, &text[digits..]))
}

/// Blanks for field splitting and `b`.
pub fn is_blank(byte: u8) -> bool {
    byte == b' ' || byte == b'\t'
}

/// Offset of the start of field `field` (1-based), or the line length.
fn field_start(line: &[u8], field: usize, separator: Option<u8>) -> usize {
    let mut position = 0;
    for _ in 1..field {
        if position >= line.len() {
            return line.len();
        }
        match separator {
            Some(separator) => match line[position..].iter().position(|&b| b == separator) {
                Some(at) => position += at + 1,
                None => return line.len(),
            },
            None => position = blank_field_end(line, position),
        }
    }
    position
}

/// End of the blank-separated field starting at `position` (its leading
/// blanks belong to it).
fn blank_field_end(line: &[u8], mut position: usize) -> usize {
    while position < line.len() && is_blank(line[position]) {
        position += 1;
    }
    while position < line.len() && !is_blank(line[position]) {
        position += 1;
    }
    position
}

fn skip_blanks(line: &[u8], mut position: usize) -> usize {
    while position < line.len() && is_blank(line[position]) {
        position += 1;
    }
    position
}

/// The bytes of `line` that `key` selects.
pub fn extract<'a>(line: &'a [u8], key: &Key, separator: Option<u8>) -> &'a [u8] {
    let mut start = field_start(line, key.start_field, separator);
    if key.flags.skip_start_blanks {
        start = skip_blanks(line, start);
    }
    start = start.saturating_add(key.start_char - 1).min(line.len());
    let end = match key.end_field {
        None => line.len(),
        Some(field) => {
            let field_begin = field_start(line, field, separator);
            if key.end_char == 0 {
                match separator {
                    Some(separator) => line[field_begin..]
                        .iter()
                        .position(|&b| b == separator)
                        .map_or(line.len(), |at| field_begin + at),
                    None => blank_field_end(line, field_begin),
                }
            } else {
                let mut position = field_begin;
                if key.flags.skip_end_blanks {
                    position = skip_blanks(line, position);
                }
                position.saturating_add(key.end_char).min(line.len())
            }
        }
    };
    if end <= start { &[] } else { &line[start..end] }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_syntax_takes_fields_characters_and_letters() {
        let key = parse_key(b"2.3nr,4.1b").unwrap();
        assert_eq!((key.start_field, key.start_char), (2, 3));
        assert_eq!((key.end_field, key.end_char), (Some(4), 1));
        assert!(key.flags.numeric && key.flags.reverse && key.flags.skip_end_blanks);
        assert!(parse_key(b"0").is_err());
        assert!(parse_key(b"1x").is_err());
        assert!(parse_key(b"").is_err());
    }

    #[test]
    fn blank_separated_fields_keep_their_leading_blanks() {
        let key = parse_key(b"2,2").unwrap();
        assert_eq!(extract(b"a  b c", &key, None), b"  b");
        let key = parse_key(b"2").unwrap();
        assert_eq!(extract(b"a b c", &key, None), b" b c");
    }

    #[test]
    fn separator_fields_and_character_positions() {
        let key = parse_key(b"3,3").unwrap();
        assert_eq!(extract(b"a:b:c:d", &key, Some(b':')), b"c");
        let key = parse_key(b"1,1.1").unwrap();
        assert_eq!(extract(b"ab.1", &key, Some(b'.')), b"a");
        let key = parse_key(b"5").unwrap();
        assert_eq!(extract(b"a:b", &key, Some(b':')), b"");
    }
}
