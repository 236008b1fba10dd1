//! Checks a crate's layering from its source: every top-level module is
//! placed in one list, lowest first, and no module names (`crate::x`, or
//! `x` inside a `use crate::{...}` group) a module placed above it. Test
//! code counts as much as any other code, as the stop hook's cycle check
//! counts it. A crate calls [`check`] from one unit test.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Every `.rs` file under `dir`, at any depth (none if it is not a
/// directory), sorted.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    files(dir, &["rs"])
}

/// Every file under `dir` whose extension is one of `extensions`, at any
/// depth but a build's `target` (none if it is not a directory), sorted.
pub fn files(dir: &Path, extensions: &[&str]) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                if entry.file_name() != "target" {
                    dirs.push(path);
                }
            } else if path
                .extension()
                .is_some_and(|e| extensions.iter().any(|x| e == *x))
            {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The top-level modules of the crate whose source is `src`: each
/// `x.rs` and each folder, but the crate roots `lib.rs` and `main.rs`.
pub fn modules(src: &Path) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for entry in std::fs::read_dir(src).into_iter().flatten().flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        if path.is_dir() {
            found.insert(name);
        } else if let Some(stem) = name.strip_suffix(".rs")
            && stem != "lib"
            && stem != "main"
        {
            found.insert(stem.to_string());
        }
    }
    found
}

/// The files of `module`: `module.rs` and everything under `module/`.
fn files_of(src: &Path, module: &str) -> Vec<PathBuf> {
    let mut files = rust_files(&src.join(module));
    let single = src.join(format!("{module}.rs"));
    if single.is_file() {
        files.push(single);
    }
    files
}

/// The modules of the crate `code` names: `crate::x` paths and the
/// members of `use crate::{...}` groups, comment lines skipped.
pub fn named(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in code.lines().filter(|l| !l.trim_start().starts_with("//")) {
        for (i, _) in line.match_indices("crate::") {
            let rest = &line[i + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let group = &group[..group.find('}').unwrap_or(group.len())];
                for item in group.split(',') {
                    let head = item.trim().split("::").next().unwrap_or_default();
                    out.push(head.to_string());
                }
            } else {
                let end = rest
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                out.push(rest[..end].to_string());
            }
        }
    }
    out
}

/// Checks the crate at `src` against `layers` (lowest first). `seams` are
/// the upward imports still allowed, as `(from, to)`: each must still be
/// there, so a seam that is cut must leave the list too.
pub fn check(src: &Path, layers: &[&str], seams: &[(&str, &str)]) -> Result<usize, String> {
    let found = modules(src);
    let placed: BTreeSet<String> = layers.iter().map(|m| m.to_string()).collect();
    let unplaced: Vec<_> = found.difference(&placed).collect();
    let gone: Vec<_> = placed.difference(&found).collect();
    if !unplaced.is_empty() || !gone.is_empty() {
        return Err(format!(
            "modules not placed in a layer: {unplaced:?}; placed but not found: {gone:?}"
        ));
    }
    let mut upward = Vec::new();
    let mut used = BTreeSet::new();
    let mut checked = 0;
    for (level, module) in layers.iter().enumerate() {
        for file in files_of(src, module) {
            checked += 1;
            let text = std::fs::read_to_string(&file).map_err(|e| format!("{file:?}: {e}"))?;
            for name in named(&text) {
                if !layers[level + 1..].contains(&name.as_str()) {
                    continue;
                }
                if seams.contains(&(*module, name.as_str())) {
                    used.insert((module.to_string(), name));
                } else {
                    upward.push(format!("{} imports crate::{name}", file.display()));
                }
            }
        }
    }
    if !upward.is_empty() {
        return Err(format!("imports that run up a layer: {upward:#?}"));
    }
    let stale: Vec<_> = seams
        .iter()
        .filter(|(a, b)| !used.contains(&(a.to_string(), b.to_string())))
        .collect();
    if !stale.is_empty() {
        return Err(format!(
            "seams no longer crossed, to remove from the list: {stale:?}"
        ));
    }
    Ok(checked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_sees_paths_and_groups_and_skips_comments() {
        let names =
            named("use crate::engine::Engine;\nuse crate::{state::X, cap};\n// crate::agent\n");
        assert_eq!(names, ["engine", "state", "cap"]);
    }

    #[test]
    fn an_import_running_up_an_unplaced_module_and_a_stale_seam_all_fail() {
        let dir = std::env::temp_dir().join(format!("layers-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("b")).unwrap();
        std::fs::write(dir.join("lib.rs"), "mod a; mod b;").unwrap();
        std::fs::write(dir.join("a.rs"), "use crate::b::X;").unwrap();
        std::fs::write(dir.join("b/mod.rs"), "pub struct X;").unwrap();
        assert_eq!(check(&dir, &["b", "a"], &[]), Ok(2));
        let up = check(&dir, &["a", "b"], &[]).unwrap_err();
        assert!(up.contains("a.rs imports crate::b"), "{up}");
        assert_eq!(check(&dir, &["a", "b"], &[("a", "b")]), Ok(2));
        let unplaced = check(&dir, &["b"], &[]).unwrap_err();
        assert!(
            unplaced.contains("not placed in a layer: [\"a\"]"),
            "{unplaced}"
        );
        let stale = check(&dir, &["b", "a"], &[("b", "a")]).unwrap_err();
        assert!(stale.contains("no longer crossed"), "{stale}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
