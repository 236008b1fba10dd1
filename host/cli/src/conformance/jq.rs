//! jq's test format: blocks of a program line, an input line and the
//! expected outputs (one JSON value per line), separated by blank lines;
//! `%%FAIL` blocks hold a program that must fail to compile. Outputs are
//! compared as JSON values, as jq's own harness does.

use super::Tally;
use std::path::Path;
use std::time::Duration;
use workbooks::{Engine, LineOptions};

/// One block of a jq test file.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Case {
    /// Run `program` on `input`; expect `outputs`.
    Run {
        program: String,
        input: String,
        outputs: Vec<String>,
    },
    /// `program` must not compile.
    Fail { program: String },
}

/// Parses a jq test file.
pub(crate) fn parse(text: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let mut block = Vec::new();
        while let Some(l) = lines.next_if(|l| !l.trim().is_empty()) {
            block.push(l.to_string());
        }
        if line.starts_with("%%FAIL") {
            if let Some(program) = block.first() {
                cases.push(Case::Fail {
                    program: program.clone(),
                });
            }
            continue;
        }
        let mut it = block.into_iter();
        let Some(input) = it.next() else { continue };
        cases.push(Case::Run {
            program: line.to_string(),
            input,
            outputs: it.collect(),
        });
    }
    cases
}

/// JSON equality as jq's harness sees it: numbers by value, objects by
/// key set.
pub(crate) fn same(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value as V;
    match (a, b) {
        (V::Number(x), V::Number(y)) => match (x.as_f64(), y.as_f64()) {
            (Some(x), Some(y)) => x == y || (x - y).abs() <= f64::EPSILON * x.abs().max(y.abs()),
            _ => x == y,
        },
        (V::Array(x), V::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y))
        }
        (V::Object(x), V::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same(v, w)))
        }
        _ => a == b,
    }
}

fn outputs_match(stdout: &[u8], expected: &[String]) -> bool {
    let text = String::from_utf8_lossy(stdout);
    let got: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    got.len() == expected.len()
        && got.iter().zip(expected).all(|(g, e)| {
            match (
                serde_json::from_str::<serde_json::Value>(g),
                serde_json::from_str(e),
            ) {
                (Ok(g), Ok(e)) => same(&g, &e),
                _ => g.trim() == e.trim(),
            }
        })
}

/// Runs every block of a jq test file through the sandboxed jq.
pub(crate) async fn run_file(engine: &Engine, path: &Path) -> Tally {
    let mut tally = Tally::default();
    let Ok(text) = std::fs::read_to_string(path) else {
        return tally;
    };
    for case in parse(&text) {
        let (program, stdin) = match &case {
            Case::Run { program, input, .. } => (program.clone(), format!("{input}\n")),
            Case::Fail { program } => (program.clone(), String::new()),
        };
        let opts = LineOptions {
            stdin: stdin.into(),
            stage_timeout: Some(Duration::from_secs(10)),
            ..LineOptions::default()
        };
        let result = engine
            .commands()
            .run("jq", vec!["-c".into(), program.clone()], opts)
            .await;
        match case {
            Case::Fail { .. } => {
                tally.expected_failures_total += 1;
                if result.as_ref().map_or(true, |o| o.exit_code != 0) {
                    tally.expected_failures_ok += 1;
                }
            }
            Case::Run { outputs, input, .. } => match result {
                Ok(o) if o.exit_code == 0 && outputs_match(&o.stdout, &outputs) => tally.pass += 1,
                Ok(o) => {
                    tally.fail += 1;
                    tally.failures.push(format!(
                        "{program}  <<< {input}  => {} (exit {})",
                        String::from_utf8_lossy(&o.stdout)
                            .trim_end()
                            .replace('\n', " "),
                        o.exit_code
                    ));
                }
                Err(e) => {
                    tally.fail += 1;
                    tally
                        .failures
                        .push(format!("{program}  <<< {input}  => {e}"));
                }
            },
        }
    }
    tally
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_and_fail_blocks_parse() {
        let text =
            "# comment\n\n.a\n{\"a\":1}\n1\n\n%%FAIL\n{(0):1}\njq: error\n\n[.[]]\n[1,2]\n[1,2]\n";
        assert_eq!(
            parse(text),
            vec![
                Case::Run {
                    program: ".a".into(),
                    input: "{\"a\":1}".into(),
                    outputs: vec!["1".into()]
                },
                Case::Fail {
                    program: "{(0):1}".into()
                },
                Case::Run {
                    program: "[.[]]".into(),
                    input: "[1,2]".into(),
                    outputs: vec!["[1,2]".into()]
                },
            ]
        );
    }

    #[test]
    fn json_equality_ignores_key_order_and_number_spelling() {
        assert!(outputs_match(
            b"{\"b\":2,\"a\":1.0}\n",
            &["{\"a\":1,\"b\":2}".into()]
        ));
        assert!(!outputs_match(b"1\n2\n", &["1".into()]));
        assert!(!outputs_match(b"[1,2]\n", &["[2,1]".into()]));
    }
}
