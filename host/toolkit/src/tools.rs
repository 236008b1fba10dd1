//! The engine's runnables as a catalogue of tools for an agent protocol
//! (`wbx mcp` serves it over the Model Context Protocol): the shell, every
//! built-in and registered `wasi:cli` command, and every registered
//! `plugin`-world component (toolkit components among them).
//!
//! Each tool's input schema follows from its world: a command takes
//! `{args, stdin}`, a plugin `{input}`, the shell `{line, stdin}`. Its
//! description states what its imports need and whether the grant the
//! tools run under covers it, led by its toolkit's tagline when a toolkit
//! builds it. A call runs exactly as the CLI runs it: the
//! line, command or plugin docked under that grant, with every limit on
//! (fuel, memory, deadline, output caps), as the given tenant.
//!
//! Invariant: a tool is never more than a name for something the grant
//! already allows; listing a tool grants nothing, and a tool whose imports
//! the grant does not cover is refused when docked, as it would be from the
//! CLI, and that refusal comes back as the tool's error.

use crate::Toolkits;
use serde_json::{Value, json};
use workbooks::artifact::Artifact;
use workbooks::commands::builtin;
use workbooks::dock::analyse;
use workbooks::engine::Engine;
use workbooks::engine::shell::LineOptions;
use workbooks::instance::Supervisor;
use workbooks::policy::{Cap, CapSet, Grant};
use workbooks::state::Stdin;

/// What a tool runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolKind {
    /// A command line through the in-sandbox shell.
    Shell,
    /// A `wasi:cli` command by name (built-in or registered).
    Command(String),
    /// A `plugin`-world component registered under this name.
    Plugin(String),
}

/// One tool: its name, what it does and what it takes.
#[derive(Debug, Clone)]
pub struct ToolSpec {
    /// Its name (`shell`, `jq`, a registered command's name).
    pub name: String,
    /// What it is, what it needs and whether the grant covers it.
    pub description: String,
    /// The JSON schema of its arguments.
    pub input_schema: Value,
    /// What a call runs.
    pub kind: ToolKind,
}

/// A finished tool call: its text, and whether it failed (a non-zero exit,
/// an `err`, a refusal or a broker denial).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutcome {
    /// Stdout (and stderr after it), the plugin's answer, or the error.
    pub text: String,
    /// Whether the call failed.
    pub is_error: bool,
}

impl ToolOutcome {
    fn failed(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            is_error: true,
        }
    }
}

fn command_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "args": {"type": "array", "items": {"type": "string"},
                     "description": "Arguments after the command's name, one string each (no shell parsing)."},
            "stdin": {"type": "string", "description": "Text fed to the command's stdin."}
        },
        "additionalProperties": false
    })
}

/// What an artifact's imports need, said against `grant`: whether it is a
/// plugin, and the sentence. An import a stub of the grant serves does not
/// count as missing.
fn needs(artifact: &Artifact, grant: &Grant) -> (bool, String) {
    let Ok(a) = analyse(artifact) else {
        return (false, "its imports cannot be read".into());
    };
    let missing = a
        .imports
        .iter()
        .filter_map(|i| Cap::from_word(&i.needs).ok().map(|c| (i, c)))
        .filter(|(i, c)| {
            !grant.caps.contains(*c) && grant.stubs.serving(&i.name).is_none_or(|s| s.cap() != *c)
        })
        .fold(CapSet::EMPTY, |set, (_, c)| set.with(c));
    let granting: Vec<&str> = a.granted_by.iter().map(|p| p.name()).collect();
    let needs = if a.caps.is_empty() {
        "no caps".to_string()
    } else {
        format!("caps `{}`", a.caps)
    };
    let stubbed = if grant.stubs.is_empty() || !a.caps.minus(grant.caps).contains(Cap::Net) {
        String::new()
    } else {
        format!(" (deny brokers: {})", grant.stubs)
    };
    let plugin = a.exports.iter().any(|e| e == "run");
    let verdict = if missing.is_empty() {
        format!(
            "Needs {needs}; runs under profile {}{stubbed}.",
            grant.profile.effective
        )
    } else {
        format!(
            "Needs {needs}, granted by {}: refused under profile {} (missing `{missing}`).",
            if granting.is_empty() {
                "no profile".to_string()
            } else {
                granting.join(", ")
            },
            grant.profile.effective
        )
    };
    (plugin, verdict)
}

/// The tool catalogue over one engine: lists its runnables as tools and
/// calls them.
#[derive(Clone)]
pub struct Tools {
    engine: Engine,
}

impl Tools {
    /// The tools of `engine`.
    pub fn new(engine: Engine) -> Tools {
        Tools { engine }
    }

    /// The tools this engine offers under `grant`: the shell, the
    /// built-ins, then each registered command or plugin, by name; a
    /// command one of `toolkits` builds is described by its manifest.
    pub fn list(&self, grant: &Grant, toolkits: &Toolkits) -> Vec<ToolSpec> {
        let caps = if grant.caps.is_empty() {
            "none".to_string()
        } else {
            grant.caps.to_string()
        };
        let mut tools = vec![ToolSpec {
            name: "shell".into(),
            description: format!(
                "Run a command line inside the sandbox: pipes, && and ||, quoting, redirections into the session's volumes; every stage a registered or built-in command, never a host shell. Stages run under profile {} (caps: {caps}).",
                grant.profile.effective
            ),
            input_schema: json!({
                "type": "object",
                "properties": {
                    "line": {"type": "string", "description": "The command line, e.g. `seq 10 | sort -rn | head -3`."},
                    "stdin": {"type": "string", "description": "Text fed to the first stage's stdin."}
                },
                "required": ["line"],
                "additionalProperties": false
            }),
            kind: ToolKind::Shell,
        }];
        let mut names: Vec<&str> = builtin::COMMANDS
            .iter()
            .chain(builtin::APPLETS.iter())
            .copied()
            .collect();
        names.sort_unstable();
        names.dedup();
        for name in names {
            let Some(resolved) = builtin::resolve(name) else {
                continue;
            };
            let (_, verdict) = needs(&resolved.artifact, grant);
            tools.push(ToolSpec {
                name: name.to_string(),
                description: format!(
                    "Built-in command `{name}` (a wasi:cli command: args and stdin in, stdout out; `{name} --help` says more). {verdict}"
                ),
                input_schema: command_schema(),
                kind: ToolKind::Command(name.to_string()),
            });
        }
        // A registered command a toolkit builds is described by its
        // manifest too: `cli_bin` → "Toolkit `id`: tagline".
        let from_toolkits: std::collections::HashMap<String, String> = toolkits
            .list()
            .into_iter()
            .filter_map(|tk| {
                let bin = tk.manifest.cli_bin()?.to_string();
                let tagline = tk.manifest.kw("TAGLINE").unwrap_or("").trim().to_string();
                Some((bin, format!("Toolkit `{}`: {tagline} ", tk.id)))
            })
            .collect();
        let registry = self.engine.registry();
        let mut entries = registry.list().unwrap_or_default();
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        for entry in entries {
            let Ok(artifact) = registry.load(&entry) else {
                continue;
            };
            let grant = grant.clone().with_stubs(entry.stub_set());
            let (plugin, verdict) = needs(&artifact, &grant);
            let short = entry.sha256.get(..16).unwrap_or(&entry.sha256);
            let kit = from_toolkits
                .get(&entry.name)
                .map(String::as_str)
                .unwrap_or("");
            let spec = if plugin {
                ToolSpec {
                    name: entry.name.clone(),
                    description: format!(
                        "{kit}Plugin component `{}` (sha256:{short}): run(input) -> result<string, string>. {verdict}",
                        entry.name
                    ),
                    input_schema: json!({
                        "type": "object",
                        "properties": {"input": {"type": "string", "description": "The request text passed to run."}},
                        "required": ["input"],
                        "additionalProperties": false
                    }),
                    kind: ToolKind::Plugin(entry.name.clone()),
                }
            } else {
                ToolSpec {
                    name: entry.name.clone(),
                    description: format!(
                        "{kit}Registered command `{}` (sha256:{short}, a wasi:cli command). {verdict}",
                        entry.name
                    ),
                    input_schema: command_schema(),
                    kind: ToolKind::Command(entry.name.clone()),
                }
            };
            tools.push(spec);
        }
        tools
    }

    /// What the tool named `name` runs, without building the catalogue:
    /// the shell, a built-in, or a registered command or plugin.
    pub fn kind(&self, name: &str) -> Option<ToolKind> {
        if name == "shell" {
            return Some(ToolKind::Shell);
        }
        if builtin::resolve(name).is_some() {
            return Some(ToolKind::Command(name.to_string()));
        }
        let entry = self.engine.registry().get(name).ok()??;
        let artifact = self.engine.registry().load(&entry).ok()?;
        let plugin = analyse(&artifact).is_ok_and(|a| a.exports.iter().any(|e| e == "run"));
        Some(if plugin {
            ToolKind::Plugin(entry.name)
        } else {
            ToolKind::Command(entry.name)
        })
    }

    /// Runs tool `kind` with `arguments` under `opts` (the profile, caps,
    /// limits and tenant every call of the server gets).
    pub async fn call(
        &self,
        kind: &ToolKind,
        arguments: &serde_json::Map<String, Value>,
        opts: LineOptions,
    ) -> ToolOutcome {
        let text = |key: &str| arguments.get(key).and_then(Value::as_str);
        let mut opts = opts;
        if let Some(stdin) = text("stdin") {
            opts.stdin = Stdin::Bytes(bytes::Bytes::copy_from_slice(stdin.as_bytes()));
        }
        match kind {
            ToolKind::Shell => {
                let Some(line) = text("line") else {
                    return ToolOutcome::failed("`line` (a string) is required");
                };
                match self.engine.commands().run_line(line, opts).await {
                    Ok(out) => outcome(&out.stdout, &out.stderr, out.exit),
                    Err(e) => ToolOutcome::failed(e.to_string()),
                }
            }
            ToolKind::Command(name) => {
                let args = match arguments.get("args") {
                    None => Vec::new(),
                    Some(Value::Array(items)) => {
                        let strings: Option<Vec<String>> = items
                            .iter()
                            .map(|v| v.as_str().map(str::to_string))
                            .collect();
                        match strings {
                            Some(s) => s,
                            None => return ToolOutcome::failed("`args` must be strings"),
                        }
                    }
                    Some(_) => return ToolOutcome::failed("`args` must be an array of strings"),
                };
                match self.engine.commands().run(name, args, opts).await {
                    Ok(out) => outcome(&out.stdout, &out.stderr, out.exit_code),
                    Err(e) => ToolOutcome::failed(e.to_string()),
                }
            }
            ToolKind::Plugin(name) => self.call_plugin(name, text("input"), opts).await,
        }
    }

    async fn call_plugin(&self, name: &str, input: Option<&str>, opts: LineOptions) -> ToolOutcome {
        let Some(input) = input else {
            return ToolOutcome::failed("`input` (a string) is required");
        };
        let entry = match self.engine.registry().get(name) {
            Ok(Some(entry)) => entry,
            Ok(None) => return ToolOutcome::failed(format!("no plugin `{name}`")),
            Err(e) => return ToolOutcome::failed(e.to_string()),
        };
        // One instance per call, under an id of its own, stopped after.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let id = format!("tool-{}-{n}", std::process::id());
        // A plugin registered at os_process is called in a child, as its
        // runs are.
        if entry.tier == workbooks::commands::Tier::OsProcess {
            return match self
                .engine
                .commands()
                .call_plugin_in_child(&entry, input, &id, &opts)
                .await
            {
                Ok(Ok(text)) => ToolOutcome {
                    text,
                    is_error: false,
                },
                Ok(Err(text)) => ToolOutcome::failed(text),
                Err(e) => ToolOutcome::failed(e.to_string()),
            };
        }
        let (artifact, stubs) = match self.engine.registry().load(&entry) {
            Ok(a) => (a, entry.stub_set()),
            Err(e) => return ToolOutcome::failed(e.to_string()),
        };
        let sup = match Supervisor::for_tenant(self.engine.clone(), &opts.tenant) {
            Ok(s) => s,
            Err(e) => return ToolOutcome::failed(e.to_string()),
        };
        let start = opts.start_options(stubs);
        if let Err(e) = sup.start(&id, &artifact, start).await {
            return ToolOutcome::failed(e.to_string());
        }
        let answer = sup.call_run(&id, input).await;
        let _ = sup.stop(&id);
        match answer {
            Ok(Ok(text)) => ToolOutcome {
                text,
                is_error: false,
            },
            Ok(Err(text)) => ToolOutcome::failed(text),
            Err(e) => ToolOutcome::failed(e.to_string()),
        }
    }
}

/// A command's result as tool text: stdout, then stderr when there is any,
/// and the exit code when it is not 0.
fn outcome(stdout: &[u8], stderr: &[u8], exit: i32) -> ToolOutcome {
    let mut text = String::from_utf8_lossy(stdout).into_owned();
    if !stderr.is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&String::from_utf8_lossy(stderr));
    }
    if exit != 0 {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!("exit {exit}"));
    }
    ToolOutcome {
        text,
        is_error: exit != 0,
    }
}
