//! Global variables of a run: `$ENV`, `$ARGS`, `$__loc__` and the
//! variables named by `--arg`, `--argjson`, `--slurpfile` and `--rawfile`.

use crate::cli::{NamedArg, Options, PositionalArg};
use crate::input::describe;
use jaq_json::{Map, Val, read};
use std::path::Path;

/// Variable names (with their leading `$`) and values, in binding order.
pub struct Globals {
    pub names: Vec<String>,
    pub values: Vec<Val>,
}

fn parse_json(text: &str, option: &str) -> Result<Val, String> {
    read::parse_single(text.as_bytes())
        .map_err(|error| format!("Invalid JSON text passed to {option}: {error}"))
}

fn read_file(path: &Path) -> Result<Vec<u8>, String> {
    std::fs::read(path)
        .map_err(|error| format!("Could not open {}: {}", path.display(), describe(&error)))
}

fn named_value(arg: &NamedArg) -> Result<(String, Val), String> {
    Ok(match arg {
        NamedArg::Text(name, text) => (name.clone(), Val::from(text.clone())),
        NamedArg::Json(name, json) => (name.clone(), parse_json(json, "--argjson")?),
        NamedArg::SlurpFile(name, path) => {
            let bytes = read_file(path)?;
            let values: Result<Vec<Val>, _> = read::parse_many(&bytes).collect();
            let values = values.map_err(|error| {
                format!("Invalid JSON in --slurpfile {}: {error}", path.display())
            })?;
            (name.clone(), values.into_iter().collect())
        }
        NamedArg::RawFile(name, path) => (name.clone(), Val::utf8_str(read_file(path)?)),
    })
}

fn environment() -> Val {
    let entries: Map = std::env::vars()
        .map(|(key, value)| (Val::from(key), Val::from(value)))
        .collect();
    Val::obj(entries)
}

/// `$__loc__`: the file and line where the filter first mentions it (the
/// interpreter has no per-use locations, so every use shares that line).
fn location(code: &str) -> Val {
    let line = code
        .find("$__loc__")
        .map_or(1, |start| code[..start].matches('\n').count() + 1);
    let mut entries = Map::default();
    entries.insert(
        Val::from("file".to_owned()),
        Val::from("<top-level>".to_owned()),
    );
    entries.insert(Val::from("line".to_owned()), Val::from(line));
    Val::obj(entries)
}

/// Loads every variable the options define for the filter `code`.
pub fn globals(options: &Options, code: &str) -> Result<Globals, String> {
    let named: Vec<(String, Val)> = options
        .named
        .iter()
        .map(named_value)
        .collect::<Result<_, _>>()?;
    let positional: Vec<Val> = options
        .positional
        .iter()
        .map(|arg| match arg {
            PositionalArg::Text(text) => Ok(Val::from(text.clone())),
            PositionalArg::Json(json) => parse_json(json, "--jsonargs"),
        })
        .collect::<Result<_, _>>()?;

    let named_map: Map = named
        .iter()
        .map(|(name, value)| (Val::from(name.clone()), value.clone()))
        .collect();
    let mut arguments = Map::default();
    arguments.insert(
        Val::from("positional".to_owned()),
        positional.into_iter().collect(),
    );
    arguments.insert(Val::from("named".to_owned()), Val::obj(named_map));

    let mut names = vec!["$ENV".to_owned(), "$ARGS".to_owned(), "$__loc__".to_owned()];
    let mut values = vec![environment(), Val::obj(arguments), location(code)];
    for (name, value) in named {
        names.push(format!("${name}"));
        values.push(value);
    }
    Ok(Globals { names, values })
}
