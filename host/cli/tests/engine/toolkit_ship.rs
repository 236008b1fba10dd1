//! Getting toolkits onto an engine: `import` packages a Claude skill as a
//! discovery-only toolkit that verifies, `audit` names every recipe that
//! would need native execution (and `--fix` defuses the shell ones), and
//! `push` lands only a folder that verifies, never over one unasked.

use crate::common::{text, wbx};
use std::path::Path;

fn tk(home: &Path, root: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["toolkit", "--root", root.to_str().unwrap()];
    all.extend_from_slice(args);
    wbx(home, &all, b"")
}

fn skill(dir: &Path) {
    std::fs::create_dir_all(dir.join("scripts")).unwrap();
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: PDF Tools\ndescription: Pull fields out of PDF exports.\n---\n\n# Usage\n\nFetch and pick:\n\n```bash\ncurl -s https://example.org/a.json | jq .a\nwbx run 'cat a.json | jq .b'\n```\n\n```python\nprint(1)\n```\n",
    )
    .unwrap();
    std::fs::write(dir.join("reference.md"), "## Fields\n\nEvery field.\n").unwrap();
    std::fs::write(dir.join("scripts/extract.py"), "#!/usr/bin/env python3\n").unwrap();
}

#[test]
fn an_imported_skill_verifies_and_the_audit_names_what_would_run_natively() {
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    skill(src.path());
    let o = tk(
        home.path(),
        root.path(),
        &["import", src.path().to_str().unwrap(), "--json"],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let dir = root.path().join("pdf-tools");
    assert_eq!(report["dir"], dir.display().to_string());
    let findings: Vec<String> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            format!(
                "{}:{} {}",
                f["file"].as_str().unwrap(),
                f["line"],
                f["what"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(findings.len(), 3, "{findings:#?}");
    assert!(
        findings[0].starts_with("resources/scripts/extract.py:0 a native script"),
        "{findings:#?}"
    );
    assert!(
        findings[1].starts_with("skills/overview.org:8 `curl` is not a command"),
        "{findings:#?}"
    );
    assert!(
        findings[2].starts_with("skills/overview.org:12 a python block"),
        "{findings:#?}"
    );
    let o = tk(home.path(), root.path(), &["verify", "pdf-tools"]);
    assert!(o.status.success(), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("exec: none declared (discovery-only toolkit)"));
    let o = tk(
        home.path(),
        root.path(),
        &["show", "pdf-tools", "reference"],
    );
    assert!(text(&o.stdout).contains("** Fields"), "{}", text(&o.stdout));

    // --fix defuses the shell block; the script and the python block stay named.
    let d = dir.to_str().unwrap();
    let o = tk(home.path(), root.path(), &["audit", d, "--fix", "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let after: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(after["findings"].as_array().unwrap().len(), 2, "{after}");
    let overview = std::fs::read_to_string(dir.join("skills/overview.org")).unwrap();
    assert!(overview.contains("#+begin_example\ncurl -s"), "{overview}");
    assert!(overview.contains("#+begin_src python"), "{overview}");

    // A second import of the same skill never writes over the first.
    let o = tk(
        home.path(),
        root.path(),
        &["import", src.path().to_str().unwrap()],
    );
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("never writes over"),
        "{}",
        text(&o.stderr)
    );
    assert!(
        std::fs::read_to_string(dir.join("skills/overview.org"))
            .unwrap()
            .contains("#+begin_example")
    );
}

#[test]
fn an_import_holding_a_link_is_refused_and_writes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    skill(src.path());
    std::os::unix::fs::symlink("/etc/passwd", src.path().join("scripts/passwd")).unwrap();
    let o = tk(
        home.path(),
        root.path(),
        &["import", src.path().to_str().unwrap(), "--as", "x"],
    );
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("is a link"), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);
}

fn copy_of_text_recipes(to: &Path) {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../toolkits/text-recipes");
    std::fs::create_dir_all(to.join("skills")).unwrap();
    for f in [
        "manifest.org",
        "skills/overview.org",
        "skills/json-fields.org",
        "skills/csv-columns.org",
    ] {
        std::fs::copy(from.join(f), to.join(f)).unwrap();
    }
}

#[test]
fn push_lands_only_a_folder_that_verifies_and_replaces_only_when_asked() {
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    copy_of_text_recipes(src.path());
    let s = src.path().to_str().unwrap();
    let o = tk(
        home.path(),
        root.path(),
        &["push", "text-recipes", s, "--json"],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let pushed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(pushed["files"], 4);
    assert_eq!(pushed["replaced"], false);
    let o = tk(home.path(), root.path(), &["verify", "text-recipes"]);
    assert!(o.status.success(), "{}", text(&o.stdout));

    let o = tk(home.path(), root.path(), &["push", "text-recipes", s]);
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("--replace"), "{}", text(&o.stderr));
    let o = tk(
        home.path(),
        root.path(),
        &["push", "text-recipes", s, "--replace"],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));

    // Pushed under another id, its #+TOOLKIT does not match: nothing lands.
    let o = tk(home.path(), root.path(), &["push", "other", s]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("does not verify"),
        "{}",
        text(&o.stderr)
    );
    assert!(!root.path().join("other").exists());
    // A link inside: refused, and the version in place stays.
    std::os::unix::fs::symlink("/etc/passwd", src.path().join("skills/leak.org")).unwrap();
    let o = tk(
        home.path(),
        root.path(),
        &["push", "text-recipes", s, "--replace"],
    );
    assert!(!o.status.success());
    assert!(text(&o.stderr).contains("is a link"), "{}", text(&o.stderr));
    assert!(root.path().join("text-recipes/manifest.org").is_file());
    let left: Vec<_> = std::fs::read_dir(root.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["text-recipes"], "no staging folder is left behind");
}

#[test]
fn an_import_past_the_file_cap_is_refused_and_writes_nothing() {
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let src = tempfile::tempdir().unwrap();
    skill(src.path());
    let many = src.path().join("many");
    std::fs::create_dir_all(&many).unwrap();
    for i in 0..workbooks_toolkit::import::IMPORT_MAX_FILES {
        std::fs::write(many.join(i.to_string()), b"").unwrap();
    }
    let o = tk(
        home.path(),
        root.path(),
        &["import", src.path().to_str().unwrap()],
    );
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("past 2000 files"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(std::fs::read_dir(root.path()).unwrap().count(), 0);
}
