//! `search [-n N] [-C DIR] [-x NAME]... QUERY...`: the files under DIR
//! (default `.`), but those named NAME,
//! ranked against QUERY with BM25, best first, at most N (default 5): each
//! as its path and score, then the lines that hold a query word (or its
//! first line). The agent's `search` tool runs it over the run's workdir,
//! so the ranking, like every parse of those files, happens in the
//! sandbox.
//!
//! Bounded whatever the directory holds: at most [`MAX_FILES`] files of
//! [`MAX_FILE_BYTES`] each are read, [`MAX_TOTAL_BYTES`] in all; links are
//! not followed, non-regular and non-UTF-8 files are skipped.

use bm25::{Document, SearchEngineBuilder, Tokenizer};
use std::io::{Read, Write};
use std::path::Path;

/// Files read at most.
pub const MAX_FILES: usize = 2000;
/// Bytes read of one file at most; longer files are ranked on their start.
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// Bytes read in all at most.
pub const MAX_TOTAL_BYTES: usize = 32 << 20;
/// Excerpt lines shown per file.
const EXCERPT_LINES: usize = 3;
/// Characters of one excerpt line shown.
const EXCERPT_CHARS: usize = 160;

/// Words: runs of letters and digits, lowercased.
struct Words;

impl Tokenizer for Words {
    fn tokenize(&self, text: &str) -> Vec<String> {
        words(text)
    }
}

fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// The files under `dir`, in name order, as (path shown, text).
fn corpus(
    dir: &Path,
    shown: &str,
    skip: &[String],
    out: &mut Vec<(String, String)>,
    total: &mut usize,
) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        if out.len() >= MAX_FILES || *total >= MAX_TOTAL_BYTES {
            return;
        }
        let name = entry.file_name().to_string_lossy().into_owned();
        if skip.contains(&name) {
            continue;
        }
        let path = if shown.is_empty() {
            name.clone()
        } else {
            format!("{shown}/{name}")
        };
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            corpus(&entry.path(), &path, skip, out, total);
        } else if kind.is_file() {
            let mut bytes = Vec::new();
            let cap = MAX_FILE_BYTES.min((MAX_TOTAL_BYTES - *total) as u64);
            let read =
                std::fs::File::open(entry.path()).and_then(|f| f.take(cap).read_to_end(&mut bytes));
            if read.is_err() {
                continue;
            }
            if let Ok(text) = String::from_utf8(bytes) {
                *total += text.len();
                out.push((path, text));
            }
        }
    }
}

fn excerpt(text: &str, query: &[String]) -> Vec<String> {
    let clip = |l: &str| l.trim().chars().take(EXCERPT_CHARS).collect::<String>();
    let hits: Vec<String> = text
        .lines()
        .filter(|l| words(l).iter().any(|w| query.contains(w)))
        .take(EXCERPT_LINES)
        .map(clip)
        .collect();
    if hits.is_empty() {
        text.lines()
            .find(|l| !l.trim().is_empty())
            .map(clip)
            .into_iter()
            .collect()
    } else {
        hits
    }
}

const USAGE: &str = "usage: search [-n N] [-C DIR] [-x NAME]... QUERY...\n";

/// The command.
pub fn run(args: &[String], _: &mut dyn Read, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let mut limit = 5usize;
    let mut dir = ".".to_string();
    let mut query = Vec::new();
    let mut skip: Vec<String> = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-n" => match it.next().and_then(|n| n.parse().ok()).filter(|n| *n > 0) {
                Some(n) => limit = n,
                None => {
                    let _ = err.write_all(b"search: -n takes a positive number\n");
                    return 2;
                }
            },
            "-x" => match it.next() {
                Some(name) => skip.push(name.clone()),
                None => {
                    let _ = err.write_all(USAGE.as_bytes());
                    return 2;
                }
            },
            "-C" => match it.next() {
                Some(d) => dir = d.clone(),
                None => {
                    let _ = err.write_all(USAGE.as_bytes());
                    return 2;
                }
            },
            _ => query.push(a.as_str()),
        }
    }
    let query = query.join(" ");
    let terms = words(&query);
    if terms.is_empty() {
        let _ = err.write_all(USAGE.as_bytes());
        return 2;
    }
    let mut files = Vec::new();
    let mut total = 0;
    let shown = if dir == "." {
        String::new()
    } else {
        dir.trim_end_matches('/').to_string()
    };
    corpus(Path::new(&dir), &shown, &skip, &mut files, &mut total);
    let documents: Vec<Document<usize>> = files
        .iter()
        .enumerate()
        .map(|(i, (_, text))| Document::new(i, text.clone()))
        .collect();
    let engine =
        SearchEngineBuilder::<usize, u32, Words>::with_tokenizer_and_documents(Words, documents)
            .build();
    let hits = engine.search(&query, limit);
    if hits.is_empty() {
        let _ = writeln!(out, "no files match `{query}`");
        return 1;
    }
    for hit in hits {
        let (path, text) = &files[hit.document.id];
        let _ = writeln!(out, "{path} (score {:.2})", hit.score);
        for line in excerpt(text, &terms) {
            let _ = writeln!(out, "  {line}");
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(dir: &Path, args: &[&str]) -> (u8, String) {
        let mut out = Vec::new();
        let mut args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        args.splice(0..0, ["-C".to_string(), dir.to_string_lossy().into_owned()]);
        let code = run(&args, &mut std::io::empty(), &mut out, &mut Vec::new());
        (code, String::from_utf8(out).unwrap())
    }

    /// A fresh directory for one test.
    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("search-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn what_lies_past_the_file_count_byte_and_total_caps_is_never_read() {
        // One file more than the cap: the last, in name order, is not read.
        let dir = scratch("count");
        for i in 0..=MAX_FILES {
            let text = if i == MAX_FILES { "needle" } else { "hay" };
            std::fs::write(dir.join(format!("f{i:05}")), text).unwrap();
        }
        assert_eq!(search(&dir, &["needle"]).0, 1);
        std::fs::remove_dir_all(&dir).unwrap();
        // A word past a file's first MiB is not read.
        let dir = scratch("bytes");
        let mut long = "hay ".repeat(MAX_FILE_BYTES as usize / 4);
        long.push_str("needle");
        std::fs::write(dir.join("long.txt"), long).unwrap();
        assert_eq!(search(&dir, &["needle"]).0, 1);
        std::fs::remove_dir_all(&dir).unwrap();
        // Nor a file past the total.
        let dir = scratch("total");
        let full = "hay ".repeat(MAX_FILE_BYTES as usize / 4);
        for i in 0..MAX_TOTAL_BYTES / MAX_FILE_BYTES as usize {
            std::fs::write(dir.join(format!("a{i:03}")), &full).unwrap();
        }
        std::fs::write(dir.join("z.txt"), "needle").unwrap();
        assert_eq!(search(&dir, &["needle"]).0, 1);
        std::fs::write(dir.join("0.txt"), "needle").unwrap();
        assert_eq!(
            search(&dir, &["needle"]).0,
            0,
            "the walk reads in name order"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn files_are_ranked_best_first_with_the_lines_that_matched() {
        let dir = std::env::temp_dir().join(format!("search-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("notes")).unwrap();
        std::fs::write(
            dir.join("notes/roster.md"),
            "# Roster\nada lovelace\ngrace hopper\nroster roster\n",
        )
        .unwrap();
        std::fs::write(dir.join("plan.txt"), "publish the roster page\nthen rest\n").unwrap();
        std::fs::write(dir.join("other.txt"), "nothing relevant here\n").unwrap();
        std::fs::write(dir.join("binary.bin"), [0xff, 0xfe, 0x00]).unwrap();
        let (code, out) = search(&dir, &["roster"]);
        assert_eq!(code, 0);
        let paths: Vec<&str> = out.lines().filter(|l| !l.starts_with(' ')).collect();
        assert_eq!(paths.len(), 2, "{out}");
        assert!(
            paths[0].starts_with(&format!("{}/notes/roster.md (score", dir.display())),
            "{out}"
        );
        assert!(out.contains("  roster roster"), "{out}");
        let (code, out) = search(&dir, &["-n", "1", "roster", "publish"]);
        assert_eq!(code, 0);
        assert_eq!(
            out.lines().filter(|l| !l.starts_with(' ')).count(),
            1,
            "{out}"
        );
        let (code, out) = search(&dir, &["-x", "roster.md", "roster"]);
        assert_eq!(code, 0);
        assert!(
            out.starts_with(&format!("{}/plan.txt (score", dir.display())),
            "{out}"
        );
        assert!(!out.contains("roster.md"), "{out}");
        let (code, out) = search(&dir, &["zebra"]);
        assert_eq!((code, out.as_str()), (1, "no files match `zebra`\n"));
        assert_eq!(search(&dir, &["!!"]).0, 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
