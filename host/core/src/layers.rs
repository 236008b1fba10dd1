//! The crate's layering, checked: every top-level module is placed in
//! [`LAYERS`], and each may import only from the modules before it. The
//! caps, the stores and the command types sit under the engine; the engine
//! reaches down through the `Launcher` the `launch` primitive holds, so no
//! import runs back up. The services (toolkits, the agent, the fabric) are
//! crates above this one, each holding an engine; the engine names none.

/// Lowest first.
const LAYERS: &[&str] = &[
    "flavor", "policy", "limits", "environ", "preopen", "pipes", "files", "seal", "compiler",
    "artifact", "embedded", "storage", "cadence", "egress", "grants", "commands", "tier", "cap",
    "state", "dock", "engine", "instance", "serve", "kernel", "identity", "child", "layers",
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
fn every_method_of_the_engine_is_written_in_its_folder() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let folder = src.join("engine");
    // The engine and its commands handle, however their path is written.
    let handles = ["Engine", "Commands"];
    let (mut outside, mut inside) = (Vec::new(), [0; 2]);
    for path in layers::rust_files(&src) {
        let text = std::fs::read_to_string(&path).unwrap();
        for line in text.lines() {
            let Some(i) = inherent_impl_of(line).and_then(|t| handles.iter().position(|h| *h == t))
            else {
                continue;
            };
            match path.starts_with(&folder) {
                true => inside[i] += 1,
                false => outside.push(format!("{}: {}", path.display(), line.trim())),
            }
        }
    }
    assert!(
        inside[0] > 8 && inside[1] > 4,
        "found only {inside:?} impl blocks in engine/"
    );
    assert!(
        outside.is_empty(),
        "methods of Engine or Commands written outside engine/: {outside:?}"
    );
}

/// The type an inherent `impl` line opens (`impl<'a> crate::engine::Commands<'a> {`
/// gives `Commands`); `None` for any other line or a trait's impl.
fn inherent_impl_of(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix("impl")?;
    let rest = rest.strip_suffix('{')?.trim();
    if rest.contains(" for ") || !(line.trim_start()[4..].starts_with([' ', '<'])) {
        return None;
    }
    // Past the impl's own generics, if any.
    let rest = match rest.strip_prefix('<') {
        Some(generics) => generics.split_once('>')?.1.trim(),
        None => rest,
    };
    let path = rest.split('<').next()?.trim();
    path.rsplit("::").next()
}

#[test]
fn an_inherent_impl_is_found_however_its_type_is_written() {
    assert_eq!(inherent_impl_of("impl Engine {"), Some("Engine"));
    assert_eq!(
        inherent_impl_of("impl crate::engine::Commands<'_> {"),
        Some("Commands")
    );
    assert_eq!(
        inherent_impl_of("impl<'e> Commands<'e> {"),
        Some("Commands")
    );
    assert_eq!(inherent_impl_of("impl Launcher for Engine {"), None);
    assert_eq!(inherent_impl_of("let implied = Engine {"), None);
    assert_eq!(inherent_impl_of("implement Engine {"), None);
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

/// Every file a cap is written in besides its tests and docs, `{w}` for
/// its word: its WIT (the guest-facing interface with its types, the host
/// primitive, a line in each package's worlds), its broker, its unit's
/// folder, the unit list and its policy word. `docs/embedding.md`
/// ("Adding a cap") lists the same files.
const CAP_FILES: [&str; 12] = [
    "guests/{w}-broker/Cargo.toml",
    "guests/{w}-broker/src/lib.rs",
    "host/core/src/cap/mod.rs",
    "host/core/src/cap/{w}/host.rs",
    "host/core/src/cap/{w}/mod.rs",
    "host/core/src/cap/{w}/relay.rs",
    "host/core/src/cap/{w}/storage.rs",
    "host/core/src/policy/mod.rs",
    "wit/host/worlds.wit",
    "wit/host/{w}.wit",
    "wit/worlds.wit",
    "wit/{w}.wit",
];

/// Whether the code of `text` (comments and a Rust file's inline test
/// module left out) has `word` as a whole identifier, or a whole piece of
/// one split at `_`, `-`, `:`, `/`, `.` and the like.
fn code_names(text: &str, word: &str, comment: &str, rust: bool) -> bool {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    // The test module written in the file, to its end; a test module in a
    // file of its own (`#[cfg(test)] mod tests;`) ends nothing here.
    let tests_start = lines.windows(2).position(|pair| {
        rust && pair[0].starts_with("#[cfg(test)]")
            && pair[1].starts_with("mod ")
            && pair[1].ends_with('{')
    });
    lines[..tests_start.unwrap_or(lines.len())]
        .iter()
        .filter(|line| !line.starts_with(comment))
        .flat_map(|line| line.split(|c: char| !c.is_ascii_alphanumeric()))
        .any(|piece| piece.eq_ignore_ascii_case(word))
}

#[test]
fn the_fixture_cap_is_written_in_its_folder_the_unit_list_its_word_its_wit_and_its_broker() {
    // `queue` is the fixture: it has storage, a relay half, calls that
    // wait and its own error type, so every kind of file a cap may need.
    // Spelled in pieces so this file does not name it.
    let word = ["que", "ue"].concat();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut walked = 0;
    let mut written_in: Vec<String> = ["wit", "guests", "host/core/src"]
        .into_iter()
        .flat_map(|dir| layers::files(&root.join(dir), &["rs", "wit", "toml"]))
        .filter_map(|path| {
            let rel = path
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            // A test program or a test file of the core's own is a test,
            // not where the cap is written.
            if rel.starts_with("guests/test-programs/") || rel.ends_with("/tests.rs") {
                return None;
            }
            walked += 1;
            let (comment, rust) = if rel.ends_with(".toml") {
                ("#", false)
            } else {
                ("//", rel.ends_with(".rs"))
            };
            let text = std::fs::read_to_string(&path).unwrap();
            code_names(&text, &word, comment, rust).then_some(rel)
        })
        .collect();
    written_in.sort();
    assert!(walked > 200, "walked only {walked} files");
    let mut listed: Vec<String> = CAP_FILES.map(|f| f.replace("{w}", &word)).to_vec();
    listed.sort();
    assert_eq!(
        written_in, listed,
        "the files the fixture cap is written in"
    );
    let host_code_outside: Vec<&String> = listed
        .iter()
        .filter(|f| f.starts_with("host/") && !f.contains(&format!("/cap/{word}/")))
        .collect();
    assert_eq!(
        host_code_outside,
        ["host/core/src/cap/mod.rs", "host/core/src/policy/mod.rs"],
        "host code outside the folder: the unit list and the word only"
    );
    let guide = std::fs::read_to_string(root.join("docs/embedding.md")).unwrap();
    let section = guide
        .split("\n## ")
        .find(|s| s.starts_with("Adding a cap"))
        .expect("docs/embedding.md has an \"Adding a cap\" section");
    for file in &listed {
        assert!(
            section.contains(&format!("`{file}`")),
            "\"Adding a cap\" does not list `{file}`"
        );
    }
}

#[test]
fn a_cap_named_after_a_test_module_declaration_is_still_seen_and_one_in_a_comment_is_not() {
    let after_declaration = "#[cfg(test)]\nmod tests;\n\npub mod word_here { }\n";
    assert!(code_names(after_declaration, "word", "//", true));
    let in_inline_tests = "fn a() {}\n#[cfg(test)]\nmod tests {\n    use x::word;\n}\n";
    assert!(!code_names(in_inline_tests, "word", "//", true));
    assert!(!code_names("// the word\nfn a() {}\n", "word", "//", true));
    assert!(!code_names("fn words() {}\n", "word", "//", true));
}
