//! Splitting a command line into words and operators, quote-aware.
//!
//! A `|`, `;` or `&&` inside quotes is data. Single quotes keep everything;
//! double quotes expand `$NAME` and `${NAME}` and honour `\"`, `\\`, `\$`
//! and `` \` ``; outside quotes a backslash keeps the next character.
//! Words keep their `$NAME` references as parts, expanded when their
//! command runs (so `A=1; echo $A` sees the assignment); an expanded value
//! is never split or re-read, it is data inside one word. Syntax outside
//! the subset is refused by name.

use std::collections::HashMap;

/// A piece of a word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Text, quotes removed.
    Lit(String),
    /// `$NAME` (`braced` for `${NAME}`); unknown names stay literal.
    Var { name: String, braced: bool },
}

/// A word: its parts, and whether it may be an assignment (`NAME=` written
/// plainly, without quotes or expansion before the `=`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub parts: Vec<Part>,
    pub assignable: bool,
}

impl Word {
    /// The word with variables expanded from `vars`.
    pub fn expand(&self, vars: &HashMap<String, String>) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Lit(t) => out.push_str(t),
                Part::Var { name, braced } => match vars.get(name) {
                    Some(v) => out.push_str(v),
                    None if *braced => out.push_str(&format!("${{{name}}}")),
                    None => {
                        out.push('$');
                        out.push_str(name);
                    }
                },
            }
        }
        out
    }

    /// `(name, value parts)` when the word is an assignment `NAME=value`.
    pub fn assignment(&self) -> Option<(String, Word)> {
        if !self.assignable {
            return None;
        }
        let Some(Part::Lit(first)) = self.parts.first() else {
            return None;
        };
        let (name, rest) = first.split_once('=')?;
        let valid =
            name.chars().next().is_some_and(is_name_start) && name.chars().all(is_name_char);
        if !valid {
            return None;
        }
        let mut parts = vec![Part::Lit(rest.to_string())];
        parts.extend(self.parts[1..].iter().cloned());
        Some((
            name.to_string(),
            Word {
                parts,
                assignable: false,
            },
        ))
    }
}

/// One token of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// A word.
    Word(Word),
    /// `|`
    Pipe,
    /// `&&`
    And,
    /// `||`
    Or,
    /// `;` or a newline
    Semi,
    /// `< path`
    In,
    /// `> path`
    Out,
    /// `>> path`
    Append,
    /// `2>/dev/null` or `2>&1`: accepted and ignored.
    Ignored,
}

/// Why a line does not lex.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LexError {
    /// Malformed: an unterminated quote, a dangling escape.
    Syntax(String),
    /// Outside the subset, named.
    Unsupported(String),
}

fn unsupported(what: &str) -> LexError {
    LexError::Unsupported(what.to_string())
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

struct Lexer<'a> {
    chars: std::iter::Peekable<std::str::Chars<'a>>,
    tokens: Vec<Token>,
}

/// Accumulates the parts of one word.
#[derive(Default)]
struct Builder {
    parts: Vec<Part>,
    text: String,
    started: bool,
}

impl Builder {
    fn push(&mut self, c: char) {
        self.text.push(c);
        self.started = true;
    }

    fn var(&mut self, name: String, braced: bool) {
        if !self.text.is_empty() {
            self.parts.push(Part::Lit(std::mem::take(&mut self.text)));
        }
        self.parts.push(Part::Var { name, braced });
        self.started = true;
    }

    fn has_eq(&self) -> bool {
        self.text.contains('=')
            || self
                .parts
                .iter()
                .any(|p| matches!(p, Part::Lit(t) if t.contains('=')))
    }

    fn finish(mut self, assignable: bool) -> Word {
        if !self.text.is_empty() || self.parts.is_empty() {
            self.parts.push(Part::Lit(self.text));
        }
        Word {
            parts: self.parts,
            assignable,
        }
    }
}

impl Lexer<'_> {
    /// Reads what follows a `$` already consumed into `word`.
    fn dollar(&mut self, word: &mut Builder) -> Result<(), LexError> {
        match self.chars.peek().copied() {
            Some('(') => Err(unsupported("command substitution $(...)")),
            Some('{') => {
                self.chars.next();
                let mut name = String::new();
                loop {
                    match self.chars.next() {
                        Some('}') => break,
                        Some(c) if is_name_char(c) => name.push(c),
                        Some(_) => {
                            return Err(unsupported("parameter expansion ${...} beyond ${NAME}"));
                        }
                        None => return Err(LexError::Syntax("unterminated ${".into())),
                    }
                }
                if name.is_empty() || !is_name_start(name.chars().next().unwrap_or('0')) {
                    return Err(LexError::Syntax(format!("bad substitution ${{{name}}}")));
                }
                word.var(name, true);
                Ok(())
            }
            Some(c) if is_name_start(c) => {
                let mut name = String::new();
                while let Some(&c) = self.chars.peek() {
                    if !is_name_char(c) {
                        break;
                    }
                    name.push(c);
                    self.chars.next();
                }
                word.var(name, false);
                Ok(())
            }
            Some(c @ ('?' | '$' | '!' | '#' | '@' | '*' | '-' | '0'..='9')) => {
                Err(LexError::Unsupported(format!("special parameter ${c}")))
            }
            _ => {
                word.push('$');
                Ok(())
            }
        }
    }

    fn double_quoted(&mut self, word: &mut Builder) -> Result<(), LexError> {
        word.started = true;
        loop {
            match self.chars.next() {
                Some('"') => return Ok(()),
                Some('\\') => match self.chars.next() {
                    Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                    Some('\n') => {}
                    Some(c) => {
                        word.push('\\');
                        word.push(c);
                    }
                    None => return Err(LexError::Syntax("unterminated double quote".into())),
                },
                Some('$') => self.dollar(word)?,
                Some('`') => return Err(unsupported("command substitution `...`")),
                Some(c) => word.push(c),
                None => return Err(LexError::Syntax("unterminated double quote".into())),
            }
        }
    }

    /// Reads one word starting at the current character.
    fn word(&mut self) -> Result<(), LexError> {
        let mut text = Builder::default();
        let mut quoted_before_eq = false;
        while let Some(&c) = self.chars.peek() {
            match c {
                ' ' | '\t' | '\n' | '|' | '&' | ';' | '<' | '>' | '(' | ')' => break,
                '\'' => {
                    self.chars.next();
                    text.started = true;
                    if !text.has_eq() {
                        quoted_before_eq = true;
                    }
                    loop {
                        match self.chars.next() {
                            Some('\'') => break,
                            Some(c) => text.push(c),
                            None => {
                                return Err(LexError::Syntax("unterminated single quote".into()));
                            }
                        }
                    }
                }
                '"' => {
                    self.chars.next();
                    if !text.has_eq() {
                        quoted_before_eq = true;
                    }
                    self.double_quoted(&mut text)?;
                }
                '\\' => {
                    self.chars.next();
                    match self.chars.next() {
                        Some('\n') => {}
                        Some(c) => {
                            if !text.has_eq() {
                                quoted_before_eq = true;
                            }
                            text.push(c);
                        }
                        None => return Err(LexError::Syntax("dangling backslash".into())),
                    }
                }
                '$' => {
                    self.chars.next();
                    if !text.has_eq() {
                        quoted_before_eq = true;
                    }
                    self.dollar(&mut text)?;
                }
                '`' => return Err(unsupported("command substitution `...`")),
                c => {
                    text.push(c);
                    self.chars.next();
                }
            }
        }
        if text.started {
            self.tokens
                .push(Token::Word(text.finish(!quoted_before_eq)));
        }
        Ok(())
    }

    /// Reads a `2>` redirection; only `2>/dev/null` and `2>&1` are in the
    /// subset.
    fn stderr_redirect(&mut self) -> Result<(), LexError> {
        self.chars.next(); // '2'
        self.chars.next(); // '>'
        if self.chars.peek() == Some(&'&') {
            self.chars.next();
            return match self.chars.next() {
                Some('1') => {
                    self.tokens.push(Token::Ignored);
                    Ok(())
                }
                _ => Err(unsupported("file descriptor duplication other than 2>&1")),
            };
        }
        while self.chars.peek() == Some(&' ') {
            self.chars.next();
        }
        let target: String = std::iter::from_fn(|| {
            self.chars
                .next_if(|c| !matches!(c, ' ' | '\t' | '\n' | '|' | '&' | ';' | '<' | '>'))
        })
        .collect();
        if target == "/dev/null" {
            self.tokens.push(Token::Ignored);
            Ok(())
        } else {
            Err(unsupported(
                "stderr redirection other than 2>/dev/null and 2>&1",
            ))
        }
    }

    fn run(mut self) -> Result<Vec<Token>, LexError> {
        let mut at_word_start = true;
        while let Some(&c) = self.chars.peek() {
            match c {
                ' ' | '\t' => {
                    self.chars.next();
                    at_word_start = true;
                    continue;
                }
                '\n' | ';' => {
                    self.chars.next();
                    if self.chars.peek() == Some(&';') {
                        return Err(unsupported(";; (case syntax)"));
                    }
                    self.tokens.push(Token::Semi);
                }
                '#' if at_word_start => while self.chars.next_if(|c| *c != '\n').is_some() {},
                '|' => {
                    self.chars.next();
                    if self.chars.next_if_eq(&'|').is_some() {
                        self.tokens.push(Token::Or);
                    } else if self.chars.peek() == Some(&'&') {
                        return Err(unsupported("|& (stderr pipe)"));
                    } else {
                        self.tokens.push(Token::Pipe);
                    }
                }
                '&' => {
                    self.chars.next();
                    if self.chars.next_if_eq(&'&').is_some() {
                        self.tokens.push(Token::And);
                    } else if self.chars.peek() == Some(&'>') {
                        return Err(unsupported("&> redirection"));
                    } else {
                        return Err(unsupported("backgrounding with &"));
                    }
                }
                '(' | ')' => return Err(unsupported("subshell ( ... )")),
                '<' => {
                    self.chars.next();
                    match self.chars.peek() {
                        Some('<') => return Err(unsupported("here-document <<")),
                        Some('(') => return Err(unsupported("process substitution <(...)")),
                        Some('&') => return Err(unsupported("file descriptor duplication <&")),
                        _ => self.tokens.push(Token::In),
                    }
                }
                '>' => {
                    self.chars.next();
                    if self.chars.next_if_eq(&'>').is_some() {
                        self.tokens.push(Token::Append);
                    } else if matches!(self.chars.peek(), Some('&' | '(' | '|')) {
                        return Err(unsupported("redirection >&, >( or >|"));
                    } else {
                        self.tokens.push(Token::Out);
                    }
                }
                '2' if at_word_start && self.is_stderr_redirect() => self.stderr_redirect()?,
                d if at_word_start && d.is_ascii_digit() && self.is_fd_redirect() => {
                    return Err(unsupported("redirection of file descriptors other than 2"));
                }
                _ => self.word()?,
            }
            at_word_start = true;
        }
        Ok(self.tokens)
    }

    /// Whether the input continues `2>` here.
    fn is_stderr_redirect(&self) -> bool {
        let mut look = self.chars.clone();
        look.next();
        look.peek() == Some(&'>')
    }

    /// Whether the input continues `N>` or `N<` here.
    fn is_fd_redirect(&self) -> bool {
        let mut look = self.chars.clone();
        while look.next_if(char::is_ascii_digit).is_some() {}
        matches!(look.peek(), Some('>' | '<'))
    }
}

/// Splits `line` into tokens.
pub fn lex(line: &str) -> Result<Vec<Token>, LexError> {
    Lexer {
        chars: line.chars().peekable(),
        tokens: Vec::new(),
    }
    .run()
}
