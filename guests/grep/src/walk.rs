//! Expands file operands into the inputs to search, walking directories
//! for `-r`/`-R` in name order. During a walk, symbolic links are followed
//! only with `-R`, and files that are not regular (FIFOs, devices) are
//! skipped so a search never blocks on them.

use crate::cli::{NameFilter, Recursion};
use crate::glob;
use std::fs;
use std::io;
use std::path::Path;

/// One input to search.
pub enum Input {
    Stdin,
    /// A file, by the name shown in output (also its path).
    File(String),
    /// A directory that could not be listed.
    Unlistable(String, io::Error),
}

/// Joins a directory name and an entry name the way grep prints them.
fn child_name(directory: &str, entry: &str) -> String {
    if directory == "." {
        entry.to_owned()
    } else if directory.ends_with('/') {
        format!("{directory}{entry}")
    } else {
        format!("{directory}/{entry}")
    }
}

fn base_name(path: &str) -> &str {
    path.trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or(path)
}

impl NameFilter {
    fn any(globs: &[String], name: &str) -> bool {
        globs
            .iter()
            .any(|pattern| glob::matches(pattern, base_name(name)))
    }

    /// Whether the file at `path` is to be searched.
    fn wants_file(&self, path: &str) -> bool {
        (self.include.is_empty() || Self::any(&self.include, path))
            && !Self::any(&self.exclude, path)
    }

    /// Whether the directory at `path` is to be walked.
    fn wants_directory(&self, path: &str) -> bool {
        !Self::any(&self.exclude_dirs, path)
    }
}

/// How a walk treats links and names.
struct Walk<'f> {
    recursion: Recursion,
    filter: &'f NameFilter,
}

impl Walk<'_> {
    fn walk(&self, directory: &str, inputs: &mut Vec<Input>) {
        let entries = match fs::read_dir(directory) {
            Ok(entries) => entries,
            Err(error) => return inputs.push(Input::Unlistable(directory.to_owned(), error)),
        };
        let mut names: Vec<String> = entries
            .filter_map(Result::ok)
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        for name in names {
            let path = child_name(directory, &name);
            let Ok(link_metadata) = fs::symlink_metadata(&path) else {
                continue;
            };
            let metadata = if link_metadata.file_type().is_symlink() {
                if self.recursion == Recursion::CommandLineLinks {
                    continue;
                }
                match fs::metadata(&path) {
                    Ok(metadata) => metadata,
                    Err(_) => continue,
                }
            } else {
                link_metadata
            };
            if metadata.is_dir() && self.filter.wants_directory(&path) {
                self.walk(&path, inputs);
            } else if metadata.is_file() && self.filter.wants_file(&path) {
                inputs.push(Input::File(path));
            }
        }
    }
}

/// The inputs for `operands`; with no operands, stdin (or `.` when recursive).
pub fn inputs(
    operands: &[String],
    recursion: Option<Recursion>,
    filter: &NameFilter,
) -> Vec<Input> {
    let default = if recursion.is_some() { "." } else { "-" };
    let operands: Vec<&str> = if operands.is_empty() {
        vec![default]
    } else {
        operands.iter().map(String::as_str).collect()
    };
    let mut inputs = Vec::new();
    for operand in operands {
        if operand == "-" {
            inputs.push(Input::Stdin);
            continue;
        }
        match recursion {
            Some(recursion) if Path::new(operand).is_dir() => {
                Walk { recursion, filter }.walk(operand, &mut inputs);
            }
            _ if filter.wants_file(operand) => inputs.push(Input::File(operand.to_owned())),
            _ => {}
        }
    }
    inputs
}

/// Whether output should name files: several operands, or a directory walk.
pub fn names_by_default(operands: &[String], recursion: Option<Recursion>) -> bool {
    operands.len() > 1
        || recursion.is_some()
            && (operands.is_empty() || operands.iter().any(|op| Path::new(op).is_dir()))
}
