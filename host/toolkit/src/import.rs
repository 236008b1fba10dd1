//! `toolkit import`: a Claude skill (a folder with `SKILL.md`), a
//! markdown file or a folder of them, packaged as a discovery-only
//! toolkit; and `toolkit audit`: the wasm-compatibility audit of such a
//! folder.
//!
//! Invariants. Import only writes a new folder (never over an existing
//! one) and copies regular files: a link is refused by name, and the
//! source is capped ([`IMPORT_MAX_FILES`], [`IMPORT_MAX_BYTES`]). It runs
//! nothing and declares no `#+EXEC`, so an imported toolkit can teach but
//! not act until someone builds a command for it. Every file is read
//! through [`crate::tree`], which never follows a link swapped in after
//! the listing. The audit names every
//! recipe that would need native execution here: a shell block calling a
//! program this engine does not have, a block in a language the engine
//! only runs through a catalog program, and a shipped script or native
//! binary. `--fix` turns the shell blocks it names into example blocks, so
//! no reader mistakes them for runnable recipes.

use super::ToolkitError;
use crate::discover::is_slug;
pub use crate::limits::{IMPORT_MAX_BYTES, IMPORT_MAX_FILES};
use crate::tree::{copy_beneath, files_under, io, read_beneath, replace_beneath};
use std::path::{Path, PathBuf};

/// One finding of the audit.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Finding {
    /// The file, relative to the toolkit.
    pub file: String,
    /// The 1-based line, 0 for a whole file.
    pub line: usize,
    /// What would not run here, and what to do instead.
    pub what: String,
}

/// A toolkit id made of `name`: lower-case, `-` for anything else.
pub fn slug_of(name: &str) -> String {
    let mut out = String::new();
    for c in name.trim().chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches(|c| c == '-' || c == '.').to_string()
}

/// Splits YAML front matter (`---` … `---`) into `name` and
/// `description`, and the body after it.
fn front_matter(text: &str) -> (Option<String>, Option<String>, &str) {
    let Some(rest) = text.strip_prefix("---\n") else {
        return (None, None, text);
    };
    let Some(end) = rest.find("\n---") else {
        return (None, None, text);
    };
    let (mut name, mut description) = (None, None);
    for line in rest[..end].lines() {
        if let Some((k, v)) = line.split_once(':') {
            let v = v.trim().trim_matches(|c| c == '"' || c == '\'').to_string();
            match k.trim() {
                "name" => name = Some(v),
                "description" => description = Some(v),
                _ => {}
            }
        }
    }
    let body = rest[end + 4..].trim_start_matches(['-', '\n']);
    (name, description, body)
}

/// Markdown to org, for what a skill uses: headings and fenced blocks.
pub fn md_to_org(md: &str) -> String {
    let mut out = String::new();
    let mut fence: Option<&str> = None;
    for line in md.lines() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            match fence {
                None => {
                    let lang = info.trim();
                    let lang = if lang.is_empty() { "text" } else { lang };
                    out.push_str(&format!("#+begin_src {lang}\n"));
                    fence = Some("src");
                }
                Some(_) => {
                    out.push_str("#+end_src\n");
                    fence = None;
                }
            }
            continue;
        }
        if fence.is_none() {
            let hashes = line.bytes().take_while(|b| *b == b'#').count();
            if hashes > 0 && line[hashes..].starts_with(' ') {
                out.push_str(&"*".repeat(hashes));
                out.push_str(&line[hashes..]);
                out.push('\n');
                continue;
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    if fence.is_some() {
        out.push_str("#+end_src\n");
    }
    out
}

/// Imports `source` as the toolkit `id` (from `--as`, the skill's `name`,
/// or the file's stem) into a new folder under `root`; returns the folder.
pub fn import(source: &Path, id: Option<&str>, root: &Path) -> Result<PathBuf, ToolkitError> {
    let src_name = source.display().to_string();
    let (main, dir) = if source.is_dir() {
        let skill = ["SKILL.md", "README.md"]
            .iter()
            .map(|f| source.join(f))
            .find(|p| p.is_file())
            .ok_or_else(|| io(&src_name, "a folder to import holds SKILL.md or README.md"))?;
        (skill, Some(source))
    } else {
        (source.to_path_buf(), None)
    };
    let text = std::fs::read_to_string(&main).map_err(|e| io(&src_name, e))?;
    let (name, description, body) = front_matter(&text);
    let stem = source
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let id = slug_of(id.or(name.as_deref()).unwrap_or(&stem));
    if !is_slug(&id) {
        return Err(ToolkitError::Unknown(id));
    }
    let out = root.join(&id);
    if out.exists() {
        return Err(io(
            &id,
            format!(
                "{} exists; import never writes over a folder",
                out.display()
            ),
        ));
    }
    let files = match dir {
        Some(d) => files_under(&id, d)?.0,
        None => Vec::new(),
    };
    let title = name.clone().unwrap_or_else(|| id.clone());
    let tagline: String = description
        .clone()
        .unwrap_or_else(|| {
            format!(
                "Imported from {}",
                main.file_name().unwrap_or_default().to_string_lossy()
            )
        })
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect();
    let staging = root.join(format!(".import-{id}-{}", std::process::id()));
    let write = |rel: &str, text: &str| -> Result<(), ToolkitError> {
        let path = staging.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io(&id, e))?;
        }
        std::fs::write(path, text).map_err(|e| io(&id, e))
    };
    let result = (|| {
        write(
            "manifest.org",
            &format!(
                "#+TITLE: {title}\n#+TOOLKIT: {id}\n#+VERSION: 0.1.0\n#+STATUS: experimental\n#+TAGLINE: {tagline}\n\n* {title} :toolkit:\n:PROPERTIES:\n:ID: {id}\n:STATUS: experimental\n:END:\nImported from ={}= by =wbx toolkit import=: discovery-only (no =#+EXEC=) until a command is built for it. Run =wbx toolkit audit= before trusting its recipes.\n",
                main.file_name().unwrap_or_default().to_string_lossy()
            ),
        )?;
        write(
            "skills/overview.org",
            &format!("#+TITLE: {title}: overview\n\n{}", md_to_org(body)),
        )?;
        let d = dir.unwrap_or(source);
        let mut budget = IMPORT_MAX_BYTES;
        for rel in &files {
            let from = d.join(rel);
            let is_main = from == main;
            let rel_s = rel.to_string_lossy();
            if is_main {
                continue;
            }
            if rel.extension().is_some_and(|x| x == "md") {
                let slug = slug_of(&rel_s.trim_end_matches(".md").replace('/', "-"));
                let md = read_beneath(&id, d, rel, budget)?;
                budget -= md.len() as u64;
                write(
                    &format!("skills/{slug}.org"),
                    &md_to_org(&String::from_utf8_lossy(&md)),
                )?;
            } else {
                let to = staging.join("resources").join(rel);
                budget -= copy_beneath(&id, d, rel, &to, budget)?;
            }
        }
        std::fs::rename(&staging, &out).map_err(|e| io(&id, e))
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    result.map(|()| out)
}

/// Languages a block may be written in that this engine runs only through
/// a catalog program, and the program.
const CATALOG_LANGS: [(&str, &str); 3] =
    [("python", "python"), ("js", "qjs"), ("javascript", "qjs")];

/// Audits the toolkit folder `dir` against `known` commands; with `fix`,
/// the shell blocks named become example blocks first (and are reported
/// as fixed, not found).
pub fn audit(
    dir: &Path,
    known: &dyn Fn(&str) -> bool,
    fix: bool,
) -> Result<Vec<Finding>, ToolkitError> {
    let id = dir.display().to_string();
    let mut findings = Vec::new();
    for rel in files_under(&id, dir)?.0 {
        let rel_s = rel.to_string_lossy().into_owned();
        if rel_s.ends_with(".org") {
            let bytes = read_beneath(&id, dir, &rel, IMPORT_MAX_BYTES)?;
            let text = String::from_utf8_lossy(&bytes).into_owned();
            let (fixed, found) = audit_org(&rel_s, &text, known, fix);
            findings.extend(found);
            if fix && fixed != text {
                // Replaced, not written through: a link swapped in (for
                // the file or a folder on its way) is never followed.
                replace_beneath(&id, dir, &rel, fixed.as_bytes())?;
            }
        } else if rel.starts_with("resources") || rel.starts_with("scripts") {
            let head = read_beneath(&id, dir, &rel, IMPORT_MAX_BYTES)?;
            let native =
                head.starts_with(b"\x7fELF") || head.starts_with(b"MZ") || head.starts_with(b"#!");
            let script = ["sh", "bash", "py", "js", "rb", "pl"]
                .iter()
                .any(|x| rel.extension().is_some_and(|e| e == *x));
            if native || script {
                findings.push(Finding {
                    file: rel_s,
                    line: 0,
                    what: "a native script or binary: it never runs here; ship it as a wasm command (the js lane for JavaScript, the catalog's python for Python)".into(),
                });
            }
        }
    }
    findings.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    Ok(findings)
}

/// One org file's findings, and its text with the named shell blocks
/// made example blocks when `fix`.
fn audit_org(
    file: &str,
    text: &str,
    known: &dyn Fn(&str) -> bool,
    fix: bool,
) -> (String, Vec<Finding>) {
    let mut out = String::with_capacity(text.len());
    let mut found = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let lower = line.trim_start().to_ascii_lowercase();
        let Some(lang) = lower.strip_prefix("#+begin_src") else {
            out.push_str(line);
            out.push('\n');
            i += 1;
            continue;
        };
        let lang = lang.split_whitespace().next().unwrap_or("").to_string();
        let end = (i + 1..lines.len())
            .find(|j| {
                lines[*j]
                    .trim_start()
                    .to_ascii_lowercase()
                    .starts_with("#+end_src")
            })
            .unwrap_or(lines.len());
        let mut unknown = Vec::new();
        if matches!(lang.as_str(), "sh" | "bash" | "shell" | "zsh") {
            for (j, l) in lines.iter().enumerate().take(end).skip(i + 1) {
                for stage in l.split(['|', ';']).flat_map(|s| s.split("&&")) {
                    // A stage inside a quoted `wbx run '…'` line splits
                    // here too: its command word keeps the quote.
                    let word = stage
                        .split_whitespace()
                        .find(|w| !w.contains('=') && *w != "$")
                        .map(|w| w.trim_matches(['\'', '"']))
                        .filter(|w| !w.is_empty());
                    if let Some(w) = word
                        && !w.starts_with('#')
                        && !known(w)
                    {
                        unknown.push((j + 1, w.to_string()));
                    }
                }
            }
        } else if let Some((_, program)) = CATALOG_LANGS.iter().find(|(l, _)| *l == lang) {
            found.push(Finding {
                file: file.to_string(),
                line: i + 1,
                what: format!("a {lang} block runs natively elsewhere; here run it with the catalog's `{program}` (wbx catalog install {program})"),
            });
        }
        let rewrite = fix && !unknown.is_empty();
        for (line, word) in unknown {
            if !rewrite {
                found.push(Finding {
                    file: file.to_string(),
                    line,
                    what: format!("`{word}` is not a command of this engine: the recipe would need native execution"),
                });
            }
        }
        out.push_str(if rewrite { "#+begin_example" } else { line });
        out.push('\n');
        for l in lines.iter().take(end).skip(i + 1) {
            out.push_str(l);
            out.push('\n');
        }
        if end < lines.len() {
            out.push_str(if rewrite { "#+end_example" } else { lines[end] });
            out.push('\n');
        }
        i = end + 1;
    }
    (out, found)
}
