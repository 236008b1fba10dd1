//! Shell-style wildcard matching of file names for `--include`,
//! `--exclude` and `--exclude-dir`: `*`, `?`, `[...]` (with `!` or `^` to
//! negate) and `\` to quote the next character.

/// Whether `name` matches the wildcard `pattern` as a whole.
pub fn matches(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    matches_from(&pattern, &name)
}

fn matches_from(pattern: &[char], name: &[char]) -> bool {
    match pattern.first() {
        None => name.is_empty(),
        Some('*') => (0..=name.len()).any(|skip| matches_from(&pattern[1..], &name[skip..])),
        Some('?') => !name.is_empty() && matches_from(&pattern[1..], &name[1..]),
        Some('[') => match (
            bracket(&pattern[1..], name.first().copied()),
            name.split_first(),
        ) {
            (Some((true, used)), Some((_, rest))) => matches_from(&pattern[1 + used..], rest),
            (Some(_), _) => false,
            (None, _) => literal('[', &pattern[1..], name),
        },
        Some('\\') if pattern.len() > 1 => literal(pattern[1], &pattern[2..], name),
        Some(&other) => literal(other, &pattern[1..], name),
    }
}

fn literal(expected: char, pattern: &[char], name: &[char]) -> bool {
    name.first() == Some(&expected) && matches_from(pattern, &name[1..])
}

/// Matches `character` against a bracket body (text after `[`). Returns
/// whether it matched and how many pattern chars the body and `]` used, or
/// `None` when the bracket is not closed (so `[` is literal).
fn bracket(body: &[char], character: Option<char>) -> Option<(bool, usize)> {
    let negated = matches!(body.first(), Some('!' | '^'));
    let mut index = usize::from(negated);
    let mut found = false;
    let mut first = true;
    while index < body.len() {
        let current = body[index];
        if current == ']' && !first {
            return Some((found != negated && character.is_some(), index + 1));
        }
        first = false;
        if body.get(index + 1) == Some(&'-') && body.get(index + 2).is_some_and(|end| *end != ']') {
            let end = body[index + 2];
            found |= character.is_some_and(|c| current <= c && c <= end);
            index += 3;
        } else {
            found |= character == Some(current);
            index += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn stars_and_question_marks_match_any_text() {
        assert!(matches("*.rs", "main.rs"));
        assert!(matches("a?c", "abc"));
        assert!(!matches("*.rs", "main.rs.bak"));
    }

    #[test]
    fn brackets_match_sets_and_ranges() {
        assert!(matches("[a-c]x", "bx"));
        assert!(!matches("[!a-c]x", "bx"));
        assert!(matches("[x", "[x"));
    }
}
