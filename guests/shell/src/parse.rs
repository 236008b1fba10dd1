//! Turning tokens into a script: pipelines joined by `;`, `&&` and `||`,
//! each a list of simple commands with their redirections.

use crate::lex::{LexError, Token, Word};

/// Where a redirection sends or takes bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectKind {
    /// `< path`
    In,
    /// `> path`
    Out,
    /// `>> path`
    Append,
}

/// One redirection of a simple command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    pub kind: RedirectKind,
    pub target: Word,
}

/// A simple command: words (leading `NAME=value` ones are assignments) and
/// redirections.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Simple {
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
}

/// How a pipeline is joined to the one before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Join {
    /// `;` (or the first pipeline): always runs.
    Always,
    /// `&&`: runs if the previous exit status was 0.
    IfOk,
    /// `||`: runs if the previous exit status was not 0.
    IfFailed,
}

/// A parsed command line.
pub type Script = Vec<(Join, Vec<Simple>)>;

/// Words that open compound commands, which the subset does not have.
const RESERVED: [&str; 14] = [
    "if", "then", "else", "elif", "fi", "for", "while", "until", "do", "done", "case", "esac",
    "function", "select",
];

fn syntax(msg: &str) -> LexError {
    LexError::Syntax(msg.to_string())
}

/// Parses tokens into a script.
pub fn parse(tokens: Vec<Token>) -> Result<Script, LexError> {
    let mut script: Script = Vec::new();
    let mut join = Join::Always;
    let mut pipeline: Vec<Simple> = Vec::new();
    let mut simple = Simple::default();
    let mut tokens = tokens.into_iter().peekable();
    let mut pending_join = false;
    while let Some(token) = tokens.next() {
        match token {
            Token::Word(w) => {
                if simple.words.is_empty()
                    && simple.redirects.is_empty()
                    && w.assignment().is_none()
                {
                    let text = w.expand(&Default::default());
                    if w.assignable
                        && (RESERVED.contains(&text.as_str())
                            || text == "{"
                            || text == "}"
                            || text == "!"
                            || text == "[[")
                    {
                        return Err(LexError::Unsupported(format!("compound command `{text}`")));
                    }
                }
                simple.words.push(w);
            }
            Token::In | Token::Out | Token::Append => {
                let kind = match token {
                    Token::In => RedirectKind::In,
                    Token::Out => RedirectKind::Out,
                    _ => RedirectKind::Append,
                };
                match tokens.next() {
                    Some(Token::Word(target)) => simple.redirects.push(Redirect { kind, target }),
                    _ => return Err(syntax("a redirection needs a file name")),
                }
            }
            Token::Ignored => {}
            Token::Pipe => {
                if simple.words.is_empty() && simple.redirects.is_empty() {
                    return Err(syntax("`|` needs a command on each side"));
                }
                pipeline.push(std::mem::take(&mut simple));
            }
            Token::Semi | Token::And | Token::Or => {
                let empty = simple.words.is_empty() && simple.redirects.is_empty();
                if empty && !pipeline.is_empty() {
                    return Err(syntax("`|` needs a command on each side"));
                }
                if empty {
                    if token == Token::Semi && !pending_join {
                        continue;
                    }
                    return Err(syntax("`&&`, `||` and `;` need a command before them"));
                }
                pipeline.push(std::mem::take(&mut simple));
                script.push((join, std::mem::take(&mut pipeline)));
                join = match token {
                    Token::And => Join::IfOk,
                    Token::Or => Join::IfFailed,
                    _ => Join::Always,
                };
                pending_join = token != Token::Semi;
            }
        }
    }
    if !simple.words.is_empty() || !simple.redirects.is_empty() {
        pipeline.push(simple);
    } else if !pipeline.is_empty() {
        return Err(syntax("`|` needs a command on each side"));
    }
    if pipeline.is_empty() {
        if pending_join {
            return Err(syntax("`&&` or `||` needs a command after it"));
        }
    } else {
        script.push((join, pipeline));
    }
    Ok(script)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lex::lex;

    fn shape(line: &str) -> Result<Vec<(Join, usize)>, LexError> {
        Ok(parse(lex(line)?)?
            .into_iter()
            .map(|(j, p)| (j, p.len()))
            .collect())
    }

    #[test]
    fn pipelines_and_connectors_nest_as_in_sh() {
        assert_eq!(
            shape("a | b | c && d || e ; f").unwrap(),
            vec![
                (Join::Always, 3),
                (Join::IfOk, 1),
                (Join::IfFailed, 1),
                (Join::Always, 1)
            ]
        );
        assert_eq!(shape("a;").unwrap(), vec![(Join::Always, 1)]);
    }

    #[test]
    fn operators_inside_quotes_are_data() {
        let s = parse(lex("jq '.a | .b' | grep \"x;y && z\"").unwrap()).unwrap();
        assert_eq!(s.len(), 1);
        assert_eq!(s[0].1.len(), 2);
        let env = Default::default();
        assert_eq!(s[0].1[0].words[1].expand(&env), ".a | .b");
        assert_eq!(s[0].1[1].words[1].expand(&env), "x;y && z");
    }

    #[test]
    fn dangling_operators_are_syntax_errors() {
        for line in ["| a", "a |", "a &&", "&& a", "a | | b", "a >"] {
            assert!(matches!(shape(line), Err(LexError::Syntax(_))), "{line}");
        }
    }

    #[test]
    fn syntax_outside_the_subset_is_named() {
        let cases = [
            ("echo $(date)", "command substitution"),
            ("echo `date`", "command substitution"),
            ("(cd x)", "subshell"),
            ("sleep 1 &", "backgrounding"),
            ("cat <<EOF", "here-document"),
            ("if true; then echo; fi", "compound command `if`"),
            ("echo $?", "special parameter"),
            ("cat 3> f", "file descriptors"),
            ("cat 2> f", "stderr redirection"),
        ];
        for (line, name) in cases {
            match shape(line) {
                Err(LexError::Unsupported(what)) => assert!(what.contains(name), "{line}: {what}"),
                other => panic!("{line}: {other:?}"),
            }
        }
    }

    #[test]
    fn stderr_no_ops_are_accepted() {
        let s = parse(lex("grep x 2>/dev/null | wc -l 2>&1").unwrap()).unwrap();
        assert_eq!(s[0].1.len(), 2);
        assert_eq!(s[0].1[0].words.len(), 2);
    }
}
