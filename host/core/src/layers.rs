//! The crate's layering, checked: every top-level module is placed in
//! [`LAYERS`], and each may import only from the modules before it. The
//! caps, the stores and the command types sit under the engine; the engine
//! reaches down through the `Launcher` the `launch` primitive holds, so no
//! import runs back up. The services (toolkits, the agent, the fabric) are
//! crates above this one, each holding an engine; the engine names none.

/// Lowest first.
const LAYERS: &[&str] = &[
    "flavor", "policy", "limits", "environ", "pipes", "files", "seal", "compiler", "artifact",
    "embedded", "storage", "cadence", "egress", "preopen", "commands", "tier", "cap", "state",
    "dock", "engine", "instance", "serve", "kernel", "identity", "child", "layers",
];

#[test]
fn every_module_is_placed_and_none_imports_from_a_layer_above_it() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let checked = layers::check(&src, LAYERS, &[]).unwrap_or_else(|e| panic!("{e}"));
    assert!(checked > 100, "checked only {checked} files");
}

#[test]
fn no_file_but_the_two_linkers_makes_a_linker() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let allowed = [src.join("dock/linker.rs"), src.join("dock/module.rs")];
    let mut makers = Vec::new();
    let files = layers::rust_files(&src);
    let seen = files.len();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        // Spelled in pieces so this file does not match itself.
        let makes = ["new(", "<", "default("]
            .iter()
            .any(|m| text.contains(&format!("Linker::{m}")));
        if makes && !allowed.contains(&path) {
            makers.push(path.display().to_string());
        }
    }
    assert!(seen > 50, "walked only {seen} files");
    assert!(
        makers.is_empty(),
        "a Linker is made outside dock/: {makers:?}"
    );
    for path in allowed {
        let text = std::fs::read_to_string(&path).unwrap();
        let made = text.contains(&format!("Linker::{}", "new("));
        assert!(made, "{} no longer links", path.display());
    }
}

#[test]
fn no_code_in_the_core_names_a_service() {
    // The services' words, spelled in pieces so this file does not match
    // itself; comments may say who uses what, code may not.
    let words: Vec<String> = [["ag", "ent"], ["tool", "kit"], ["fab", "ric"], ["na", "ts"]]
        .iter()
        .map(|w| w.concat())
        .collect();
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = layers::rust_files(&src);
    assert!(files.len() > 100, "walked only {} files", files.len());
    let mut named = Vec::new();
    for path in files {
        let rel = path.strip_prefix(&src).unwrap().display().to_string();
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            let lower = line.to_lowercase();
            let idents = lower.split(|c: char| !c.is_ascii_alphanumeric());
            if idents
                .flat_map(|ident| ident.split('_'))
                .any(|part| words.iter().any(|w| part == w || part == format!("{w}s")))
            {
                named.push(format!("{rel}:{}: {}", n + 1, line.trim()));
            }
        }
    }
    assert!(
        named.is_empty(),
        "a service named in the core's code: {named:#?}"
    );
}
