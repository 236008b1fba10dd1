//! The tools an agent run may call, and how the host runs each.
//!
//! Base tools for every run: `shell`, `search`, `wb`, `fetch`,
//! `web_search`, `file_issue`, `vfs_read`, `vfs_write`, `done`. `git`,
//! `publish` and `image` need the exec grant, which only the host gives
//! ([`AgentOptions::exec`](super::AgentOptions::exec)); without it each
//! is left out of the model's list and answers `<tool> not permitted (no
//! exec capability)`. No tool runs a host command line: `shell` is the
//! in-sandbox pipe shell over the engine's commands, with the workdir as
//! its only directory, and the exec tools are fixed operations
//! ([`outside`](crate::outside)).

use crate::limits::{AGENT_VFS_READ_BYTES, AGENT_VFS_WRITE_BYTES};
use crate::outside::{self, ImageBudget};
use crate::workdir::{ESCAPES, RUN_FILES, confine};
use serde_json::{Value, json};
use std::io::Read;
use std::path::PathBuf;
use std::time::Duration;
use workbooks::Preopen;
use workbooks::engine::shell::LineOptions;
use workbooks::policy::{Cap, CapSet};

/// Tools only a host grant can give a run.
pub(crate) const EXEC_ONLY: [&str; 3] = ["git", "publish", "image"];

/// A tool's definition: name, description, JSON schema of its arguments.
pub(crate) struct ToolDef {
    pub(crate) name: &'static str,
    pub(crate) description: &'static str,
    pub(crate) parameters: Value,
}

fn string_args(args: &[(&str, &str)]) -> Value {
    let props: serde_json::Map<String, Value> = args
        .iter()
        .map(|(k, d)| (k.to_string(), json!({"type": "string", "description": d})))
        .collect();
    let required: Vec<&str> = args.iter().map(|(k, _)| *k).collect();
    json!({"type": "object", "properties": props, "required": required})
}

/// The base tools, in the order the model is shown them.
fn base_tools() -> Vec<ToolDef> {
    vec![
        ToolDef {
            name: "shell",
            description: "Run a pipeline in the sandboxed pipe shell (coreutils, jq, grep; | ; && || and redirections) in your working dir. No host processes.",
            parameters: string_args(&[("pipeline", "the command line")]),
        },
        ToolDef {
            name: "search",
            description: "Rank the files of your working dir against a query (BM25), best 5, with the lines that matched.",
            parameters: string_args(&[("query", "words to look for")]),
        },
        ToolDef {
            name: "wb",
            description: "Run one of the engine CLI's read-only verbs in process: profiles, command list, command show NAME, toolkit list, toolkit show ID [SKILL], toolkit search QUERY, toolkit verify ID, version, help.",
            parameters: string_args(&[("args", "the verb and its arguments, e.g. `command list`")]),
        },
        ToolDef {
            name: "fetch",
            description: "GET a web page (http or https, public addresses only) as readable text.",
            parameters: string_args(&[("url", "the page's URL")]),
        },
        ToolDef {
            name: "web_search",
            description: "Search the web: at most 8 results, each title, URL and snippet.",
            parameters: string_args(&[("query", "what to search for")]),
        },
        ToolDef {
            name: "vfs_read",
            description: "Read a file of your working dir.",
            parameters: string_args(&[("path", "a path inside your working dir")]),
        },
        ToolDef {
            name: "vfs_write",
            description: "Write a file of your working dir (replacing it).",
            parameters: string_args(&[
                ("path", "a path inside your working dir"),
                ("content", "the whole new content"),
            ]),
        },
        ToolDef {
            name: "file_issue",
            description: "File an issue when your tools fall short, then carry on.",
            parameters: string_args(&[
                ("title", "a short title"),
                ("need", "what you needed"),
                ("tried", "what you tried"),
            ]),
        },
        ToolDef {
            name: "done",
            description: "Finish the run with this result.",
            parameters: string_args(&[("result", "the result")]),
        },
    ]
}

/// The tools only the exec grant gives, in the order the model is shown
/// them.
fn exec_tools() -> Vec<ToolDef> {
    vec![
        ToolDef {
            name: "git",
            description: "Commit your working dir with this message and push it to your repository.",
            parameters: string_args(&[("message", "the commit message")]),
        },
        ToolDef {
            name: "publish",
            description: "Publish your working dir's content/ and blog/ folders to your web root.",
            parameters: json!({"type": "object", "properties": {}}),
        },
        ToolDef {
            name: "image",
            description: "Make one image of a prompt and write it to a path in your working dir (2 per run, counted at the attempt).",
            parameters: string_args(&[
                ("prompt", "what the image shows"),
                ("path", "where to write it, inside your working dir"),
            ]),
        },
    ]
}

/// The tools of a run, with the exec tools when it holds the grant.
pub(crate) fn definitions(exec: bool) -> Vec<ToolDef> {
    let mut tools = base_tools();
    if exec {
        tools.extend(exec_tools());
    }
    tools
}

/// The names of a run's tools, in order.
pub(crate) fn tool_names(exec: bool) -> Vec<String> {
    definitions(exec)
        .iter()
        .map(|t| t.name.to_string())
        .collect()
}

/// What one call produced, before it becomes the model's text.
pub(crate) struct Ran {
    pub(crate) output: String,
    pub(crate) exit_code: i32,
    pub(crate) error: Option<String>,
    /// The `done` tool's result.
    pub(crate) finished: Option<String>,
    /// A file the call wrote from outside (an image): its path in the
    /// workdir and its bytes, which a replay puts back.
    pub(crate) wrote: Option<Box<(String, Vec<u8>)>>,
}

impl Ran {
    fn ok(output: String) -> Self {
        Self {
            output,
            exit_code: 0,
            error: None,
            finished: None,
            wrote: None,
        }
    }

    /// A program's stdout then stderr as the output; with `stderr_is_error`,
    /// a failing exit's stderr is the call's error too.
    fn of_streams(stdout: &[u8], stderr: &[u8], exit_code: i32, stderr_is_error: bool) -> Self {
        let stderr = String::from_utf8_lossy(stderr);
        let mut output = String::from_utf8_lossy(stdout).into_owned();
        output.push_str(&stderr);
        let failed = stderr_is_error && exit_code != 0 && !stderr.is_empty();
        Self {
            output,
            exit_code,
            error: failed.then(|| stderr.trim_end().to_string()),
            finished: None,
            wrote: None,
        }
    }

    pub(crate) fn failed(message: String) -> Self {
        Self {
            output: message.clone(),
            exit_code: 1,
            error: Some(message),
            finished: None,
            wrote: None,
        }
    }
}

/// What a run's tools reach.
pub(crate) struct Toolbox {
    pub(crate) agents: super::Agents,
    pub(crate) tenant: String,
    pub(crate) run_id: String,
    pub(crate) workdir: PathBuf,
    pub(crate) tool_timeout: Duration,
    /// Whether the host granted the run exec (`git`, `publish`, `image`).
    pub(crate) exec: bool,
    /// The run's image attempts.
    pub(crate) images: ImageBudget,
    /// The grant the current call runs under (its commands, its
    /// destinations), when the run has one ([`crate::grant`]).
    pub(crate) scope: Option<workbooks::grants::Scope>,
}

/// The string argument `key`, or the error the model reads.
fn arg<'a>(tool: &str, args: &'a Value, key: &str) -> Result<&'a str, Ran> {
    args.get(key).and_then(Value::as_str).ok_or_else(|| {
        Ran::failed(format!(
            "{tool} error: required arg `{key}` missing or not a string"
        ))
    })
}

impl Toolbox {
    /// Runs tool `name` with `args` (already parsed; `Null` when the model
    /// wrote no JSON object).
    pub(crate) async fn run(&self, name: &str, args: &Value) -> Ran {
        let got = match name {
            "shell" => self.shell(args).await,
            "search" => self.search(args).await,
            "wb" => arg("wb", args, "args").and_then(|line| {
                let said = crate::wb::wb(&self.agents, line);
                said.map(Ran::ok).map_err(Ran::failed)
            }),
            "fetch" => self.fetch(args).await,
            "web_search" => self.web_search(args).await,
            "vfs_read" => self.vfs_read(args),
            "vfs_write" => self.vfs_write(args),
            "file_issue" => self.file_issue(args),
            "done" => arg("done", args, "result").map(|r| Ran {
                finished: Some(r.to_string()),
                ..Ran::ok(r.to_string())
            }),
            n if EXEC_ONLY.contains(&n) && !self.exec => Err(Ran::failed(format!(
                "{n} not permitted (no exec capability)"
            ))),
            "git" => self.git(args).await,
            "publish" => {
                let services = &self.agents.outside().services;
                let said = outside::publish(services, &self.tenant, &self.workdir).await;
                said.map(Ran::ok).map_err(Ran::failed)
            }
            "image" => self.image(args).await,
            other => Err(Ran::failed(format!("tool error: unknown tool `{other}`"))),
        };
        got.unwrap_or_else(|e| e)
    }

    async fn shell(&self, args: &Value) -> Result<Ran, Ran> {
        let pipeline = arg("shell", args, "pipeline")?;
        match self
            .agents
            .engine()
            .commands()
            .run_line(pipeline, self.sandboxed())
            .await
        {
            // A line's failing exit is the model's to read, not an error.
            Ok(out) => Ok(Ran::of_streams(&out.stdout, &out.stderr, out.exit, false)),
            Err(e) => Err(Ran::failed(format!("shell error: {e}"))),
        }
    }

    /// The line options of a tool run in the sandbox: `minimal` narrowed to
    /// `vfs` and `commands`, the workdir as `/`, as the run's tenant.
    fn sandboxed(&self) -> LineOptions {
        LineOptions {
            profile: "minimal".into(),
            caps: Some(CapSet::of(&[Cap::Vfs, Cap::Commands])),
            tenant: self.tenant.clone(),
            session_id: self.run_id.clone(),
            dirs: vec![Preopen {
                host: self.workdir.clone(),
                guest: "/".into(),
                read_only: false,
            }],
            scope: self.scope.clone(),
            ..LineOptions::default()
        }
    }

    /// The `search` command over the workdir (read-only), in the sandbox.
    async fn search(&self, args: &Value) -> Result<Ran, Ran> {
        let query = arg("search", args, "query")?;
        let mut argv = vec!["-C".to_string(), "/".to_string()];
        for own in RUN_FILES {
            argv.extend(["-x".to_string(), own.to_string()]);
        }
        argv.push(query.to_string());
        let mut opts = self.sandboxed();
        opts.dirs[0].read_only = true;
        self.command("search", argv, opts).await
    }

    /// The `fetch` command, under `network` narrowed to `browse` and no
    /// directory: the host fetches behind the floor (20 s), the browse
    /// broker turns the page into text.
    async fn fetch(&self, args: &Value) -> Result<Ran, Ran> {
        let url = arg("fetch", args, "url")?;
        let opts = LineOptions {
            profile: "network".into(),
            caps: Some(CapSet::of(&[Cap::Browse])),
            tenant: self.tenant.clone(),
            session_id: self.run_id.clone(),
            scope: self.scope.clone(),
            ..LineOptions::default()
        };
        self.command("fetch", vec![url.to_string()], opts).await
    }

    /// Runs the built-in `name`: its stdout and stderr are the output; a
    /// failing exit makes its stderr the error.
    async fn command(&self, name: &str, argv: Vec<String>, opts: LineOptions) -> Result<Ran, Ran> {
        match self.agents.engine().commands().run(name, argv, opts).await {
            Ok(out) => Ok(Ran::of_streams(
                &out.stdout,
                &out.stderr,
                out.exit_code,
                true,
            )),
            Err(e) => Err(Ran::failed(format!("{name} error: {e}"))),
        }
    }

    async fn web_search(&self, args: &Value) -> Result<Ran, Ran> {
        let query = arg("web_search", args, "query")?;
        let said = outside::web_search(self.agents.outside(), query).await;
        said.map(Ran::ok).map_err(Ran::failed)
    }

    async fn git(&self, args: &Value) -> Result<Ran, Ran> {
        let message = arg("git", args, "message")?;
        let services = &self.agents.outside().services;
        let said = outside::commit_and_push(services, &self.tenant, &self.workdir, message).await;
        said.map(Ran::ok).map_err(Ran::failed)
    }

    async fn image(&self, args: &Value) -> Result<Ran, Ran> {
        let prompt = arg("image", args, "prompt")?;
        let path = arg("image", args, "path")?;
        let outside = self.agents.outside();
        let (said, bytes) = outside::image(outside, &self.images, &self.workdir, prompt, path)
            .await
            .map_err(Ran::failed)?;
        Ok(Ran {
            wrote: Some(Box::new((path.to_string(), bytes))),
            ..Ran::ok(said)
        })
    }

    fn vfs_read(&self, args: &Value) -> Result<Ran, Ran> {
        let path = arg("vfs_read", args, "path")?;
        let at = confine(&self.workdir, path).ok_or_else(|| Ran::failed(ESCAPES.into()))?;
        let mut bytes = Vec::new();
        std::fs::File::open(&at)
            .and_then(|f| f.take(AGENT_VFS_READ_BYTES).read_to_end(&mut bytes))
            .map_err(|e| Ran::failed(format!("vfs_read error: {path}: {e}")))?;
        Ok(Ran::ok(String::from_utf8_lossy(&bytes).into_owned()))
    }

    fn vfs_write(&self, args: &Value) -> Result<Ran, Ran> {
        let path = arg("vfs_write", args, "path")?;
        let content = arg("vfs_write", args, "content")?;
        if content.len() > AGENT_VFS_WRITE_BYTES {
            return Err(Ran::failed(format!(
                "vfs_write error: content is over {AGENT_VFS_WRITE_BYTES} bytes"
            )));
        }
        let at = confine(&self.workdir, path).ok_or_else(|| Ran::failed(ESCAPES.into()))?;
        let written = match at.parent() {
            Some(dir) => std::fs::create_dir_all(dir),
            None => Ok(()),
        }
        .and_then(|()| {
            // Created directories were checked too: none may be a link.
            confine(&self.workdir, path)
                .map(|_| ())
                .ok_or_else(|| std::io::Error::other("path escapes"))
        })
        .and_then(|()| std::fs::write(&at, content));
        written.map_err(|e| Ran::failed(format!("vfs_write error: {path}: {e}")))?;
        Ok(Ran::ok(format!("wrote {} bytes to {path}", content.len())))
    }

    fn file_issue(&self, args: &Value) -> Result<Ran, Ran> {
        let title = arg("file_issue", args, "title")?;
        let need = arg("file_issue", args, "need")?;
        let tried = arg("file_issue", args, "tried")?;
        let path = self.workdir.join("_issues.jsonl");
        let line = json!({"title": title, "need": need, "tried": tried, "run": self.run_id});
        let filed = workbooks::files::append_line(&path, &line.to_string());
        filed.map_err(|e| Ran::failed(format!("file_issue error: {e}")))?;
        Ok(Ran::ok(format!(
            "issue filed: {title}. Note it and carry on with what you can do."
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toolbox() -> (tempfile::TempDir, tempfile::TempDir, Toolbox) {
        let (home, engine) = workbooks::engine::for_tests();
        let work = tempfile::tempdir().unwrap();
        let toolbox = Toolbox {
            agents: super::super::Agents::new(engine),
            tenant: "default".into(),
            run_id: "r".into(),
            workdir: work.path().to_path_buf(),
            tool_timeout: Duration::from_secs(5),
            exec: false,
            images: ImageBudget::default(),
            scope: None,
        };
        (home, work, toolbox)
    }

    #[tokio::test]
    async fn vfs_write_past_its_cap_writes_nothing_and_vfs_read_stops_at_its_cap() {
        let (_home, work, tb) = toolbox();
        let big = "x".repeat(AGENT_VFS_WRITE_BYTES + 1);
        let ran = tb
            .run("vfs_write", &json!({"path": "big.txt", "content": big}))
            .await;
        assert_eq!(
            ran.error.as_deref(),
            Some(
                format!("vfs_write error: content is over {AGENT_VFS_WRITE_BYTES} bytes").as_str()
            )
        );
        assert!(!work.path().join("big.txt").exists());
        let long = vec![b'y'; AGENT_VFS_READ_BYTES as usize + 10];
        std::fs::write(work.path().join("long.txt"), &long).unwrap();
        let ran = tb.run("vfs_read", &json!({"path": "long.txt"})).await;
        assert_eq!(ran.error, None);
        assert_eq!(ran.output.len(), AGENT_VFS_READ_BYTES as usize);
    }
}
