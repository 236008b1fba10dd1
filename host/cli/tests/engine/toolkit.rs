//! Toolkits through the CLI and the agent: the shipped ones verify, an
//! edit after signing is caught, `run` is refused, the tenant's did:key is
//! stable and matches the published vector, and an agent's toolkits reach
//! its prompt while its `wb` tool reads their skills.

use crate::agent::{builder_for, quick_bounds, task, tool_answers};
use crate::model_server::{self, text, tool_calls};
use base64::Engine as _;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;
use workbooks_agent::AgentOptions;

fn shipped() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../toolkits")
}

fn wbx(home: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_wbx"));
    cmd.arg("--home")
        .arg(home)
        .args(args)
        .env_remove("WB_SIGNING_KEY");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn out(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn every_shipped_toolkit_verifies_and_the_list_shows_them_all() {
    let home = tempfile::tempdir().unwrap();
    let root = shipped();
    let root = root.to_str().unwrap();
    let listed = wbx(
        home.path(),
        &["toolkit", "--root", root, "list", "--json"],
        &[],
    );
    let listed: Vec<Value> = serde_json::from_slice(&listed.stdout).unwrap();
    let ids: Vec<&str> = listed.iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "c-crc32",
            "field-notes",
            "js-wordfreq",
            "math",
            "math-cli",
            "math-ops",
            "rot13",
            "tally",
            "text-recipes",
            "wat-hello"
        ]
    );
    for id in ids {
        let o = wbx(home.path(), &["toolkit", "--root", root, "verify", id], &[]);
        assert!(o.status.success(), "{id}:\n{}", out(&o));
        assert!(!out(&o).contains('✗'), "{}", out(&o));
    }
    let o = wbx(
        home.path(),
        &[
            "toolkit",
            "--root",
            root,
            "show",
            "text-recipes",
            "json-fields",
        ],
        &[],
    );
    assert!(out(&o).contains("jq -r"), "{}", out(&o));
    let o = wbx(
        home.path(),
        &["toolkit", "--root", root, "search", "dated", "notes"],
        &[],
    );
    assert_eq!(out(&o), "field-notes\n");
}

#[test]
fn a_signed_manifest_edited_afterwards_fails_verify_and_run_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("field-notes");
    std::fs::create_dir_all(dir.join("skills")).unwrap();
    for f in ["manifest.org", "skills/overview.org"] {
        std::fs::copy(shipped().join("field-notes").join(f), dir.join(f)).unwrap();
    }
    let manifest = dir.join("manifest.org");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        text.replace("#+STATUS: experimental", "#+STATUS: stable")
            .replace(":STATUS: experimental", ":STATUS: stable"),
    )
    .unwrap();
    let r = root.path().to_str().unwrap();
    let o = wbx(
        home.path(),
        &["toolkit", "--root", r, "verify", "field-notes", "--json"],
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let failed: Vec<&str> = report["report"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["ok"] == false)
        .map(|c| c["what"].as_str().unwrap())
        .collect();
    assert_eq!(
        failed,
        ["third-party: #+SIGNATURE verifies over the canonical manifest"]
    );
    // Signed again by this home's tenant key, it holds.
    let o = wbx(
        home.path(),
        &["toolkit", "--root", r, "sign", "field-notes"],
        &[],
    );
    assert!(o.status.success(), "{o:?}");
    let o = wbx(
        home.path(),
        &["toolkit", "--root", r, "verify", "field-notes"],
        &[],
    );
    assert!(o.status.success(), "{}", out(&o));
    let o = wbx(
        home.path(),
        &[
            "toolkit",
            "--root",
            r,
            "run",
            "field-notes",
            "daily",
            "--",
            "x",
        ],
        &[],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("native execution is banned"));
}

#[test]
fn the_tenants_did_key_is_made_once_and_a_pinned_seed_gives_the_published_vector() {
    let home = tempfile::tempdir().unwrap();
    let first = wbx(home.path(), &["identity", "--json"], &[]);
    let again = wbx(home.path(), &["identity", "--json"], &[]);
    let did = |o: &Output| serde_json::from_slice::<Value>(&o.stdout).unwrap()["did"].clone();
    assert_eq!(did(&first), did(&again));
    assert!(did(&first).as_str().unwrap().starts_with("did:key:z6Mk"));
    let other = wbx(
        home.path(),
        &["identity", "--json", "--tenant", "acme"],
        &[],
    );
    assert_ne!(did(&first), did(&other));
    let zero = base64::engine::general_purpose::STANDARD.encode([0u8; 32]);
    let pinned = wbx(
        home.path(),
        &["identity", "--json", "--did-web", "example.org"],
        &[("WB_SIGNING_KEY", &zero)],
    );
    let v: Value = serde_json::from_slice(&pinned.stdout).unwrap();
    assert_eq!(
        v["did"],
        "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp"
    );
    assert_eq!(v["did_web"]["id"], "did:web:example.org");
    let bad = wbx(
        home.path(),
        &["identity"],
        &[("WB_SIGNING_KEY", "c2hvcnQ=")],
    );
    assert_eq!(bad.status.code(), Some(64));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("base64 of a 32-byte seed"));
}

#[tokio::test]
async fn an_agents_toolkits_reach_its_prompt_and_wb_reads_their_skills() {
    let model = model_server::start(vec![
        tool_calls(&[
            (
                "s",
                "wb",
                r#"{"args":"toolkit show text-recipes csv-columns"}"#,
            ),
            (
                "v",
                "wb",
                r#"{"args":"toolkit show text-recipes ../../etc/passwd"}"#,
            ),
        ]),
        text("read"),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let kits = workbooks_toolkit::Toolkits::new(Some(shipped().to_path_buf()));
    let engine = builder_for(home.path(), &model, quick_bounds())
        .build()
        .unwrap();
    let opts = AgentOptions {
        toolkits: vec!["text-recipes".into(), "no-such-kit".into()],
        ..task("count the orders by customer")
    };
    workbooks_agent::Agents::new(engine)
        .with_toolkits(kits)
        .run(opts)
        .await
        .unwrap();
    let seen = model.requests();
    let system = seen[0].messages()[0]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        system.starts_with("You are a careful worker.\n\nToolkits you can use"),
        "{system}"
    );
    assert!(system.contains("\n- text-recipes: Reshape CSV"), "{system}");
    assert!(
        system.contains("\n  skills: csv-columns, json-fields, overview"),
        "{system}"
    );
    assert!(!system.contains("no-such-kit"));
    let said: Vec<String> = tool_answers(&seen[1]).into_iter().map(|(_, t)| t).collect();
    assert!(said[0].contains("uniq -c"), "{}", said[0]);
    assert!(
        said[1].starts_with("wb error: skill `../../etc/passwd` is refused"),
        "{}",
        said[1]
    );
}

#[test]
fn wbx_artifact_signs_a_page_and_verify_names_an_edit() {
    let home = tempfile::tempdir().unwrap();
    let page = home.path().join("roster.html");
    std::fs::write(
        &page,
        "<html><head></head><body>Seven on shift.</body></html>\n",
    )
    .unwrap();
    let p = page.to_str().unwrap();
    let signed = wbx(home.path(), &["artifact", "sign", p], &[]);
    assert!(signed.status.success(), "{signed:?}");
    let check = |expect: i32| {
        let o = wbx(home.path(), &["artifact", "verify", p, "--json"], &[]);
        assert_eq!(o.status.code(), Some(expect), "{o:?}");
        serde_json::from_slice::<Value>(&o.stdout).unwrap()
    };
    let ok = check(0);
    assert_eq!(
        (ok["signature"].clone(), ok["asset_integrity"].clone()),
        (true.into(), true.into())
    );
    let me = wbx(home.path(), &["identity", "--json"], &[]);
    let me: Value = serde_json::from_slice(&me.stdout).unwrap();
    assert_eq!(ok["signer"], me["did"]);
    let text = std::fs::read_to_string(&page).unwrap();
    std::fs::write(&page, text.replace("Seven", "Eight")).unwrap();
    let bad = check(1);
    assert_eq!(
        (bad["signature"].clone(), bad["asset_integrity"].clone()),
        (true.into(), false.into())
    );
    assert_eq!(bad["why"], "the page changed after it was signed");
}

/// A toolkit `id` under `root` whose keyword block ends with `extra`.
fn kit(root: &Path, id: &str, extra: &str) -> PathBuf {
    let dir = root.join(id);
    std::fs::create_dir_all(dir.join("skills")).unwrap();
    std::fs::write(dir.join("skills/overview.org"), "* Overview").unwrap();
    let manifest = format!(
        "#+TITLE: {id}\n#+TOOLKIT: {id}\n#+VERSION: 0.1.0\n#+STATUS: stable\n#+TAGLINE: t\n#+EXEC: command\n{extra}\n\n* {id} :toolkit:\n:PROPERTIES:\n:ID: {id}\n:STATUS: stable\n:END:\n"
    );
    std::fs::write(dir.join("manifest.org"), manifest).unwrap();
    dir
}

#[tokio::test]
async fn toolkit_build_registers_a_pinned_or_prebuilt_artifact_and_refuses_everything_else() {
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let kits = workbooks_toolkit::Toolkits::new(Some(root.path().to_path_buf())).vouched(
        workbooks_toolkit::Vouch {
            roots: vec![root.path().to_path_buf()],
            signers: Vec::new(),
        },
    );
    let engine = crate::common::own_builder(home.path()).build().unwrap();
    let hello = std::fs::read(guest_artifacts::CLI_HELLO).unwrap();
    let pin = workbooks::Artifact::from_bytes(hello.clone())
        .unwrap()
        .sha256_hex();
    let outside = tempfile::tempdir().unwrap();
    let hosted = outside.path().join("hello.wasm");
    std::fs::write(&hosted, &hello).unwrap();

    let dir = kit(
        root.path(),
        "pre",
        "#+CLI_BIN: hello-pre\n#+BUILD_SRC: path:dist",
    );
    std::fs::create_dir(dir.join("dist")).unwrap();
    std::fs::write(dir.join("dist/hello.wasm"), &hello).unwrap();
    kit(
        root.path(),
        "pinned",
        &format!(
            "#+CLI_BIN: hello-pinned\n#+BUILD_SRC: wasm:file://{}\n#+SHA256: {pin}",
            hosted.display()
        ),
    );
    kit(
        root.path(),
        "badpin",
        &format!(
            "#+CLI_BIN: hello-bad\n#+BUILD_SRC: wasm:file://{}\n#+SHA256: {}",
            hosted.display(),
            "0".repeat(64)
        ),
    );
    kit(
        root.path(),
        "nopin",
        &format!(
            "#+CLI_BIN: hello-nopin\n#+BUILD_SRC: wasm:file://{}",
            hosted.display()
        ),
    );
    // Reserved: refused before the (unreachable) fetch is tried.
    kit(
        root.path(),
        "reserved",
        &format!("#+CLI_BIN: jq\n#+BUILD_SRC: wasm:http://127.0.0.1:9/x.wasm\n#+SHA256: {pin}"),
    );
    let escape = kit(
        root.path(),
        "escape",
        "#+CLI_BIN: hello-esc\n#+BUILD_SRC: path:dist",
    );
    std::os::unix::fs::symlink(outside.path(), escape.join("dist")).unwrap();
    kit(
        root.path(),
        "dotdot",
        "#+CLI_BIN: hello-dd\n#+BUILD_SRC: path:../pre/dist",
    );
    kit(
        root.path(),
        "crate",
        "#+CLI_BIN: rg2\n#+BUILD_SRC: crate:ripgrep",
    );
    kit(
        root.path(),
        "clang",
        "#+CLI_BIN: c2\n#+BUILD_LANG: c\n#+BUILD_SRC: path:src",
    );
    kit(
        root.path(),
        "script",
        "#+CLI_BIN: s2\n#+BUILD_SRC: script:build.sh",
    );
    kit(
        root.path(),
        "unsigned",
        &format!(
            "#+TRUST: third-party\n#+CLI_BIN: hello-3p\n#+BUILD_SRC: wasm:file://{}\n#+SHA256: {pin}",
            hosted.display()
        ),
    );

    let build = |id: &str| {
        let tk = kits.get(id).unwrap();
        let engine = engine.clone();
        async move {
            workbooks_toolkit::Builds::new(engine.clone())
                .toolkit(&tk, false)
                .await
        }
    };
    let built = build("pre").await.unwrap();
    assert_eq!(
        (built.name.as_str(), built.sha256.as_str()),
        ("hello-pre", pin.as_str())
    );
    assert_eq!(build("pinned").await.unwrap().sha256, pin);
    let said = |r: Result<workbooks::commands::Entry, workbooks_toolkit::BuildError>| {
        r.unwrap_err().to_string()
    };
    assert!(
        said(build("badpin").await).starts_with("artifact_integrity: catalog hello-bad hashes to")
    );
    assert!(said(build("nopin").await).ends_with("needs #+SHA256 (64 hex digits)"));
    assert_eq!(
        said(build("reserved").await),
        "toolkit build: CLI_BIN `jq` is a reserved built-in name; nothing was built"
    );
    assert!(said(build("escape").await).contains("leaves the toolkit's folder"));
    assert!(said(build("dotdot").await).contains("must be a folder inside the toolkit"));
    assert!(
        said(build("crate").await).starts_with("lane_unavailable: the rust compiler component")
    );
    assert_eq!(
        said(build("clang").await),
        "lane_unavailable: the c lane runs the catalog's clang, which is not installed (wbx catalog install clang wasm-ld)"
    );
    assert!(said(build("script").await).contains("script: is removed"));
    assert!(
        said(build("unsigned").await)
            .starts_with("toolkit build: refused, the manifest is not trusted")
    );
    for name in [
        "hello-bad",
        "hello-nopin",
        "hello-esc",
        "hello-dd",
        "rg2",
        "c2",
        "s2",
        "hello-3p",
    ] {
        assert!(
            engine.registry().get(name).unwrap().is_none(),
            "{name} was registered"
        );
    }
    let out = engine
        .commands()
        .run_line("hello-pre", workbooks::LineOptions::default())
        .await
        .unwrap();
    assert_eq!(out.exit, 0, "{}", String::from_utf8_lossy(&out.stderr));
}

#[tokio::test]
async fn a_wat_toolkit_is_compiled_by_the_sandboxed_lane_and_runs() {
    let home = tempfile::tempdir().unwrap();
    let kits = workbooks_toolkit::Toolkits::new(Some(shipped().to_path_buf())).vouched(
        workbooks_toolkit::Vouch {
            roots: vec![shipped()],
            signers: Vec::new(),
        },
    );
    let engine = crate::common::own_builder(home.path()).build().unwrap();
    let tk = kits.get("wat-hello").unwrap();
    let report = workbooks_toolkit::verify(&tk, engine.registry());
    assert!(report.ok(), "{}", report.text());
    let entry = workbooks_toolkit::Builds::new(engine.clone())
        .toolkit(&tk, false)
        .await
        .unwrap();
    assert_eq!(entry.name, "wat-hello");
    let out = engine
        .commands()
        .run_line("wat-hello | upper", workbooks::LineOptions::default())
        .await
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "HELLO FROM WAT\n");

    let root = tempfile::tempdir().unwrap();
    let dir = kit(
        root.path(),
        "broken",
        "#+CLI_BIN: broken\n#+BUILD_LANG: wat\n#+BUILD_SRC: path:src",
    );
    std::fs::create_dir(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/bad.wat"), "(module (func (result i32)))").unwrap();
    let kits = workbooks_toolkit::Toolkits::new(Some(root.path().to_path_buf()));
    let engine = crate::common::own_builder(home.path()).build().unwrap();
    let err = workbooks_toolkit::Builds::new(engine.clone())
        .toolkit(&kits.get("broken").unwrap(), false)
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .starts_with("toolkit build: the wat lane: wat: invalid:"),
        "{err}"
    );
    assert!(engine.registry().get("broken").unwrap().is_none());
}

#[tokio::test]
async fn a_path_source_with_two_artifacts_or_a_wasm_path_that_leaves_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let hello = std::fs::read(guest_artifacts::CLI_HELLO).unwrap();
    let two = kit(root.path(), "two", "#+CLI_BIN: two\n#+BUILD_SRC: path:dist");
    std::fs::create_dir(two.join("dist")).unwrap();
    std::fs::write(two.join("dist/a.wasm"), &hello).unwrap();
    std::fs::write(two.join("dist/b.wasm"), &hello).unwrap();
    let named = kit(
        root.path(),
        "named",
        "#+CLI_BIN: named\n#+BUILD_SRC: path:dist\n#+WASM_PATH: ../../two/dist/a.wasm",
    );
    std::fs::create_dir(named.join("dist")).unwrap();
    let kits = workbooks_toolkit::Toolkits::new(Some(root.path().to_path_buf()));
    let engine = crate::common::own_builder(home.path()).build().unwrap();
    for (id, why) in [
        (
            "two",
            "holds more than one .wasm; name one with #+WASM_PATH",
        ),
        ("named", "#+WASM_PATH must be a file name in the folder"),
    ] {
        let err = workbooks_toolkit::Builds::new(engine.clone())
            .toolkit(&kits.get(id).unwrap(), false)
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), format!("toolkit build: path:dist: {why}"));
        assert!(engine.registry().get(id).unwrap().is_none());
    }
}

#[test]
fn a_toolkit_is_first_party_only_on_the_operators_word() {
    let home = tempfile::tempdir().unwrap();
    let root = shipped();
    let r = root.to_str().unwrap();
    let build = |env: &[(&str, &str)], extra: &[&str]| {
        let mut args = vec!["toolkit", "--root", r, "build", "wat-hello", "--json"];
        args.extend_from_slice(extra);
        crate::common::wbx_env(home.path(), &args, b"", env)
    };
    // wat-hello says nothing of its trust: that is no claim.
    let o = build(&[], &[]);
    assert!(o.status.success(), "{}", crate::common::text(&o.stderr));
    let entry: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(entry["tier"], "os_process");
    // The operator vouches for the root: first-party, and the rebuild
    // says what it would replace until told to.
    let vouched = [("WB_FIRST_PARTY_TOOLKITS", r)];
    let o = build(&vouched, &[]);
    assert!(!o.status.success());
    // Under --json the failure is the JSON error on stdout.
    assert!(
        crate::common::text(&o.stdout).contains("pass --replace"),
        "{}",
        crate::common::text(&o.stdout)
    );
    let o = build(&vouched, &["--replace"]);
    assert!(o.status.success(), "{}", crate::common::text(&o.stderr));
    let entry: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(entry["tier"], "instance");
    // Signed by a signer the operator trusts, its source must be pinned:
    // a source dropped beside the signed manifest is not what was signed.
    let copy = tempfile::tempdir().unwrap();
    let kit = copy.path().join("wat-hello");
    for f in ["manifest.org", "skills/overview.org", "src/hello.wat"] {
        std::fs::create_dir_all(kit.join(f).parent().unwrap()).unwrap();
        std::fs::copy(root.join("wat-hello").join(f), kit.join(f)).unwrap();
    }
    let c = copy.path().to_str().unwrap();
    let o = wbx(
        home.path(),
        &["toolkit", "--root", c, "sign", "wat-hello"],
        &[],
    );
    assert!(o.status.success(), "{o:?}");
    let did = crate::common::text(&wbx(home.path(), &["identity"], &[]).stdout)
        .trim()
        .to_string();
    std::fs::write(kit.join("src/hello.wat"), "(module)").unwrap();
    let o = wbx(
        home.path(),
        &["toolkit", "--root", c, "build", "wat-hello", "--replace"],
        &[("WB_TRUSTED_SIGNERS", &did)],
    );
    assert!(!o.status.success(), "an unpinned signed source was built");
    assert!(
        crate::common::text(&o.stderr).contains("needs #+SHA256"),
        "{}",
        crate::common::text(&o.stderr)
    );
}

/// The `sh` recipes of a toolkit's skills, by skill file.
fn recipes(toolkit: &str) -> Vec<(String, String)> {
    let skills = shipped().join(toolkit).join("skills");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&skills).unwrap().flatten() {
        let text = std::fs::read_to_string(entry.path()).unwrap();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            if line.trim() == "#+begin_src sh" {
                let body: Vec<&str> = lines
                    .by_ref()
                    .take_while(|l| l.trim() != "#+end_src")
                    .collect();
                found.push((
                    entry.file_name().to_string_lossy().into_owned(),
                    body.join("\n"),
                ));
            }
        }
    }
    found.sort();
    found
}

#[test]
fn every_recipe_of_the_stable_text_recipes_toolkit_runs_in_the_shipped_shell() {
    let home = tempfile::tempdir().unwrap();
    let data = tempfile::tempdir().unwrap();
    std::fs::write(
        data.path().join("orders.csv"),
        "id,product,qty\n1,apple,2\n2,pear,1\n3,apple,5\n4,fig,1\n5,apple,1\n6,pear,3\n",
    )
    .unwrap();
    std::fs::write(
        data.path().join("people.json"),
        r#"[{"name":"ada","active":true},{"name":"bob","active":false},{"name":"cy","active":true}]"#,
    )
    .unwrap();
    let dir = format!("{}::.", data.path().display());
    let recipes = recipes("text-recipes");
    assert!(recipes.len() >= 2, "{recipes:?}");
    let want = [
        (
            "csv-columns.org",
            "3 apple\n      2 pear\n      1 product\n      1 fig\n",
        ),
        ("json-fields.org", "ada\ncy\n"),
    ];
    for (skill, line) in &recipes {
        let o = wbx(home.path(), &["run", "--dir", &dir, line], &[]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{skill}: `{line}`: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let (_, expected) = want
            .iter()
            .find(|(s, _)| s == skill)
            .unwrap_or_else(|| panic!("no expected output for {skill}'s recipe"));
        assert!(out(&o).ends_with(expected), "{skill}: {:?}", out(&o));
    }
}
