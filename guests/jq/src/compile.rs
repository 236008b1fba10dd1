//! Parses and compiles filter text with the standard library, and renders
//! syntax and name errors as jq-style messages.

use crate::session::{self, Kind};
use jaq_core::compile::Undefined;
use jaq_core::load::{self, Arena, File, Loader};
use jaq_core::{Compiler, Filter};

/// Compiles `code`, with `global_vars` (each starting with `$`) available
/// to it. On failure returns one message per error.
pub fn compile(code: &str, global_vars: &[String]) -> Result<Filter<Kind>, Vec<String>> {
    let arena = Arena::default();
    let prelude =
        load::parse(session::PRELUDE, |parser| parser.defs()).expect("the session prelude parses");
    let defs = jaq_core::defs()
        .chain(jaq_std::defs())
        .chain(jaq_json::defs())
        .chain(prelude);
    let modules = Loader::new(defs)
        .load(&arena, File { code, path: () })
        .map_err(|errors| load_messages(code, errors))?;
    Compiler::default()
        .with_funs(session::all_funs())
        .with_global_vars(global_vars.iter().map(String::as_str))
        .compile(modules)
        .map_err(|errors| {
            errors
                .into_iter()
                .flat_map(|(_file, undefined)| undefined)
                .map(|(name, kind)| undefined_message(code, name, &kind))
                .collect()
        })
}

/// " at line L, column C" for `part`, if it is a slice of `whole`.
fn position(whole: &str, part: &str) -> String {
    let start = (part.as_ptr() as usize).checked_sub(whole.as_ptr() as usize);
    let Some(start) = start.filter(|start| start + part.len() <= whole.len()) else {
        return String::new();
    };
    let before = &whole[..start];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |newline| newline + 1) + 1;
    format!(" at line {line}, column {column}")
}

fn found_text(part: &str) -> String {
    if part.is_empty() {
        "end of input".to_owned()
    } else {
        let shown: String = part.chars().take(20).collect();
        format!("{shown:?}")
    }
}

fn load_messages(code: &str, errors: load::Errors<&str, ()>) -> Vec<String> {
    let mut messages = Vec::new();
    for (_file, error) in errors {
        match error {
            load::Error::Io(failures) => {
                for (path, reason) in failures {
                    messages.push(format!("cannot load module {path}: {reason}"));
                }
            }
            load::Error::Lex(failures) => {
                for (expected, found) in failures {
                    messages.push(format!(
                        "syntax error: expected {}{}",
                        lex_expectation(&expected),
                        position(code, found)
                    ));
                }
            }
            load::Error::Parse(failures) => {
                for (expected, found) in failures {
                    messages.push(format!(
                        "syntax error: expected {}, found {}{}",
                        expected.as_str(),
                        found_text(found),
                        position(code, found)
                    ));
                }
            }
        }
    }
    messages
}

fn lex_expectation(expected: &load::lex::Expect<&str>) -> &'static str {
    use load::lex::Expect;
    match expected {
        Expect::Delim(delimiter) if !matches!(*delimiter, "(" | "[" | "{" | "\"") => "delimiter",
        other => other.as_str(),
    }
}

fn undefined_message(code: &str, name: &str, kind: &Undefined) -> String {
    let what = match kind {
        Undefined::Filter(arity) => format!("{name}/{arity}"),
        _ => name.to_owned(),
    };
    format!(
        "{} {what} is not defined{}",
        kind.as_str(),
        position(code, name)
    )
}
