//! A small basic-regular-expression matcher for `nl -b pREGEX`: literals,
//! `.`, `*`, bracket expressions (`[a-z]`, `[^0-9]`), `^`, `$` and `\`
//! escapes. Matching is by backtracking, which suits short line patterns.

/// What a single position of the pattern accepts.
#[derive(Debug)]
enum Atom {
    Byte(u8),
    Any,
    Set(Box<[bool; 256]>),
}

impl Atom {
    fn accepts(&self, byte: u8) -> bool {
        match self {
            Atom::Byte(expected) => *expected == byte,
            Atom::Any => true,
            Atom::Set(members) => members[usize::from(byte)],
        }
    }
}

#[derive(Debug)]
struct Piece {
    atom: Atom,
    repeated: bool,
}

/// A compiled pattern.
#[derive(Debug)]
pub struct Pattern {
    anchored_start: bool,
    anchored_end: bool,
    pieces: Vec<Piece>,
}

/// Compiles a basic regular expression.
pub fn compile(source: &[u8]) -> Pattern {
    let (anchored_start, body) = match source.strip_prefix(b"^") {
        Some(rest) => (true, rest),
        None => (false, source),
    };
    let (anchored_end, body) = match body.strip_suffix(b"$") {
        Some(rest) if !rest.ends_with(b"\\") => (true, rest),
        _ => (false, body),
    };
    let mut pieces: Vec<Piece> = Vec::new();
    let mut index = 0;
    while index < body.len() {
        let byte = body[index];
        index += 1;
        let atom = match byte {
            b'*' if !pieces.is_empty() => {
                if let Some(last) = pieces.last_mut() {
                    last.repeated = true;
                }
                continue;
            }
            b'.' => Atom::Any,
            b'\\' if index < body.len() => {
                index += 1;
                Atom::Byte(body[index - 1])
            }
            b'[' => match parse_set(&body[index..]) {
                Some((members, used)) => {
                    index += used;
                    Atom::Set(members)
                }
                None => Atom::Byte(b'['),
            },
            _ => Atom::Byte(byte),
        };
        pieces.push(Piece {
            atom,
            repeated: false,
        });
    }
    Pattern {
        anchored_start,
        anchored_end,
        pieces,
    }
}

/// Parses the inside of a bracket expression (after `[`); returns the
/// member table and the bytes used including the closing `]`.
fn parse_set(text: &[u8]) -> Option<(Box<[bool; 256]>, usize)> {
    let (negated, start) = if text.first() == Some(&b'^') {
        (true, 1)
    } else {
        (false, 0)
    };
    let mut members = Box::new([false; 256]);
    let mut index = start;
    loop {
        let byte = *text.get(index)?;
        if byte == b']' && index > start {
            break;
        }
        let is_range = text.get(index + 1) == Some(&b'-')
            && text.get(index + 2).is_some_and(|&end| end != b']');
        if is_range {
            let end = text[index + 2];
            for member in byte..=end {
                members[usize::from(member)] = true;
            }
            index += 3;
        } else {
            members[usize::from(byte)] = true;
            index += 1;
        }
    }
    if negated {
        for member in members.iter_mut() {
            *member = !*member;
        }
    }
    Some((members, index + 1))
}

impl Pattern {
    /// True when the pattern matches somewhere in `text`.
    pub fn is_match(&self, text: &[u8]) -> bool {
        if self.anchored_start {
            return self.match_here(&self.pieces, text, 0);
        }
        (0..=text.len()).any(|start| self.match_here(&self.pieces, text, start))
    }

    fn match_here(&self, pieces: &[Piece], text: &[u8], start: usize) -> bool {
        let mut position = start;
        let mut remaining = pieces;
        while let Some((piece, rest)) = remaining.split_first() {
            if piece.repeated {
                let run = text[position..]
                    .iter()
                    .take_while(|&&byte| piece.atom.accepts(byte))
                    .count();
                return (0..=run)
                    .rev()
                    .any(|taken| self.match_here(rest, text, position + taken));
            }
            match text.get(position) {
                Some(&byte) if piece.atom.accepts(byte) => position += 1,
                _ => return false,
            }
            remaining = rest;
        }
        !self.anchored_end || position == text.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_dots_stars_sets_and_anchors_match_like_grep() {
        assert!(compile(b"oing").is_match(b"sproingy"));
        assert!(!compile(b"oing").is_match(b"one"));
        assert!(compile(b"^a.c$").is_match(b"abc"));
        assert!(!compile(b"^a.c$").is_match(b"abcd"));
        assert!(compile(b"ab*c").is_match(b"xacx"));
        assert!(compile(b"[0-9][0-9]*").is_match(b"id 42"));
        assert!(!compile(b"^[^a-z]").is_match(b"abc"));
        assert!(compile(b"a\\.b").is_match(b"a.b"));
        assert!(!compile(b"a\\.b").is_match(b"axb"));
        assert!(compile(b"").is_match(b""));
    }
}
