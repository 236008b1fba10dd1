//! Translates a POSIX bracket expression (`[...]`) into a `regex` crate
//! character class. In POSIX, backslash is literal inside brackets and `]`
//! first is literal; the `regex` crate's own class operators (`[`, `&&`,
//! `--`, `~~`) are escaped so they keep their POSIX meaning. Named classes
//! cover Unicode, as in a UTF-8 locale.

/// POSIX class names and the `regex` class items they stand for.
const CLASSES: [(&str, &str); 12] = [
    ("alnum", "\\p{Alphabetic}\\p{Nd}"),
    ("alpha", "\\p{Alphabetic}"),
    ("blank", "\\t\\p{Zs}"),
    ("cntrl", "\\p{Cc}"),
    ("digit", "0-9"),
    ("graph", "[\\P{C}&&\\S]"),
    ("lower", "\\p{Lowercase}"),
    ("print", "\\P{C}"),
    ("punct", "\\p{P}\\p{S}"),
    ("space", "\\s"),
    ("upper", "\\p{Uppercase}"),
    ("xdigit", "0-9A-Fa-f"),
];

fn escaped(character: char) -> String {
    if character.is_alphanumeric() {
        character.to_string()
    } else {
        regex::escape(character.encode_utf8(&mut [0; 4]))
    }
}

/// Reads a `[:name:]`, `[=c=]` or `[.c.]` item starting at `chars[0] == '['`.
/// Returns the translated item, whether it is a class (cannot start a
/// range), and how many chars it used.
fn special_item(chars: &[char]) -> Result<Option<(String, bool, usize)>, String> {
    let Some(&kind) = chars.get(1).filter(|kind| matches!(kind, ':' | '=' | '.')) else {
        return Ok(None);
    };
    let body_start = 2;
    let end = (body_start..chars.len().saturating_sub(1))
        .find(|&index| chars[index] == kind && chars[index + 1] == ']');
    let Some(end) = end else {
        return Ok(None);
    };
    let body: String = chars[body_start..end].iter().collect();
    let used = end + 2;
    if kind == ':' {
        let Some((_, items)) = CLASSES.iter().find(|(name, _)| *name == body) else {
            return Err(format!("invalid character class '{body}'"));
        };
        return Ok(Some(((*items).to_owned(), true, used)));
    }
    let mut letters = body.chars();
    match (letters.next(), letters.next()) {
        (Some(single), None) => Ok(Some((escaped(single), false, used))),
        _ => Err(format!("invalid collation element '{body}'")),
    }
}

/// Translates the bracket expression whose text starts right after `[`.
/// Returns the class and how many chars were consumed (through `]`).
pub fn translate(chars: &[char]) -> Result<(String, usize), String> {
    let mut position = 0;
    let mut class = String::from("[");
    if chars.first() == Some(&'^') {
        class.push('^');
        position += 1;
    }
    let first_item = position;
    let mut items = 0;
    loop {
        let Some(&current) = chars.get(position) else {
            return Err("unmatched [, [^, [:, [., or [=".into());
        };
        if current == ']' && position > first_item {
            position += 1;
            break;
        }
        let (item, is_class, used) = match special_item(&chars[position..])? {
            Some(special) => special,
            None => (escaped(current), false, 1),
        };
        position += used;
        let starts_range = !is_class
            && chars.get(position) == Some(&'-')
            && chars.get(position + 1).is_some_and(|next| *next != ']');
        if starts_range {
            position += 1;
            let (end, end_is_class, end_used) = match special_item(&chars[position..])? {
                Some(special) => special,
                None => (escaped(chars[position]), false, 1),
            };
            if end_is_class {
                return Err("invalid range end".into());
            }
            position += end_used;
            class.push_str(&item);
            class.push('-');
            class.push_str(&end);
        } else {
            class.push_str(&item);
        }
        items += 1;
    }
    debug_assert!(items > 0, "a bracket expression holds at least one item");
    class.push(']');
    Ok((class, position))
}
