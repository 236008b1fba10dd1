//! The crate's layering, checked: each module below may import only from
//! the modules before it in [`LAYERS`], never from one after it. The caps,
//! the stores and the command types sit under the engine; the engine
//! reaches down through the `Launcher` the `launch` primitive holds, so no
//! import runs back up.

/// Lowest first.
const LAYERS: &[&str] = &[
    "policy", "limits", "environ", "pipes", "files", "seal", "compiler", "artifact", "embedded",
    "store", "cadence", "egress", "preopen", "commands", "cap", "state", "dock", "engine",
];

/// The text of `file` that is code: no comment lines, nothing from the
/// first `#[cfg(test)]` on.
fn code(file: &std::path::Path) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let text = text.split("#[cfg(test)]").next().unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The modules of the crate `code` names: `crate::x` paths and the
/// members of `use crate::{...}` groups.
fn named(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in code.match_indices("crate::") {
        let rest = &code[i + "crate::".len()..];
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
    out
}

/// Every `.rs` file under `dir`, at any depth (none if it is not a
/// directory).
pub(crate) fn rust_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files
}

/// The files of `module`: `module.rs` and everything under `module/`.
fn files_of(src: &std::path::Path, module: &str) -> Vec<std::path::PathBuf> {
    let single = src.join(format!("{module}.rs"));
    let mut files = rust_files(&src.join(module));
    if single.is_file() {
        files.push(single);
    }
    files
}

#[test]
fn no_module_imports_from_a_layer_above_it() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut upward = Vec::new();
    let mut checked = 0;
    for (level, module) in LAYERS.iter().enumerate() {
        let files = files_of(&src, module);
        assert!(!files.is_empty(), "no files for layer `{module}`");
        for file in files {
            checked += 1;
            for name in named(&code(&file)) {
                if LAYERS[level + 1..].contains(&name.as_str()) {
                    upward.push(format!("{} imports crate::{name}", file.display()));
                }
            }
        }
    }
    assert!(checked > 40, "checked only {checked} files");
    assert!(
        upward.is_empty(),
        "imports that run up a layer: {upward:#?}"
    );
}

#[test]
fn the_layer_check_sees_paths_and_groups() {
    let names = named("use crate::engine::Engine;\nuse crate::{state::X, cap};\n");
    assert_eq!(names, ["engine", "state", "cap"]);
}
