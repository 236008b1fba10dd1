//! Terminal column widths of characters, for `wc -L`: zero for combining
//! marks and control characters, two for East Asian wide characters.

/// Ranges of zero-width (combining or format) characters.
const ZERO_WIDTH: &[(u32, u32)] = &[
    (0x0300, 0x036F),
    (0x0483, 0x0489),
    (0x0591, 0x05BD),
    (0x0610, 0x061A),
    (0x064B, 0x065F),
    (0x0E31, 0x0E31),
    (0x0E34, 0x0E3A),
    (0x1AB0, 0x1AFF),
    (0x1DC0, 0x1DFF),
    (0x200B, 0x200F),
    (0x20D0, 0x20FF),
    (0xFE00, 0xFE0F),
    (0xFE20, 0xFE2F),
];

/// Ranges of double-width characters.
const DOUBLE_WIDTH: &[(u32, u32)] = &[
    (0x1100, 0x115F),
    (0x2E80, 0x303E),
    (0x3041, 0x33FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xA000, 0xA4CF),
    (0xAC00, 0xD7A3),
    (0xF900, 0xFAFF),
    (0xFE30, 0xFE4F),
    (0xFF00, 0xFF60),
    (0xFFE0, 0xFFE6),
    (0x1F300, 0x1F64F),
    (0x1F900, 0x1F9FF),
    (0x20000, 0x2FFFD),
    (0x30000, 0x3FFFD),
];

fn in_ranges(code: u32, ranges: &[(u32, u32)]) -> bool {
    ranges
        .iter()
        .any(|&(low, high)| (low..=high).contains(&code))
}

/// Columns a printable character occupies.
pub fn char_width(character: char) -> usize {
    let code = u32::from(character);
    if code < 0x20 || (0x7F..0xA0).contains(&code) || in_ranges(code, ZERO_WIDTH) {
        0
    } else if in_ranges(code, DOUBLE_WIDTH) {
        2
    } else {
        1
    }
}

/// The widest line of `line` (which has no newline), honouring tab stops
/// and carriage returns. Bytes that are not UTF-8 take no columns.
pub fn line_width(line: &[u8]) -> usize {
    let mut widest = 0;
    let mut column = 0;
    for chunk in line.utf8_chunks() {
        for character in chunk.valid().chars() {
            match character {
                '\t' => column += 8 - column % 8,
                '\r' => {
                    widest = widest.max(column);
                    column = 0;
                }
                _ => column += char_width(character),
            }
        }
    }
    widest.max(column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tabs_advance_to_the_next_stop_and_combining_marks_take_no_room() {
        assert_eq!(line_width(b"abc\td"), 9);
        assert_eq!(line_width("w\u{308}".as_bytes()), 1);
        assert_eq!(line_width("世界".as_bytes()), 4);
        assert_eq!(line_width(b"first\rsecond"), 6);
        assert_eq!(line_width(b"\x01"), 0);
    }
}
