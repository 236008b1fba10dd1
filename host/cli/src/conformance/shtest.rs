//! The toybox/busybox `testing` format: `testing NAME COMMAND RESULT INFILE
//! STDIN` (toybox's `testcmd` prefixes COMMAND with the applet), quoted
//! for bash, with `echo -e` escapes in RESULT, INFILE and STDIN.

use super::Tally;
use std::path::{Path, PathBuf};
use std::time::Duration;
use workbooks::{CommandError, Engine, LineError, LineOptions, Preopen};

/// One test case.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Case {
    pub(crate) name: String,
    pub(crate) command: String,
    pub(crate) result: String,
    pub(crate) infile: String,
    pub(crate) stdin: String,
}

/// Splits a bash line into words; `None` when it depends on shell
/// variables or substitutions (the case needs the real harness).
pub(crate) fn shell_words(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' | '\n' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                for c in chars.by_ref() {
                    if c == '\'' {
                        break;
                    }
                    word.push(c);
                }
            }
            '"' => {
                in_word = true;
                while let Some(c) = chars.next() {
                    match c {
                        '"' => break,
                        '\\' => match chars.next() {
                            Some(c @ ('"' | '\\' | '$' | '`')) => word.push(c),
                            Some('\n') => {}
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return None,
                        },
                        '$' if chars
                            .peek()
                            .is_some_and(|c| c.is_alphanumeric() || "_{(?@#*".contains(*c)) =>
                        {
                            return None;
                        }
                        '`' => return None,
                        c => word.push(c),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some('\n') => {}
                    Some(c) => word.push(c),
                    None => {}
                }
            }
            '$' | '`' | ';' | '|' | '&' | '<' | '>' | '(' | ')' => return None,
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Some(words)
}

/// Applies `echo -e` escapes.
pub(crate) fn echo_e(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            Some('a') => out.push('\x07'),
            Some('b') => out.push('\x08'),
            Some('e') => out.push('\x1b'),
            Some('f') => out.push('\x0c'),
            Some('v') => out.push('\x0b'),
            Some('c') => break,
            Some('0') => {
                let digits: String = std::iter::from_fn(|| chars.next_if(|c| c.is_digit(8)))
                    .take(3)
                    .collect();
                out.push(char::from(u8::from_str_radix(&digits, 8).unwrap_or(0)));
            }
            Some('x') => {
                let digits: String = std::iter::from_fn(|| chars.next_if(char::is_ascii_hexdigit))
                    .take(2)
                    .collect();
                match u8::from_str_radix(&digits, 16) {
                    Ok(b) => out.push(char::from(b)),
                    Err(_) => out.push_str("\\x"),
                }
            }
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// Files the bash harness creates outside `testing` lines (`> file1`,
/// `touch x`, `mkdir d`): a case naming one depends on that setup.
fn fixtures(text: &str) -> Vec<String> {
    let mut names = Vec::new();
    for line in text.lines().map(str::trim_start) {
        if line.starts_with("testing ") || line.starts_with("testcmd ") || line.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        for (i, w) in words.iter().enumerate() {
            let target = if let Some(rest) = w.strip_prefix(">>").or_else(|| w.strip_prefix('>')) {
                if rest.is_empty() {
                    words.get(i + 1).copied()
                } else {
                    Some(rest)
                }
            } else if i > 0
                && matches!(words[0], "touch" | "mkdir" | "ln" | "cp" | "mv")
                && !w.starts_with('-')
            {
                Some(*w)
            } else {
                None
            };
            if let Some(t) = target {
                let t = t.trim_matches(|c| c == '"' || c == '\'' || c == ';');
                if !t.is_empty() && t != "input" && !t.starts_with('$') && !t.starts_with('/') {
                    names.push(t.to_string());
                }
            }
        }
    }
    names
}

/// Whether a command depends on the bash harness: a harness variable (our
/// shell would keep `$FILES` literal) or a file the harness set up.
fn needs_harness(command: &str, fixtures: &[String]) -> bool {
    let bytes = command.as_bytes();
    let variable = bytes
        .windows(2)
        .any(|w| w[0] == b'$' && (w[1].is_ascii_alphabetic() || w[1] == b'_' || w[1] == b'{'));
    variable
        || command
            .split(|c: char| c.is_whitespace() || c == '<' || c == '>' || c == '|' || c == ';')
            .any(|word| fixtures.iter().any(|f| f == word))
}

/// Parses the cases of a test file for `applet`. Cases whose arguments
/// depend on the bash harness come back as `None`.
pub(crate) fn parse(text: &str, applet: &str) -> Vec<Option<Case>> {
    let fixtures = fixtures(text);
    let mut logical = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        // bash drops a backslash-newline entirely, inside quotes or not.
        if let Some(head) = line.strip_suffix('\\') {
            current.push_str(head);
            continue;
        }
        current.push_str(line);
        logical.push(std::mem::take(&mut current));
    }
    logical
        .into_iter()
        .filter_map(|l| {
            let t = l.trim_start();
            let is_cmd = t.starts_with("testcmd ");
            (is_cmd || t.starts_with("testing ")).then(|| {
                let words = shell_words(t)?;
                if words.len() != 6 {
                    return None;
                }
                let command = if is_cmd {
                    format!("{applet} {}", words[2])
                } else {
                    words[2].clone()
                };
                if needs_harness(&command, &fixtures) {
                    return None;
                }
                Some(Case {
                    name: words[1].clone(),
                    command,
                    result: echo_e(&words[3]),
                    infile: echo_e(&words[4]),
                    stdin: echo_e(&words[5]),
                })
            })
        })
        .collect()
}

fn scratch_dir() -> std::io::Result<PathBuf> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "wbx-conformance-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

/// Runs every case of a test file through the sandboxed shell.
pub(crate) async fn run_file(engine: &Engine, path: &Path) -> Tally {
    let mut tally = Tally::default();
    let Ok(text) = std::fs::read_to_string(path) else {
        return tally;
    };
    let applet = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    for case in parse(&text, &applet) {
        let Some(case) = case else {
            tally.skipped += 1;
            continue;
        };
        let Ok(dir) = scratch_dir() else {
            tally.skipped += 1;
            continue;
        };
        if !case.infile.is_empty() {
            let _ = std::fs::write(dir.join("input"), &case.infile);
        }
        let opts = LineOptions {
            dirs: vec![Preopen {
                host: dir.clone(),
                guest: ".".into(),
                read_only: false,
            }],
            stdin: case.stdin.clone().into(),
            stage_timeout: Some(Duration::from_secs(10)),
            ..LineOptions::default()
        };
        let result = engine.commands().run_line(&case.command, opts).await;
        let _ = std::fs::remove_dir_all(&dir);
        match result {
            Ok(o) if o.stdout == case.result.as_bytes() => tally.pass += 1,
            Ok(o) => {
                tally.fail += 1;
                tally.failures.push(format!(
                    "{}: `{}` => {:?} (want {:?})",
                    case.name,
                    case.command,
                    String::from_utf8_lossy(&o.stdout),
                    case.result
                ));
            }
            Err(LineError::Syntax(_) | LineError::Unsupported(_))
            | Err(LineError::Command {
                error: CommandError::Unknown(_),
                ..
            }) => tally.skipped += 1,
            Err(e) => {
                tally.fail += 1;
                tally
                    .failures
                    .push(format!("{}: `{}` => {e}", case.name, case.command));
            }
        }
    }
    tally
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn testing_and_testcmd_lines_become_cases() {
        let text = "testing \"sort\" \"sort input\" \"a\\nb\\n\" \"b\\na\\n\" \"\"\n\
                    testcmd \"stdin\" \\\n  \"-n 1\" \"one\\n\" \"\" 'one\\ntwo'\n\
                    testing \"var\" \"sort $FILES\" \"\" \"\" \"\"\n\
                    echo one > file1\n\
                    testing \"fixture\" 'cat file1' \"one\\n\" \"\" \"\"\n\
                    testing \"joined\" \"cat\" \"\\\nab\\\n\" \"\" \"ab\"\n";
        let cases = parse(text, "head");
        assert_eq!(cases.len(), 5);
        let c = cases[0].as_ref().unwrap();
        assert_eq!(
            (c.command.as_str(), c.result.as_str(), c.infile.as_str()),
            ("sort input", "a\nb\n", "b\na\n")
        );
        let c = cases[1].as_ref().unwrap();
        assert_eq!(
            (c.command.as_str(), c.stdin.as_str()),
            ("head -n 1", "one\ntwo")
        );
        assert!(cases[2].is_none(), "depends on a harness variable");
        assert!(cases[3].is_none(), "depends on a file the harness made");
        assert_eq!(
            cases[4].as_ref().unwrap().result,
            "ab",
            "backslash-newline vanishes"
        );
    }

    #[test]
    fn echo_escapes_are_applied() {
        assert_eq!(echo_e("a\\tb\\n\\0101\\x42\\\\"), "a\tb\nAB\\");
        assert_eq!(echo_e("stop\\chere"), "stop");
    }
}
