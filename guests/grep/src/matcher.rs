//! Decides which lines match and where: compiles the translated patterns
//! into byte regexes and applies `-i`, `-x` and `-w` semantics.
//!
//! One combined regex answers "does this line match" quickly. Finding match
//! positions (for `-o` and `-w`) picks the leftmost match and, among the
//! patterns' alternatives matching there, the longest, as POSIX grep does.

use regex::bytes::{Regex, RegexBuilder};

/// Compiled form of all patterns of one invocation.
pub struct Matcher {
    /// Every alternative in one regex; `None` when there are no patterns.
    combined: Option<Regex>,
    /// Each alternative alone, for choosing the longest match.
    alternatives: Vec<Regex>,
    /// The combined regex anchored at both ends, to try shorter `-w` matches.
    whole: Option<Regex>,
    word: bool,
}

/// Options that shape how patterns compile and match.
pub struct MatchMode {
    pub ignore_case: bool,
    pub whole_line: bool,
    pub word: bool,
    /// Whether match positions will be asked for (`-o`).
    pub need_positions: bool,
}

fn build(source: &str, ignore_case: bool) -> Result<Regex, String> {
    RegexBuilder::new(source)
        .case_insensitive(ignore_case)
        .size_limit(1 << 27)
        .dfa_size_limit(1 << 26)
        .build()
        .map_err(|error| error.to_string())
}

fn join(alternatives: &[String]) -> String {
    let wrapped: Vec<String> = alternatives
        .iter()
        .map(|alt| format!("(?:{alt})"))
        .collect();
    wrapped.join("|")
}

/// Whether the character ending just before `index` is a word constituent.
fn word_before(line: &[u8], index: usize) -> bool {
    let start = index.saturating_sub(4);
    let tail = &line[start..index];
    (0..tail.len())
        .filter_map(|offset| std::str::from_utf8(&tail[offset..]).ok())
        .find_map(|text| text.chars().next_back())
        .is_some_and(is_word_char)
}

/// Whether the character starting at `index` is a word constituent.
fn word_after(line: &[u8], index: usize) -> bool {
    let head = &line[index..line.len().min(index + 4)];
    let valid = match std::str::from_utf8(head) {
        Ok(text) => text,
        Err(error) => std::str::from_utf8(&head[..error.valid_up_to()]).unwrap_or_default(),
    };
    valid.chars().next().is_some_and(is_word_char)
}

fn is_word_char(character: char) -> bool {
    character == '_' || character.is_alphanumeric()
}

/// Whether `index` does not fall inside a UTF-8 sequence.
fn at_char_boundary(line: &[u8], index: usize) -> bool {
    line.get(index).is_none_or(|byte| byte & 0xC0 != 0x80)
}

fn is_word_match(line: &[u8], start: usize, end: usize) -> bool {
    at_char_boundary(line, start)
        && at_char_boundary(line, end)
        && !word_before(line, start)
        && !word_after(line, end)
}

impl Matcher {
    /// Compiles the translated alternatives of all patterns.
    pub fn new(alternatives: &[String], mode: &MatchMode) -> Result<Self, String> {
        let anchor = |body: String| {
            if mode.whole_line {
                format!("^(?:{body})$")
            } else {
                body
            }
        };
        let word = mode.word && !mode.whole_line;
        let combined = if alternatives.is_empty() {
            None
        } else {
            Some(build(&anchor(join(alternatives)), mode.ignore_case)?)
        };
        let separate = (mode.need_positions || word) && alternatives.len() > 1;
        let alternatives = if separate {
            alternatives
                .iter()
                .map(|alt| build(&anchor(alt.clone()), mode.ignore_case))
                .collect::<Result<_, _>>()?
        } else {
            Vec::new()
        };
        let whole = match (&combined, word) {
            (Some(regex), true) => Some(build(
                &format!("^(?:{})$", regex.as_str()),
                mode.ignore_case,
            )?),
            _ => None,
        };
        Ok(Self {
            combined,
            alternatives,
            whole,
            word,
        })
    }

    /// Whether any pattern matches somewhere in `line` (ignoring `-v`).
    pub fn matches(&self, line: &[u8]) -> bool {
        match &self.combined {
            None => false,
            Some(_) if self.word => self.find_at(line, 0).is_some(),
            Some(regex) => regex.is_match(line),
        }
    }

    /// Leftmost match at or after `from`, the longest among alternatives.
    fn leftmost_longest(&self, line: &[u8], from: usize) -> Option<(usize, usize)> {
        let first = self.combined.as_ref()?.find_at(line, from)?;
        let mut best = (first.start(), first.end());
        for regex in &self.alternatives {
            if let Some(found) = regex.find_at(line, best.0)
                && found.start() == best.0
                && found.end() > best.1
            {
                best.1 = found.end();
            }
        }
        Some(best)
    }

    /// The next match at or after `from`, honouring `-w`.
    pub fn find_at(&self, line: &[u8], from: usize) -> Option<(usize, usize)> {
        if !self.word {
            return self.leftmost_longest(line, from);
        }
        let mut position = from;
        while position <= line.len() {
            let (start, end) = self.leftmost_longest(line, position)?;
            if is_word_match(line, start, end) {
                return Some((start, end));
            }
            if let Some(shorter) = self.shorter_word_match(line, start, end) {
                return Some((start, shorter));
            }
            position = start + 1;
        }
        None
    }

    /// A shorter match from `start` whose end is a word boundary, if any.
    fn shorter_word_match(&self, line: &[u8], start: usize, end: usize) -> Option<usize> {
        if word_before(line, start) {
            return None;
        }
        let whole = self.whole.as_ref()?;
        (start..end).rev().find(|&shorter| {
            at_char_boundary(line, shorter)
                && !word_after(line, shorter)
                && whole.is_match(&line[start..shorter])
        })
    }
}
