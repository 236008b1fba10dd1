//! The agent tools that reach past the sandbox: `web_search` and `wb` for
//! every run; `git`, `publish` and `image` for runs the host grants exec.
//! Each goes only to the operator's place for the run's tenant; the model
//! supplies intent, never an address or a command line, and every attempt
//! to steer it elsewhere (a planted `.git/config`, links in and around the
//! published folders, a path out of the workdir) is tried here.

use crate::agent::{builder_for, quick_bounds, task, tool_answers};
use crate::model_server::{self, Answer, text, tool_calls};
use base64::Engine as _;
use serde_json::{Value, json};
use std::path::Path;
use workbooks_agent::AgentOptions;
use workbooks_agent::{AgentServices, Agents, GitRemote, ImageEndpoint};

/// The start of a PNG, which is all the image tool checks.
const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR-test-image";

fn exec_task(text: &str, tenant: &str) -> AgentOptions {
    AgentOptions {
        tenant: tenant.into(),
        exec: true,
        ..task(text)
    }
}

/// The places of one test: bare remotes and web roots, by tenant.
struct Places {
    dir: tempfile::TempDir,
}

impl Places {
    fn new() -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
        }
    }

    fn remote(&self, tenant: &str) -> std::path::PathBuf {
        self.dir.path().join(format!("git/{tenant}.git"))
    }

    fn site(&self, tenant: &str) -> std::path::PathBuf {
        self.dir.path().join(format!("www/{tenant}/site"))
    }

    fn services(&self) -> AgentServices {
        let root = self.dir.path().display();
        AgentServices {
            git: Some(GitRemote {
                url: format!("{root}/git/{{tenant}}.git"),
                branch: "main".into(),
            }),
            web_root: Some(format!("{root}/www/{{tenant}}/site")),
            ..AgentServices::default()
        }
    }
}

fn engine(home: &Path, model: &model_server::ModelServer, services: AgentServices) -> Agents {
    let engine = builder_for(home, model, quick_bounds()).build().unwrap();
    Agents::new(engine).with_services(services).unwrap()
}

fn answers(seen: &model_server::Seen) -> Vec<String> {
    tool_answers(seen).into_iter().map(|(_, t)| t).collect()
}

fn tool_list(seen: &model_server::Seen) -> Vec<String> {
    seen.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_string())
        .collect()
}

/// The files of the commit at `main` in the bare repository at `remote`,
/// with their contents, and its message and author email.
fn pushed(remote: &Path) -> (Vec<(String, String)>, String, String) {
    let repo = git2::Repository::open_bare(remote).unwrap();
    let commit = repo
        .find_reference("refs/heads/main")
        .unwrap()
        .peel_to_commit()
        .unwrap();
    let mut files = Vec::new();
    commit
        .tree()
        .unwrap()
        .walk(git2::TreeWalkMode::PreOrder, |dir, entry| {
            if let Ok(blob) = entry.to_object(&repo).and_then(|o| o.peel_to_blob()) {
                let name = format!("{dir}{}", entry.name().unwrap());
                files.push((name, String::from_utf8_lossy(blob.content()).into_owned()));
            }
            git2::TreeWalkResult::Ok
        })
        .unwrap();
    let email = commit.author().email().unwrap().to_string();
    (files, commit.message().unwrap().to_string(), email)
}

#[tokio::test]
async fn an_exec_run_commits_pushes_and_publishes_to_its_own_tenants_places_only() {
    let places = Places::new();
    git2::Repository::init_bare(places.remote("acme")).unwrap();
    // What a planted `.git/config` points at: it must stay empty.
    let victim = places.remote("victim");
    git2::Repository::init_bare(&victim).unwrap();
    let planted = format!("[remote \"origin\"]\n\turl = {}\n", victim.display());
    let plant = json!({"path": ".git/config", "content": planted}).to_string();
    let model = model_server::start(vec![
        tool_calls(&[
            (
                "w1",
                "vfs_write",
                r#"{"path":"content/index.html","content":"<h1>hi</h1>"}"#,
            ),
            (
                "w2",
                "vfs_write",
                r##"{"path":"blog/first.md","content":"# first"}"##,
            ),
            (
                "w3",
                "vfs_write",
                r#"{"path":"notes.txt","content":"mine"}"#,
            ),
            ("w4", "vfs_write", &plant),
        ]),
        tool_calls(&[
            ("g1", "git", r#"{"message":"the first page"}"#),
            ("p1", "publish", "{}"),
            ("g2", "git", r#"{"message":"again"}"#),
        ]),
        text("shipped"),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let engine = engine(home.path(), &model, places.services());
    let record = engine
        .run(exec_task("ship the site", "acme"))
        .await
        .unwrap();
    assert_eq!(record.result, "shipped");
    let seen = model.requests();
    // The last request's transcript carries every answer; the second
    // step's are the last three.
    let said = answers(&seen[2]).split_off(4);
    assert!(
        said[0].starts_with("committed ") && said[0].ends_with(" (3 files) and pushed it to main"),
        "{said:?}"
    );
    assert_eq!(
        said[1],
        "published 2 files to the web root (content/: 1, blog/: 1)"
    );
    assert_eq!(
        said[2],
        "nothing to commit: main already holds your working dir"
    );
    let (files, message, email) = pushed(&places.remote("acme"));
    assert_eq!(
        files,
        [
            ("blog/first.md".to_string(), "# first".to_string()),
            ("content/index.html".into(), "<h1>hi</h1>".into()),
            ("notes.txt".into(), "mine".into()),
        ]
    );
    assert_eq!(message, "the first page");
    assert_eq!(email, "agent@acme.workbooks.invalid");
    let victim = git2::Repository::open_bare(&victim).unwrap();
    assert!(
        victim.references().unwrap().next().is_none(),
        "the planted remote got a push"
    );
    let site = places.site("acme");
    assert_eq!(
        std::fs::read_to_string(site.join("content/index.html")).unwrap(),
        "<h1>hi</h1>"
    );
    assert_eq!(
        std::fs::read_to_string(site.join("blog/first.md")).unwrap(),
        "# first"
    );
    assert!(!site.join("notes.txt").exists());
    for name in ["git", "publish", "image"] {
        assert!(tool_list(&seen[0]).contains(&name.to_string()), "{name}");
        assert!(record.tools.contains(&name.to_string()), "{name}");
    }
    assert!(
        !record.tools.contains(&"run".to_string()),
        "a host command tool exists"
    );
}

#[tokio::test]
async fn another_tenant_reaches_only_its_own_remote_and_a_run_without_exec_sees_no_exec_tool() {
    let places = Places::new();
    git2::Repository::init_bare(places.remote("acme")).unwrap();
    let model = model_server::start(vec![
        tool_calls(&[
            (
                "w",
                "vfs_write",
                r#"{"path":"content/x.html","content":"x"}"#,
            ),
            ("g", "git", r#"{"message":"into acme?"}"#),
            ("p", "publish", "{}"),
        ]),
        text("tried"),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let engine = engine(home.path(), &model, places.services());
    engine.run(exec_task("push", "mallory")).await.unwrap();
    let said = answers(&model.requests()[1]);
    assert!(said[1].starts_with("git error: "), "{said:?}");
    assert!(
        !said[1].contains(&places.dir.path().display().to_string()),
        "a host path reached the model: {}",
        said[1]
    );
    let acme = git2::Repository::open_bare(places.remote("acme")).unwrap();
    assert!(
        acme.references().unwrap().next().is_none(),
        "acme's remote moved"
    );
    // mallory's web root is mallory's own.
    assert!(places.site("mallory").join("content/x.html").exists());
    assert!(!places.site("acme").exists());

    let model = model_server::start(vec![
        tool_calls(&[("g", "git", r#"{"message":"m"}"#), ("p", "publish", "{}")]),
        text("plain"),
    ])
    .await;
    let engine = self::engine(home.path(), &model, places.services());
    let plain = AgentOptions {
        tenant: "acme".into(),
        ..task("push")
    };
    let record = engine.run(plain).await.unwrap();
    let seen = model.requests();
    let offered = tool_list(&seen[0]);
    for name in ["git", "publish", "image"] {
        assert!(
            !offered.contains(&name.to_string()),
            "{name} offered without exec"
        );
        assert!(!record.tools.contains(&name.to_string()), "{name}");
    }
    assert_eq!(
        answers(&seen[1]),
        [
            "git not permitted (no exec capability)",
            "publish not permitted (no exec capability)"
        ]
    );
    assert!(acme.references().unwrap().next().is_none());
}

#[tokio::test]
async fn publish_follows_no_link_in_the_workdir_or_the_web_root() {
    let places = Places::new();
    let elsewhere = tempfile::tempdir().unwrap();
    std::fs::write(elsewhere.path().join("secret.txt"), "host secret").unwrap();
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    std::fs::create_dir_all(w.join("content")).unwrap();
    std::fs::write(w.join("content/page.html"), "page").unwrap();
    std::os::unix::fs::symlink(
        elsewhere.path().join("secret.txt"),
        w.join("content/leak.txt"),
    )
    .unwrap();
    std::os::unix::fs::symlink(elsewhere.path(), w.join("blog")).unwrap();
    let model = model_server::start(vec![
        tool_calls(&[("p", "publish", "{}")]),
        tool_calls(&[("p", "publish", "{}")]),
        tool_calls(&[("p", "publish", "{}")]),
        text("done"),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let engine = engine(home.path(), &model, places.services());
    let opts = AgentOptions {
        workdir: Some(w.to_path_buf()),
        ..exec_task("publish", "acme")
    };
    // After step 1 (`blog` is a link: refused whole) the link goes, so
    // step 2 publishes `content` without its inner link; then the web
    // root's `content` is made a link, and step 3 is refused.
    let (work_dir, site, outside) = (
        w.to_path_buf(),
        places.site("acme"),
        elsewhere.path().to_path_buf(),
    );
    let observer = workbooks_agent::StepObserver(std::sync::Arc::new(move |e| {
        if e.step == 1 {
            let _ = std::fs::remove_file(work_dir.join("blog"));
        } else if e.step == 2 {
            let _ = std::fs::remove_dir_all(site.join("content"));
            let _ = std::os::unix::fs::symlink(&outside, site.join("content"));
        }
    }));
    let record = engine
        .run(AgentOptions {
            on_step: Some(observer),
            ..opts
        })
        .await
        .unwrap();
    assert_eq!(record.result, "done");
    let model_seen = model.requests();
    let said: Vec<String> = (1..=3)
        .map(|i| answers(&model_seen[i]).pop().unwrap())
        .collect();
    assert_eq!(
        said[0],
        "publish error: blog/ is a link; only a real folder is published"
    );
    assert_eq!(said[1], "published 1 file to the web root (content/: 1)");
    assert_eq!(
        said[2],
        "publish error: content/page.html: the web root has a link on this path"
    );
    let site = places.site("acme");
    assert!(
        std::fs::symlink_metadata(site.join("content"))
            .unwrap()
            .is_symlink()
    );
    let outside: Vec<_> = std::fs::read_dir(elsewhere.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(outside, ["secret.txt"], "publish wrote through a link");
}

#[tokio::test]
async fn image_attempts_stop_at_two_per_run_and_a_failed_one_spends_its_slot() {
    let b64 = base64::engine::general_purpose::STANDARD.encode(PNG);
    let images = model_server::start(vec![
        Answer::Raw(500, String::new(), r#"{"error":"busy"}"#.into()),
        Answer::Raw(
            200,
            String::new(),
            json!({"data": [{"b64_json": b64}]}).to_string(),
        ),
    ])
    .await;
    let model = model_server::start(vec![
        tool_calls(&[
            ("a", "image", r#"{"prompt":"a banner","path":"img/a.png"}"#),
            ("b", "image", r#"{"prompt":"a banner","path":"../out.png"}"#),
            ("c", "image", r#"{"prompt":"a banner","path":"img/b.png"}"#),
            ("d", "image", r#"{"prompt":"a banner","path":"img/c.png"}"#),
        ]),
        text("made"),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let mut endpoint = ImageEndpoint::new(&images.base_url(), Some("img-key".into()), None);
    endpoint.model = Some("image-model".into());
    let services = AgentServices {
        image: Some(endpoint),
        ..AgentServices::default()
    };
    let engine = engine(home.path(), &model, services);
    let record = engine.run(exec_task("draw", "acme")).await.unwrap();
    assert_eq!(
        answers(&model.requests()[1]),
        [
            "image error: the image endpoint answered 500",
            "write blocked: path escapes your working dir",
            &format!("image written to img/b.png ({} bytes)", PNG.len()),
            "image budget exhausted (2/run) — plan banners, don't spray",
        ]
    );
    assert_eq!(
        std::fs::read(record.workdir.join("img/b.png")).unwrap(),
        PNG
    );
    assert!(!record.workdir.join("img/a.png").exists());
    assert!(!record.workdir.join("img/c.png").exists());
    let asked = images.requests();
    assert_eq!(asked.len(), 2, "the endpoint was asked past the budget");
    assert_eq!(asked[0].path, "/v1/images/generations");
    assert_eq!(asked[0].header("authorization"), Some("Bearer img-key"));
    assert_eq!(
        asked[0].body,
        json!({"prompt": "a banner", "n": 1, "size": "1024x1024", "model": "image-model"})
    );
}

#[tokio::test]
async fn web_search_reads_eight_results_from_the_operators_endpoint_and_wb_only_reads() {
    let results: Vec<Value> = (1..=10)
        .map(|i| json!({"title": format!("Result {i}"), "url": format!("https://example.org/{i}"), "content": "about wasm"}))
        .collect();
    let search = model_server::start(vec![Answer::Raw(
        200,
        String::new(),
        json!({"query": "wasm hosts", "results": results}).to_string(),
    )])
    .await;
    let script = vec![
        tool_calls(&[
            ("s", "web_search", r#"{"query":"wasm hosts"}"#),
            ("p", "wb", r#"{"args":"profiles"}"#),
            (
                "r",
                "wb",
                r#"{"args":"command register evil /tmp/evil.wasm"}"#,
            ),
        ]),
        text("found"),
    ];
    let model = model_server::start(script.clone()).await;
    let home = tempfile::tempdir().unwrap();
    let services = AgentServices {
        web_search: Some(search.base_url()),
        ..AgentServices::default()
    };
    let engine = engine(home.path(), &model, services);
    engine.run(task("look it up")).await.unwrap();
    let said = answers(&model.requests()[1]);
    assert_eq!(said[0].lines().count(), 24, "{}", said[0]);
    assert!(said[0].starts_with("1. Result 1\n   https://example.org/1\n   about wasm"));
    assert!(said[0].contains("8. Result 8") && !said[0].contains("9. Result 9"));
    assert_eq!(
        search.requests()[0].path,
        "/v1/search?q=wasm+hosts&format=json"
    );
    assert_eq!(said[1], workbooks::policy::profiles_text(false));
    assert!(
        said[2].starts_with(
            "wb error: `command register evil /tmp/evil.wasm` is not a read-only verb"
        )
    );
    assert!(engine.engine().registry().get("evil").unwrap().is_none());

    // No endpoint configured: the model reads so.
    let model = model_server::start(script).await;
    let engine = self::engine(home.path(), &model, AgentServices::default());
    engine.run(task("look it up")).await.unwrap();
    assert_eq!(
        answers(&model.requests()[1])[0],
        "web_search error: no search endpoint is configured (the operator sets WB_SEARCH_URL)"
    );
}

#[tokio::test]
async fn a_replayed_exec_run_pushes_nothing_again_and_puts_its_image_back() {
    let places = Places::new();
    git2::Repository::init_bare(places.remote("acme")).unwrap();
    let b64 = base64::engine::general_purpose::STANDARD.encode(PNG);
    let images = model_server::start(vec![Answer::Raw(
        200,
        String::new(),
        json!({"data": [{"b64_json": b64}]}).to_string(),
    )])
    .await;
    let model = model_server::start(vec![
        tool_calls(&[(
            "i",
            "image",
            r#"{"prompt":"logo","path":"content/logo.png"}"#,
        )]),
        tool_calls(&[
            ("s", "shell", r#"{"pipeline":"wc -c content/logo.png"}"#),
            ("g", "git", r#"{"message":"logo"}"#),
        ]),
        tool_calls(&[("d", "done", r#"{"result":"logo shipped"}"#)]),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let mut services = places.services();
    services.image = Some(ImageEndpoint::new(&images.base_url(), None, None));
    let engine = engine(home.path(), &model, services);
    let record = engine.run(exec_task("logo", "acme")).await.unwrap();
    assert_eq!(record.result, "logo shipped");
    let head = |p: &Path| {
        let repo = git2::Repository::open_bare(p).unwrap();
        let oid = repo.refname_to_id("refs/heads/main").unwrap();
        let count = repo.revwalk().and_then(|mut w| {
            w.push(oid)?;
            Ok(w.count())
        });
        (oid, count.unwrap())
    };
    let before = head(&places.remote("acme"));
    assert_eq!(before.1, 1);
    let report = engine.replay(&record.workdir).await.unwrap();
    assert!(report.same, "{:?}", report.first_different_line);
    assert_eq!(head(&places.remote("acme")), before, "the replay pushed");
    assert_eq!(images.requests().len(), 1, "the replay asked for an image");
    assert_eq!(
        std::fs::read(report.record.workdir.join("content/logo.png")).unwrap(),
        PNG
    );
    assert_eq!(report.record.events[1].output, record.events[1].output);
}

/// `wbx agent run --task … [extra]` with the model at `model` and `env`.
async fn wbx_agent(
    model: &model_server::ModelServer,
    home: &Path,
    extra: &[&str],
    env: &[(&str, String)],
) -> std::process::Output {
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_wbx"));
    cmd.args(["agent", "run", "--task", "ship", "--tenant", "acme"])
        .args(extra)
        .env("WB_HOME", home)
        .env("WB_LLM_BASE_URL", model.base_url())
        .env("WB_LLM_API_KEY", crate::agent::KEY);
    for (k, v) in env {
        cmd.env(k, v);
    }
    tokio::task::spawn_blocking(move || cmd.output().unwrap())
        .await
        .unwrap()
}

#[tokio::test]
async fn wbx_agent_run_exec_pushes_where_the_environment_says_and_refuses_a_shared_remote() {
    let places = Places::new();
    git2::Repository::init_bare(places.remote("acme")).unwrap();
    let model = model_server::start(vec![
        tool_calls(&[
            ("w", "vfs_write", r#"{"path":"a.txt","content":"a"}"#),
            ("g", "git", r#"{"message":"from the cli"}"#),
        ]),
        text("pushed"),
    ])
    .await;
    let home = tempfile::tempdir().unwrap();
    let remote = format!("{}/git/{{tenant}}.git", places.dir.path().display());
    let env = [("WB_AGENT_GIT_REMOTE", remote)];
    let out = wbx_agent(&model, home.path(), &["--exec"], &env).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "pushed\n");
    let (files, message, _) = pushed(&places.remote("acme"));
    assert_eq!(files, [("a.txt".to_string(), "a".to_string())]);
    assert_eq!(message, "from the cli");

    let shared = format!("{}/git/shared.git", places.dir.path().display());
    let env = [("WB_AGENT_GIT_REMOTE", shared.clone())];
    let out = wbx_agent(&model, home.path(), &["--exec"], &env).await;
    assert_eq!(out.status.code(), Some(125), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        format!(
            "wbx: engine: agent tool git: {shared:?} must name {{tenant}}, so each tenant has its own"
        )
    );
}
