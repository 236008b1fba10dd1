//! Translates POSIX basic (BRE) and extended (ERE) regular expressions into
//! the `regex` crate's syntax, splitting each pattern into its top-level
//! alternatives so the matcher can prefer the longest of them.
//!
//! BRE: `\( \) \{ \} \| \+ \?` are operators and their bare forms literal;
//! `*` is literal at the start of an expression; `^`/`$` anchor only at the
//! start/end of an expression. ERE: the bare forms are operators, `{` that
//! does not start a valid interval is literal, and `^`/`$` always anchor.

use crate::bracket;
use crate::cli::Syntax;

/// Translates one pattern; returns its top-level alternatives.
pub fn translate(pattern: &str, syntax: Syntax) -> Result<Vec<String>, String> {
    match syntax {
        Syntax::Fixed => Ok(vec![regex::escape(pattern)]),
        Syntax::Basic => Translator::new(pattern, false).run(),
        Syntax::Extended => Translator::new(pattern, true).run(),
    }
}

/// What a token after `\` (BRE) or a bare operator (ERE) means.
enum Token {
    Literal(char),
    Open,
    Close,
    Alternate,
    /// `*`, `+` or `?`.
    Repeat(char),
    IntervalStart,
    Start,
    End,
    AnyChar,
    Bracket,
    /// An escape passed through unchanged, such as `\w` or `\b`.
    Verbatim(&'static str),
}

struct Translator<'p> {
    chars: Vec<char>,
    position: usize,
    extended: bool,
    pattern: &'p str,
    out: String,
    alternatives: Vec<String>,
    /// Output offsets where the enclosing open groups start.
    groups: Vec<usize>,
    /// Output offset of the last complete atom, which a repetition applies to.
    atom_start: Option<usize>,
    last_was_repeat: bool,
}

impl<'p> Translator<'p> {
    fn new(pattern: &'p str, extended: bool) -> Self {
        Self {
            chars: pattern.chars().collect(),
            position: 0,
            extended,
            pattern,
            out: String::new(),
            alternatives: Vec::new(),
            groups: Vec::new(),
            atom_start: None,
            last_was_repeat: false,
        }
    }

    fn peek(&self, offset: usize) -> Option<char> {
        self.chars.get(self.position + offset).copied()
    }

    fn next_token(&mut self) -> Result<Token, String> {
        let current = self.chars[self.position];
        self.position += 1;
        if current == '\\' {
            let escaped = self.peek(0).ok_or("trailing backslash (\\)")?;
            self.position += 1;
            return self.escape(escaped);
        }
        Ok(match current {
            '.' => Token::AnyChar,
            '[' => Token::Bracket,
            '*' => Token::Repeat('*'),
            '^' => Token::Start,
            '$' => Token::End,
            '(' if self.extended => Token::Open,
            ')' if self.extended && !self.groups.is_empty() => Token::Close,
            '|' if self.extended => Token::Alternate,
            '+' | '?' if self.extended => Token::Repeat(current),
            '{' if self.extended => Token::IntervalStart,
            other => Token::Literal(other),
        })
    }

    fn escape(&self, escaped: char) -> Result<Token, String> {
        Ok(match escaped {
            '(' if !self.extended => Token::Open,
            ')' if !self.extended => Token::Close,
            '|' if !self.extended => Token::Alternate,
            '+' | '?' if !self.extended => Token::Repeat(escaped),
            '{' if !self.extended => Token::IntervalStart,
            'w' => Token::Verbatim("\\w"),
            'W' => Token::Verbatim("\\W"),
            's' => Token::Verbatim("\\s"),
            'S' => Token::Verbatim("\\S"),
            'b' => Token::Verbatim("\\b"),
            'B' => Token::Verbatim("\\B"),
            '<' => Token::Verbatim("\\b{start}"),
            '>' => Token::Verbatim("\\b{end}"),
            '`' => Token::Verbatim("\\A"),
            '\'' => Token::Verbatim("\\z"),
            '1'..='9' => return Err("back-references are not supported".into()),
            other => Token::Literal(other),
        })
    }

    fn at_expression_start(&self) -> bool {
        self.atom_start.is_none() && !self.last_was_repeat
    }

    fn begin_atom(&mut self) {
        self.atom_start = Some(self.out.len());
        self.last_was_repeat = false;
    }

    fn push_literal(&mut self, literal: char) {
        self.begin_atom();
        self.out
            .push_str(&regex::escape(literal.encode_utf8(&mut [0; 4])));
    }

    /// BRE `$` anchors only at the end of an expression.
    fn dollar_is_anchor(&self) -> bool {
        if self.extended {
            return true;
        }
        matches!(
            (self.peek(0), self.peek(1)),
            (None, _) | (Some('\\'), Some(')' | '|'))
        )
    }

    fn run(mut self) -> Result<Vec<String>, String> {
        while self.position < self.chars.len() {
            let token = self.next_token()?;
            self.apply(token)?;
        }
        if !self.groups.is_empty() {
            return Err("unmatched ( or \\(".into());
        }
        self.alternatives.push(self.out);
        Ok(self.alternatives)
    }

    fn apply(&mut self, token: Token) -> Result<(), String> {
        match token {
            Token::Literal(literal) => self.push_literal(literal),
            Token::AnyChar => {
                self.begin_atom();
                self.out.push('.');
            }
            Token::Verbatim(text) => {
                self.begin_atom();
                self.out.push_str(text);
            }
            Token::Bracket => {
                self.begin_atom();
                let (class, consumed) = bracket::translate(&self.chars[self.position..])?;
                self.position += consumed;
                self.out.push_str(&class);
            }
            Token::Start if self.extended || self.at_expression_start() => {
                self.out.push('^');
                self.atom_start = None;
                self.last_was_repeat = false;
            }
            Token::Start => self.push_literal('^'),
            Token::End if self.dollar_is_anchor() => {
                self.out.push('$');
                self.atom_start = None;
                self.last_was_repeat = true;
            }
            Token::End => self.push_literal('$'),
            Token::Open => {
                self.groups.push(self.out.len());
                self.out.push('(');
                self.atom_start = None;
                self.last_was_repeat = false;
            }
            Token::Close => {
                let start = self.groups.pop().ok_or("unmatched ) or \\)")?;
                self.out.push(')');
                self.atom_start = Some(start);
                self.last_was_repeat = false;
            }
            Token::Alternate if self.groups.is_empty() => {
                self.alternatives.push(std::mem::take(&mut self.out));
                self.atom_start = None;
                self.last_was_repeat = false;
            }
            Token::Alternate => {
                self.out.push('|');
                self.atom_start = None;
                self.last_was_repeat = false;
            }
            Token::Repeat(operator) => self.repeat(operator.to_string(), operator)?,
            Token::IntervalStart if self.extended && self.atom_start.is_none() => {
                self.push_literal('{')
            }
            Token::IntervalStart => match self.interval()? {
                Some(interval) => self.repeat(interval, '{')?,
                None => self.push_literal('{'),
            },
        }
        Ok(())
    }

    /// Applies a repetition to the last atom; with no atom it is literal.
    fn repeat(&mut self, operator: String, literal: char) -> Result<(), String> {
        let Some(start) = self.atom_start else {
            if literal == '{' {
                return Err("invalid preceding regular expression".into());
            }
            self.push_literal(literal);
            return Ok(());
        };
        if self.last_was_repeat {
            self.out.insert_str(start, "(?:");
            self.out.push(')');
        }
        self.out.push_str(&operator);
        self.last_was_repeat = true;
        Ok(())
    }

    /// Parses an interval body after `{` / `\{`. Returns `None` (ERE only)
    /// when the text is not an interval, so `{` is taken literally.
    fn interval(&mut self) -> Result<Option<String>, String> {
        let rest: String = self.chars[self.position..].iter().collect();
        let closing = if self.extended { "}" } else { "\\}" };
        let parsed = rest.find(closing).and_then(|end| {
            let body = &rest[..end];
            let (low, high) = match body.split_once(',') {
                Some((low, high)) => (low, Some(high)),
                None => (body, None),
            };
            let digits = |text: &str| text.chars().all(|c| c.is_ascii_digit());
            let valid =
                digits(low) && high.is_none_or(digits) && !(low.is_empty() && high.is_none());
            valid.then(|| (end, low.to_owned(), high.map(str::to_owned)))
        });
        let Some((end, low, high)) = parsed else {
            if self.extended {
                return Ok(None);
            }
            return Err(format!("unmatched \\{{ in {:?}", self.pattern));
        };
        self.position += rest[..end + closing.len()].chars().count();
        let low = if low.is_empty() { "0".to_owned() } else { low };
        let bound = |text: &str| text.parse::<u32>().ok();
        let max = high.as_deref().and_then(bound);
        if bound(&low).zip(max).is_some_and(|(min, max)| min > max) {
            return Err("invalid content of \\{\\}".into());
        }
        Ok(Some(match high {
            None => format!("{{{low}}}"),
            Some(high) => format!("{{{low},{high}}}"),
        }))
    }
}
