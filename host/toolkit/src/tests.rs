//! Every verify rule with a manifest that fails it and one that passes,
//! signing and a manifest edited after it, skills that try to leave
//! `skills/`, and discovery's root rules.

use super::*;
use base64::Engine as _;
use std::path::Path;
use workbooks::commands::Registry;

/// A manifest that passes every check (discovery-only, first-party).
const GOOD: &str = "#+TITLE: Text tools\n#+TOOLKIT: text\n#+VERSION: 0.1.0\n#+STATUS: stable\n#+TAGLINE: When you need to reshape text.\n\n* Text tools :toolkit:\n:PROPERTIES:\n:ID: text\n:STATUS: stable\n:END:\nRecipes for text.\n";

/// `GOOD` with its keyword block extended by `extra` lines.
fn with(extra: &str) -> String {
    GOOD.replacen("\n\n*", &format!("\n{extra}\n\n*"), 1)
}

/// A root holding toolkit `id` with `manifest` and `skills`.
fn root_with(id: &str, manifest: &str, skills: &[(&str, &str)]) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    add(root.path(), id, manifest, skills);
    root
}

fn add(root: &Path, id: &str, manifest: &str, skills: &[(&str, &str)]) {
    let dir = root.join(id);
    std::fs::create_dir_all(dir.join("skills")).unwrap();
    std::fs::write(dir.join("manifest.org"), manifest).unwrap();
    for (name, text) in skills {
        std::fs::write(dir.join("skills").join(format!("{name}.org")), text).unwrap();
    }
}

fn report(manifest: &str) -> Report {
    report_with(manifest, &[])
}

/// The report of toolkit `text` with `manifest` and the extra `files`
/// (paths inside its folder).
fn report_with(manifest: &str, files: &[(&str, &str)]) -> Report {
    let root = root_with("text", manifest, &[("overview", "* Overview")]);
    for (path, text) in files {
        std::fs::write(root.path().join("text").join(path), text).unwrap();
    }
    let home = tempfile::tempdir().unwrap();
    let kits = Toolkits::new(Some(root.path().to_path_buf()));
    verify(&kits.get("text").unwrap(), &Registry::new(home.path()))
}

/// The failing checks' texts.
fn failed(manifest: &str) -> Vec<String> {
    failures(report(manifest))
}

fn failures(report: Report) -> Vec<String> {
    report
        .checks
        .into_iter()
        .filter(|c| !c.ok)
        .map(|c| c.what)
        .collect()
}

#[test]
fn a_complete_discovery_only_manifest_passes_every_check() {
    let r = report(GOOD);
    assert!(r.ok(), "{}", r.text());
    assert!(
        r.text()
            .contains("✓ exec: none declared (discovery-only toolkit)")
    );
    let grant = r.grant.unwrap();
    assert_eq!(grant.profiles, ["compute"]);
    // Nobody vouched for it: one tier stronger.
    assert_eq!(grant.tier, workbooks::commands::Tier::OsProcess);
}

#[test]
fn each_structural_rule_fails_on_the_manifest_that_breaks_it() {
    let no_tagline = GOOD.replace("#+TAGLINE: When you need to reshape text.\n", "");
    assert_eq!(failed(&no_tagline), ["#+TAGLINE set"]);
    let wrong_id = GOOD.replace("#+TOOLKIT: text", "#+TOOLKIT: other");
    assert_eq!(
        failed(&wrong_id),
        [
            "#+TOOLKIT `other` is the folder's name `text`",
            ":ID: `text` mirrors #+TOOLKIT `other`"
        ]
    );
    let bad_status = GOOD.replace(":STATUS: stable", ":STATUS: experimental");
    assert_eq!(
        failed(&bad_status),
        [":STATUS: `experimental` mirrors #+STATUS `stable`"]
    );
    let no_node = GOOD.replace(" :toolkit:", "");
    assert_eq!(
        failed(&no_node),
        [
            "a :toolkit: node",
            ":ID: in the :toolkit: drawer",
            ":STATUS: in the :toolkit: drawer"
        ]
    );
    let odd_status = GOOD.replace("stable", "beta");
    assert_eq!(
        failed(&odd_status),
        ["#+STATUS `beta` is stable, experimental or deprecated"]
    );
    let root = root_with("text", GOOD, &[]);
    let home = tempfile::tempdir().unwrap();
    let kits = Toolkits::new(Some(root.path().to_path_buf()));
    let r = verify(&kits.get("text").unwrap(), &Registry::new(home.path()));
    assert_eq!(
        r.checks
            .iter()
            .filter(|c| !c.ok)
            .map(|c| c.what.as_str())
            .collect::<Vec<_>>(),
        ["skills/overview.org present"]
    );
}

#[test]
fn each_exec_shape_is_held_to_its_contract() {
    assert_eq!(
        failed(&with("#+EXEC: shell")),
        ["exec: unknown mode `shell`"]
    );
    assert_eq!(
        failed(&with("#+EXEC: command")),
        ["exec command: #+CLI_BIN names the command"]
    );
    assert_eq!(
        failed(&with("#+EXEC: command\n#+CLI_BIN: jq")),
        ["exec command: CLI_BIN `jq` is a reserved built-in name"]
    );
    assert_eq!(
        failed(&with("#+EXEC: command\n#+CLI_BIN: rev2")),
        [
            "exec command: `rev2` is registered, has a buildable #+BUILD_SRC (crate: or path:) or a #+COMPOSE file"
        ]
    );
    assert!(
        failed(&with(
            "#+EXEC: command\n#+CLI_BIN: rev2\n#+BUILD_SRC: path:build"
        ))
        .is_empty()
    );
    assert_eq!(
        failed(&with(
            "#+EXEC: command\n#+CLI_BIN: rev2\n#+BUILD_SRC: script:build.sh"
        )),
        [
            "#+BUILD_SRC script: is removed: native build scripts are banned",
            "exec command: `rev2` is registered, has a buildable #+BUILD_SRC (crate: or path:) or a #+COMPOSE file"
        ]
    );
    assert_eq!(
        failed(&with(
            "#+EXEC: component\n#+BUILD_SRC: wasm:https://example.org/c.wasm"
        )),
        ["#+SHA256 pins the fetched bytes (64 hex digits)"]
    );
    let pinned = format!(
        "#+EXEC: component\n#+BUILD_SRC: wasm:https://example.org/c.wasm\n#+SHA256: {}",
        "ab".repeat(32)
    );
    assert!(failed(&with(&pinned)).is_empty());
    assert_eq!(
        failed(&with(
            "#+EXEC: command\n#+CLI_BIN: rev2\n#+BUILD_SRC: path:b\n#+ARG_MODE: stdin2"
        )),
        ["#+ARG_MODE `stdin2` is argv or stdin1"]
    );
    assert!(failed(&with("#+EXEC: posix\n#+CLI_BIN: ffmpeg"))[0].starts_with("exec posix:"));
    assert!(failed(&with("#+EXEC: task")).is_empty());
    assert_eq!(
        failed(&with("#+EXEC: kernel")),
        ["exec kernel: #+CLI_BIN names the kernel"]
    );
}

#[test]
fn an_exec_kernel_toolkit_passes_only_once_its_kernel_is_registered() {
    let manifest = with("#+EXEC: kernel\n#+CLI_BIN: flip");
    let root = root_with("text", &manifest, &[("overview", "* Overview")]);
    let home = tempfile::tempdir().unwrap();
    let kits = Toolkits::new(Some(root.path().to_path_buf()));
    let registry = Registry::new(home.path());
    let failing = |r: &Registry| failures(verify(&kits.get("text").unwrap(), r));
    assert_eq!(
        failing(&registry),
        ["exec kernel: `flip` is registered as a kernel (wbx kernel register flip FILE)"]
    );
    // A command of that name does not count: it must be a kernel.
    let kernel = wat::parse_str(
        r#"(module (memory (export "memory") 1) (func (export "process") (param i32) (result i32) (local.get 0)))"#,
    )
    .unwrap();
    registry
        .register(
            "flip",
            kernel.clone(),
            workbooks::commands::ArgMode::Argv,
            workbooks::commands::Tier::Instance,
        )
        .unwrap();
    assert_eq!(failing(&registry).len(), 1);
    Registry::kernels(home.path())
        .register(
            "flip",
            kernel,
            workbooks::commands::ArgMode::Argv,
            workbooks::commands::Tier::Instance,
        )
        .unwrap();
    assert!(failing(&registry).is_empty());
}

#[test]
fn caps_must_be_grantable_and_the_narrowest_profiles_are_named() {
    assert_eq!(
        failed(&with("#+CAPS: vfs teleport")),
        ["cap `teleport` is not one any profile grants"]
    );
    let r = report(&with("#+CAPS: kv queue"));
    assert!(r.ok(), "{}", r.text());
    assert_eq!(r.grant.as_ref().unwrap().profiles, ["minimal"]);
    let r = report(&with("#+CAPS: kv llm parallel"));
    let grant = r.grant.unwrap();
    assert_eq!(grant.profiles, ["posix"]);
    assert_eq!(grant.caps, ["kv", "llm", "parallel"]);
}

#[test]
fn a_stub_must_name_a_deny_broker_of_a_cap_the_toolkit_does_not_declare() {
    let r = report(&with("#+CAPS: kv\n#+STUB: wasi:sockets wasi:http"));
    assert!(r.ok(), "{}", r.text());
    assert_eq!(
        r.grant.as_ref().unwrap().stubs,
        ["wasi:sockets", "wasi:http"]
    );
    assert!(
        r.text()
            .contains("stubs: wasi:sockets wasi:http (every call refused")
    );
    assert_eq!(
        failed(&with("#+CAPS: kv\n#+STUB: wasi:keyboard")),
        ["#+STUB: unknown stub `wasi:keyboard` (deny brokers exist for: wasi:sockets, wasi:http)"]
    );
    assert_eq!(
        failed(&with("#+CAPS: net\n#+STUB: wasi:sockets")),
        ["#+STUB: wasi:sockets is served by the host here: the toolkit declares cap `net`"]
    );
}

#[test]
fn a_third_party_manifest_needs_its_authors_signature_and_an_edit_breaks_it() {
    let third = with("#+TRUST: third-party");
    assert_eq!(
        failed(&third),
        [
            "third-party: #+AUTHOR_DID is an Ed25519 did:key",
            "third-party: #+SIGNATURE verifies over the canonical manifest"
        ]
    );
    let root = root_with("text", &third, &[("overview", "* Overview")]);
    let kits = Toolkits::new(Some(root.path().to_path_buf()));
    let keyring = workbooks::Keyring::new(None, Default::default());
    let seed = base64::engine::general_purpose::STANDARD.encode([7u8; 32]);
    let author = Identity::of_tenant(&keyring, "t", Some(&seed)).unwrap();
    sign(&kits.get("text").unwrap(), &author).unwrap();
    let home = tempfile::tempdir().unwrap();
    let registry = Registry::new(home.path());
    let signed = kits.get("text").unwrap();
    let r = verify(&signed, &registry);
    assert!(r.ok(), "{}", r.text());
    assert_eq!(r.grant.unwrap().tier, workbooks::commands::Tier::OsProcess);
    assert_eq!(signed.manifest.kw("AUTHOR_DID"), Some(author.did.as_str()));
    // Signing again replaces, never stacks, the two lines.
    sign(&signed, &author).unwrap();
    let text = std::fs::read_to_string(root.path().join("text/manifest.org")).unwrap();
    assert_eq!(text.matches("#+SIGNATURE:").count(), 1);
    assert_eq!(text.matches("#+AUTHOR_DID:").count(), 1);
    // One word of the body changed after signing.
    let path = root.path().join("text/manifest.org");
    std::fs::write(
        &path,
        text.replace("Recipes for text.", "Recipes for texts."),
    )
    .unwrap();
    assert_eq!(
        failed(&std::fs::read_to_string(&path).unwrap()),
        ["third-party: #+SIGNATURE verifies over the canonical manifest"]
    );
    // Another author's DID over the same signature.
    let other = Identity::of_tenant(
        &keyring,
        "u",
        Some(&base64::engine::general_purpose::STANDARD.encode([8u8; 32])),
    )
    .unwrap();
    let swapped = text.replace(&author.did, &other.did);
    assert_eq!(
        failed(&swapped),
        ["third-party: #+SIGNATURE verifies over the canonical manifest"]
    );
    assert_eq!(
        sign(&kits.get("text").unwrap(), &author).map(|_| ()),
        Ok(())
    );
    // A manifest that claims nothing is first-party only once signed by
    // a signer the operator trusts.
    let first = root_with("text", GOOD, &[]);
    let kits = Toolkits::new(Some(first.path().to_path_buf()));
    assert_eq!(
        Standing::of(&kits.get("text").unwrap()),
        Standing::Unattested
    );
    sign(&kits.get("text").unwrap(), &author).unwrap();
    assert_eq!(
        Standing::of(&kits.get("text").unwrap()),
        Standing::Unattested
    );
    let trusting = kits.clone().vouched(Vouch {
        roots: Vec::new(),
        signers: vec![author.did.clone()],
    });
    assert_eq!(
        Standing::of(&trusting.get("text").unwrap()),
        Standing::FirstParty(format!("signed by the trusted signer {}", author.did))
    );
    // Edited after signing: nobody vouches for it any more.
    let manifest = first.path().join("text/manifest.org");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(&manifest, text.replace("reshape", "reshape freely")).unwrap();
    assert_eq!(
        Standing::of(&trusting.get("text").unwrap()),
        Standing::Unattested
    );
}

#[test]
fn silence_or_a_first_party_claim_is_unattested_until_the_operator_vouches() {
    let root = root_with("text", GOOD, &[("overview", "* Overview")]);
    let claim = root_with(
        "text",
        &GOOD.replace(
            "#+STATUS: stable\n",
            "#+STATUS: stable\n#+TRUST: first-party\n",
        ),
        &[("overview", "* Overview")],
    );
    let home = tempfile::tempdir().unwrap();
    for r in [&root, &claim] {
        let kits = Toolkits::new(Some(r.path().to_path_buf()));
        let report = verify(&kits.get("text").unwrap(), &Registry::new(home.path()));
        let grant = report.grant.clone().unwrap();
        assert_eq!(
            (grant.trust.as_str(), grant.tier),
            ("unattested", workbooks::commands::Tier::OsProcess)
        );
        assert!(
            report.text().contains("trust unattested"),
            "{}",
            report.text()
        );
        let vouched = kits.vouched(Vouch {
            roots: vec![r.path().to_path_buf()],
            signers: Vec::new(),
        });
        let grant = verify(&vouched.get("text").unwrap(), &Registry::new(home.path()))
            .grant
            .unwrap();
        assert_eq!(
            (grant.trust.as_str(), grant.tier),
            ("first-party", workbooks::commands::Tier::Instance)
        );
    }
}

#[test]
fn a_skill_is_read_only_from_inside_skills() {
    let root = root_with("text", GOOD, &[("overview", "* Overview\nstart here")]);
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.org"), "host secret").unwrap();
    let skills = root.path().join("text/skills");
    std::os::unix::fs::symlink(outside.path().join("secret.org"), skills.join("leak.org")).unwrap();
    std::fs::write(root.path().join("text/notes.org"), "beside skills").unwrap();
    let kits = Toolkits::new(Some(root.path().to_path_buf()));
    let tk = kits.get("text").unwrap();
    assert_eq!(tk.skill("overview").unwrap(), "* Overview\nstart here");
    for bad in ["leak", "../notes", "..", "a/b", "", "x\0y"] {
        let got = tk.skill(bad);
        assert!(
            matches!(got, Err(ToolkitError::BadSkill(_))),
            "{bad:?}: {got:?}"
        );
    }
    assert_eq!(
        tk.skill("missing"),
        Err(ToolkitError::NoSkill {
            toolkit: "text".into(),
            skill: "missing".into()
        })
    );
    for bad in ["../text", "text/skills", ".", ".."] {
        assert!(
            matches!(kits.get(bad), Err(ToolkitError::Unknown(_))),
            "{bad}"
        );
    }
}

#[test]
fn discovery_takes_the_env_root_only_when_it_exists_and_drops_unknown_names() {
    let cwd = tempfile::tempdir().unwrap();
    assert_eq!(default_root(None, cwd.path()), None);
    std::fs::create_dir(cwd.path().join("toolkits")).unwrap();
    assert_eq!(
        default_root(Some("/no/such/dir"), cwd.path()),
        Some(cwd.path().join("toolkits"))
    );
    let env = tempfile::tempdir().unwrap();
    assert_eq!(
        default_root(env.path().to_str(), cwd.path()),
        Some(env.path().to_path_buf())
    );
    let root = root_with("text", GOOD, &[("overview", "o")]);
    let many: Vec<(String, &str)> = (0..10).map(|i| (format!("s{i}"), "x")).collect();
    let many: Vec<(&str, &str)> = many.iter().map(|(n, t)| (n.as_str(), *t)).collect();
    add(root.path(), "big", &GOOD.replace("text", "big"), &many);
    let kits = Toolkits::new(Some(root.path().to_path_buf()));
    let names = vec!["big".to_string(), "nope".to_string(), "text".to_string()];
    let ids: Vec<String> = kits.for_agent(&names).into_iter().map(|t| t.id).collect();
    assert_eq!(ids, ["big", "text"]);
    let text = kits.injection_text(&names);
    assert_eq!(text.lines().count(), 5, "{text}");
    assert!(
        text.contains("\n  skills: s0, s1, s2, s3, s4, s5, s6, s7\n"),
        "{text}"
    );
    assert_eq!(kits.injection_text(&["nope".to_string()]), "");
    assert_eq!(search(&kits.list(), "RESHAPE"), ["big", "text"]);
}

/// The failing checks of a toolkit whose `#+COMPOSE` names `file`, with
/// `m.wac` in its folder holding `wac` when given.
fn compose_failures(file: &str, wac: Option<&str>) -> Vec<String> {
    let manifest = with(&format!("#+COMPOSE: {file}"));
    let files: Vec<(&str, &str)> = wac.map(|w| ("m.wac", w)).into_iter().collect();
    failures(report_with(&manifest, &files))
}

#[test]
fn a_compose_file_must_be_wac_strictly_inside_the_toolkit() {
    let wac = "package toolkit:text;\nlet a = new toolkit:other {};\nexport a...;\n";
    assert_eq!(compose_failures("m.wac", Some(wac)), Vec::<String>::new());
    let bad = compose_failures("m.wac", Some("let = ;"));
    assert_eq!(bad.len(), 1, "{bad:?}");
    assert!(bad[0].starts_with("#+COMPOSE `m.wac`: "), "{bad:?}");
    let outside = compose_failures("../../etc/passwd", None);
    assert!(
        outside[0].contains("must be a file inside the toolkit"),
        "{outside:?}"
    );
    let missing = compose_failures("gone.wac", None);
    assert!(
        missing[0].starts_with("#+COMPOSE `gone.wac`: "),
        "{missing:?}"
    );
}

#[test]
fn a_signed_path_source_must_be_pinned_for_its_signature_to_cover_it() {
    let pin_check = "signed: #+SHA256 pins the path: source, so the signature covers it";
    let unpinned = failed(&with(
        "#+TRUST: third-party\n#+EXEC: command\n#+CLI_BIN: tool\n#+BUILD_SRC: path:src",
    ));
    assert!(unpinned.iter().any(|c| c == pin_check), "{unpinned:?}");
    let pinned = failed(&with(&format!(
        "#+TRUST: third-party\n#+EXEC: command\n#+CLI_BIN: tool\n#+BUILD_SRC: path:src\n#+SHA256: {}",
        "ab".repeat(32)
    )));
    assert!(!pinned.iter().any(|c| c == pin_check), "{pinned:?}");
    // Signed by anyone (a signer the operator trusts makes it first-party),
    // the same: a source dropped beside a signed manifest is not what was
    // signed.
    let signed = failed(&with(
        "#+EXEC: command\n#+CLI_BIN: tool\n#+BUILD_SRC: path:src\n#+AUTHOR_DID: did:key:z6Mk\n#+SIGNATURE: c2ln",
    ));
    assert!(signed.iter().any(|c| c == pin_check), "{signed:?}");
    // An unsigned path: source needs no pin (first-party only under a
    // vouched root, else os_process).
    let first = failed(&with(
        "#+EXEC: command\n#+CLI_BIN: tool\n#+BUILD_SRC: path:src",
    ));
    assert!(!first.iter().any(|c| c == pin_check), "{first:?}");
}
