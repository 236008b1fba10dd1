//! The README and the book cannot go stale silently: every `sh` block that
//! runs `wbx` or `wb` runs here against a fresh home (a block that needs a
//! server, a key or a download says `no-run` in its info string, and is
//! named as skipped); every relative link resolves, anchors included; the
//! summary lists its chapters and each exists; a guide's guest code is the
//! example's source, word for word.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The README and every page of the book.
fn pages() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let p = entry.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|e| e == "md") {
                out.push(p);
            }
        }
    }
    let mut out = vec![repo().join("README.md")];
    walk(&repo().join("docs"), &mut out);
    out.sort();
    out
}

/// A fenced block: where it starts, its info string, its text.
struct Block {
    name: String,
    info: String,
    body: String,
}

fn blocks(page: &Path) -> Vec<Block> {
    let text = std::fs::read_to_string(page).unwrap();
    let rel = page
        .strip_prefix(repo())
        .unwrap_or(page)
        .display()
        .to_string();
    let mut out = Vec::new();
    let mut open: Option<(usize, String, Vec<&str>)> = None;
    for (n, line) in text.lines().enumerate() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => open = Some((n + 1, info.trim().to_string(), Vec::new())),
            (Some(_), Some(_)) => {
                let (start, info, body) = open.take().unwrap();
                out.push(Block {
                    name: format!("{rel}:{start}"),
                    info,
                    body: body.join("\n"),
                });
            }
            (Some((_, _, body)), None) => body.push(line),
            (None, None) => {}
        }
    }
    out
}

/// Whether a line runs `wbx` or `wb` (after any `NAME=value` words, or
/// as the end of a pipe).
fn runs_wbx(body: &str) -> bool {
    body.lines().any(|l| {
        let l = l.trim_start();
        let words: Vec<&str> = l.split_whitespace().collect();
        let first = words
            .iter()
            .find(|w| !w.contains('=') || w.starts_with('-'))
            .copied();
        matches!(first, Some("wbx" | "wb")) || l.contains("| wbx ") || l.contains("| wb ")
    })
}

/// A folder as a reader's would be right after the README's first
/// command: the repository's toolkits and compose recipes, and, unless
/// `bare`, the three components `wbx examples` writes (written by it).
fn workspace(bare: bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    // Copies, not links: a block may sign or build into them.
    for shared in ["toolkits", "compose"] {
        copy_tree(&repo().join(shared), &dir.path().join(shared));
    }
    if !bare {
        let out = Command::new(env!("CARGO_BIN_EXE_wbx"))
            .arg("examples")
            .current_dir(dir.path())
            .env("WB_HOME", dir.path().join(".home"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "wbx examples: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        for name in ["hello.wasm", "counter.wasm", "math-cli.wasm"] {
            assert!(
                dir.path().join(name).is_file(),
                "wbx examples wrote no {name}"
            );
        }
    }
    dir
}

/// A `PATH` whose first folder holds `wbx` and `wb` (as the tour puts
/// the first command's build on it), and the folder.
fn wbx_path() -> (tempfile::TempDir, String) {
    let bin = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_wbx"), bin.path().join("wbx")).unwrap();
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_wb"), bin.path().join("wb")).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    (bin, path)
}

/// Runs `script` with bash (`-euo pipefail`) in `dir`, with `path`, in a
/// fresh home there and none of the operator's variables.
fn bash_in(dir: &Path, path: &str, script: &str) -> std::process::Output {
    Command::new("bash")
        .args(["-euo", "pipefail", "-c", script])
        .current_dir(dir)
        .env("PATH", path)
        .env("WB_HOME", dir.join(".home"))
        .env_remove("WB_NET_ALLOW")
        .env_remove("WB_OPERATOR_ALLOW")
        .env_remove("WB_LOG")
        .env_remove("WB_OCI_SIGNERS")
        .env_remove("WB_SIGNING_KEY")
        .env_remove("WB_CACHE_DIR")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The tail of a text, for a failure message.
fn tail(text: &[u8]) -> String {
    let text = String::from_utf8_lossy(text);
    let chars: Vec<char> = text.chars().collect();
    chars[chars.len().saturating_sub(600)..].iter().collect()
}

#[test]
fn the_readme_tour_runs_in_order_right_after_the_first_command_in_a_fresh_home() {
    let readme = repo().join("README.md");
    let text = std::fs::read_to_string(&readme).unwrap();
    let start = text
        .find("## A five-minute tour")
        .expect("the README has a tour");
    let end = start + text[start..].find("\n## ").unwrap_or(text.len() - start);
    let tour: Vec<Block> = blocks(&readme)
        .into_iter()
        .filter(|b| {
            let line: usize = b.name.rsplit(':').next().unwrap().parse().unwrap();
            let at = text.lines().take(line).map(|l| l.len() + 1).sum::<usize>();
            (start..end).contains(&at) && b.info == "sh"
        })
        .collect();
    assert!(
        tour.len() >= 5,
        "the tour's runnable blocks: {}",
        tour.len()
    );
    assert!(
        tour[0].body.contains("wbx examples"),
        "the tour's first block makes its components"
    );
    // Nothing but the repository's toolkits and compose recipes: the
    // components come from the tour's own first block.
    let dir = workspace(true);
    let (_bin, path) = wbx_path();
    let script: Vec<&str> = tour.iter().map(|b| b.body.as_str()).collect();
    let out = bash_in(dir.path(), &path, &script.join("\n"));
    assert!(
        out.status.success(),
        "the tour failed (exit {:?}):\n{}\n{}",
        out.status.code(),
        tail(&out.stdout),
        tail(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    for said in [
        "hello, world",
        "hello, ada",
        "apple seen 2 time(s)",
        "refused, exit 120",
    ] {
        assert!(
            stdout.contains(said),
            "the tour did not print `{said}`:\n{stdout}"
        );
    }
    assert_eq!(
        stdout.lines().last(),
        Some("9"),
        "math.wasm 2 3 4:\n{stdout}"
    );
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        let kind = entry.file_type().unwrap();
        if kind.is_dir() && entry.file_name() != "target" {
            copy_tree(&src, &dst);
        } else if kind.is_file() {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

#[test]
fn every_sh_block_that_runs_wbx_runs_in_a_fresh_home() {
    let (_bin, path) = wbx_path();
    let (mut ran, mut skipped, mut failed) = (Vec::new(), Vec::new(), Vec::new());
    for page in pages() {
        for b in blocks(&page) {
            if !b.info.starts_with("sh") || !runs_wbx(&b.body) {
                continue;
            }
            if b.info.contains("no-run") {
                let why = b.body.lines().next().unwrap_or("").trim_start_matches("# ");
                assert!(
                    why.starts_with("no-run:"),
                    "{}: a no-run block's first line says why (# no-run: …)",
                    b.name
                );
                skipped.push(format!("{} ({why})", b.name));
                continue;
            }
            let dir = workspace(false);
            let out = bash_in(dir.path(), &path, &b.body);
            if out.status.success() {
                ran.push(b.name);
            } else {
                failed.push(format!(
                    "{} (exit {:?}): {}",
                    b.name,
                    out.status.code(),
                    tail(&out.stderr)
                ));
            }
        }
    }
    eprintln!(
        "ran {} blocks; skipped {}:\n  {}",
        ran.len(),
        skipped.len(),
        skipped.join("\n  ")
    );
    assert!(
        failed.is_empty(),
        "blocks that failed:\n{}",
        failed.join("\n\n")
    );
    assert!(ran.len() >= 8, "only {} blocks ran: {ran:?}", ran.len());
}

/// GitHub's anchor of a heading.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-' || *c == ' ' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a page's headings (outside code blocks).
fn anchors(page: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(page).unwrap_or_default();
    let mut code = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            code = !code;
        } else if !code && line.starts_with('#') {
            out.push(slug(line.trim_start_matches('#')));
        }
    }
    out
}

#[test]
fn every_relative_link_resolves_anchors_included() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let mut code = false;
        for (n, line) in text.lines().enumerate() {
            if line.starts_with("```") {
                code = !code;
                continue;
            }
            if code {
                continue;
            }
            let mut rest = line;
            while let Some(at) = rest.find("](") {
                let tail = &rest[at + 2..];
                let Some(end) = tail.find(')') else { break };
                let target = &tail[..end];
                rest = &tail[end..];
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
                let resolved = if file.is_empty() {
                    page.clone()
                } else {
                    page.parent().unwrap().join(file)
                };
                let here = format!(
                    "{}:{}",
                    page.strip_prefix(repo()).unwrap_or(&page).display(),
                    n + 1
                );
                if !resolved.exists() {
                    broken.push(format!("{here}: {target} (no such file)"));
                } else if !anchor.is_empty()
                    && resolved.extension().is_some_and(|e| e == "md")
                    && !anchors(&resolved).iter().any(|a| a == anchor)
                {
                    broken.push(format!("{here}: {target} (no such heading)"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(checked > 50, "only {checked} links checked");
}

#[test]
fn the_summary_lists_at_least_eight_chapters_and_each_is_there() {
    let summary = std::fs::read_to_string(repo().join("docs/SUMMARY.md")).unwrap();
    let chapters: Vec<&str> = summary
        .lines()
        .filter_map(|l| l.split_once("](").map(|(_, t)| t.trim_end_matches(')')))
        .collect();
    assert!(chapters.len() >= 8, "{chapters:?}");
    for c in &chapters {
        assert!(
            repo().join("docs").join(c).is_file(),
            "docs/{c} is listed but absent"
        );
    }
}

#[test]
fn the_readme_is_at_most_250_lines_and_holds_both_commands() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(
        readme.lines().count() <= 250,
        "{} lines",
        readme.lines().count()
    );
    assert!(readme.contains("cargo run -p workbooks-cli --bin wbx -- run"));
    assert!(readme.contains("\ncargo xtask test\n"));
}

#[test]
fn a_guides_guest_code_is_the_examples_source_word_for_word() {
    let mut sources = String::new();
    for dir in ["examples", "guests/test-programs"] {
        collect(&repo().join(dir), &mut sources);
    }
    let mut checked = 0;
    for page in pages()
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("docs/authors"))
    {
        for b in blocks(&page).into_iter().filter(|b| b.info == "rust") {
            checked += 1;
            assert!(
                sources.contains(b.body.trim()),
                "{}: this guest code is not in examples/ or guests/test-programs/ as written",
                b.name
            );
        }
    }
    assert!(checked >= 2, "only {checked} guest blocks");
}

fn collect(dir: &Path, out: &mut String) {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = entry.path();
        if p.is_dir() && !p.ends_with("target") {
            collect(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push_str(&std::fs::read_to_string(&p).unwrap_or_default());
            out.push('\n');
        }
    }
}
