//! `wbx env`: where this home keeps what it keeps, and every environment
//! variable the engine reads, with the value in effect. [`VARIABLES`] is
//! the one list of them: docs/environment.md is generated from it and the
//! exit-code table, and a test fails when a `WB_*` variable read anywhere
//! in the code is missing from it.

use std::path::PathBuf;

/// Who sets a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Audience {
    /// Where things are and how the CLI talks.
    Everyone,
    /// Network, trust and secrets of a service.
    Operator,
    /// The agent loop's outside services.
    Agent,
    /// Set by the engine for the processes it starts.
    Engine,
    /// The tests, benches and CI.
    Contributor,
}

impl Audience {
    fn heading(self) -> &'static str {
        match self {
            Audience::Everyone => "Where things are, and the CLI",
            Audience::Operator => "Network, trust and secrets",
            Audience::Agent => "The agent's outside services",
            Audience::Engine => "Set by the engine for the processes it starts",
            Audience::Contributor => "Tests, benches and CI",
        }
    }
}

/// One variable: its name, who sets it, whether its value is a secret
/// (never printed), and what it does.
pub(crate) struct Variable {
    pub(crate) name: &'static str,
    pub(crate) audience: Audience,
    pub(crate) secret: bool,
    pub(crate) does: &'static str,
}

const fn var(name: &'static str, audience: Audience, does: &'static str) -> Variable {
    Variable {
        name,
        audience,
        secret: false,
        does,
    }
}

const fn secret(name: &'static str, audience: Audience, does: &'static str) -> Variable {
    Variable {
        name,
        audience,
        secret: true,
        does,
    }
}

use Audience::{Agent, Contributor, Engine, Everyone, Operator};

/// Every environment variable the engine, the CLI, its tests and CI read.
pub(crate) const VARIABLES: &[Variable] = &[
    var(
        "WB_HOME",
        Everyone,
        "the home (registry, kv, keys, database); `--home` wins; default `$XDG_DATA_HOME/workbooks`, else `~/.local/share/workbooks`",
    ),
    var(
        "WB_CACHE_DIR",
        Everyone,
        "the compile cache; default `$XDG_CACHE_HOME/workbooks` (else `~/.cache/workbooks`) for the user's home, `<home>/cache` for another",
    ),
    var(
        "WB_STATE_DIR",
        Everyone,
        "where the key sealing every cache lives; default `$XDG_STATE_HOME/workbooks`, else `~/.local/state/workbooks`",
    ),
    var(
        "WB_LOG",
        Everyone,
        "what diagnostics stderr shows, as an env-filter (`debug`, `workbooks=trace`); coloured only on a terminal; default warnings and errors",
    ),
    var(
        "WB_DAEMON",
        Everyone,
        "`0`: never hand a `run` line to a `wbx daemon`, run it here",
    ),
    var(
        "WB_TOOLKITS_ROOT",
        Everyone,
        "the toolkits root when `--root` is not given; default `toolkits/` or `../toolkits`",
    ),
    var(
        "WB_NET_ALLOW",
        Operator,
        "CIDRs opened through the egress floor (comma-separated, e.g. `127.0.0.1/32`) to every guest of this process; never used for the operator's own endpoints",
    ),
    var(
        "WB_OPERATOR_ALLOW",
        Operator,
        "CIDRs opened through the egress floor for the operator's own endpoints alone (an OCI registry, a catalog download), e.g. `127.0.0.1/32` for a registry on this machine; never opened to a guest",
    ),
    var(
        "WB_TLS_CA_FILE",
        Operator,
        "a PEM file of extra TLS roots, trusted beside the web's (a network behind an inspecting proxy); read (at most 1 MiB) by the first connection that needs TLS, the engine's (a guest's, the model's, a download's) or a push or pull's, never by a command that does not connect",
    ),
    var(
        "WB_FIRST_PARTY_TOOLKITS",
        Operator,
        "toolkit roots the operator vouches for (`:`-separated): their builds register at `instance`",
    ),
    var(
        "WB_TRUSTED_SIGNERS",
        Operator,
        "did:keys whose signed toolkits register at `instance` (comma-separated)",
    ),
    var(
        "WB_OCI_SIGNERS",
        Operator,
        "did:keys a pulled component must be signed by (comma-separated), beside the home's trust file",
    ),
    var(
        "WB_OCI_REGISTRY",
        Operator,
        "the registry host `WB_OCI_USERNAME` and `WB_OCI_PASSWORD` are for",
    ),
    var(
        "WB_OCI_USERNAME",
        Operator,
        "the registry user, for `WB_OCI_REGISTRY` only",
    ),
    secret(
        "WB_OCI_PASSWORD",
        Operator,
        "the registry password or token, for `WB_OCI_REGISTRY` only",
    ),
    secret(
        "WB_SIGNING_KEY",
        Operator,
        "base64 of a 32-byte Ed25519 seed: the tenant's did:key for signing, in place of the home's",
    ),
    secret(
        "WB_API_TOKEN",
        Operator,
        "the bearer token `wbx serve-api` requires (off loopback it must be set)",
    ),
    secret(
        "WB_MCP_TOKEN",
        Operator,
        "the bearer token `wbx mcp --listen` requires",
    ),
    var(
        "WB_BWRAP",
        Operator,
        "the bubblewrap binary the container tier runs; default `bwrap` from `/usr/bin` or `/bin`",
    ),
    var(
        "WB_AGENT_EXEC",
        Operator,
        "`1`: `wbx serve-api` lets runs ask for the agent's exec-only tools",
    ),
    var(
        "WB_LLM_BASE_URL",
        Agent,
        "the OpenAI-compatible chat/completions endpoint of the `llm` cap and the agent; default OpenRouter's",
    ),
    secret(
        "WB_LLM_API_KEY",
        Agent,
        "its key, added by the host (else `OPENROUTER_API_KEY`); no guest ever holds it",
    ),
    var("WB_LLM_MODEL", Agent, "the model asked for"),
    var(
        "WB_LLM_MAX_TOKENS",
        Agent,
        "the most tokens one completion may answer with (default 4096)",
    ),
    var(
        "WB_SEARCH_URL",
        Agent,
        "a SearXNG-compatible endpoint for the agent's `web_search`",
    ),
    var(
        "WB_AGENT_GIT_REMOTE",
        Agent,
        "the git remote the agent's `git` tool pushes to (`{tenant}` is replaced)",
    ),
    var(
        "WB_AGENT_GIT_BRANCH",
        Agent,
        "the branch it pushes (default `main`)",
    ),
    var(
        "WB_AGENT_WEB_ROOT",
        Agent,
        "the folder the agent's `publish` tool writes pages into (`{tenant}` is replaced)",
    ),
    var(
        "WB_IMAGE_BASE_URL",
        Agent,
        "an OpenAI-compatible images endpoint for the agent's `image` tool",
    ),
    secret("WB_IMAGE_API_KEY", Agent, "its key"),
    var("WB_IMAGE_MODEL", Agent, "the image model asked for"),
    var(
        "WB_NO_HELPER",
        Engine,
        "set in a compile helper's environment: it compiles itself or fails, never starting another",
    ),
    var(
        "WB_CATALOG_DIR",
        Contributor,
        "where the tests find the catalog's pinned programs; default `target/catalog` (`cargo xtask test` fills it)",
    ),
    var(
        "WB_SUITES_DIR",
        Contributor,
        "the third-party suites `.ci/run` and the wasip1 bench run; default `../shared/testdata`",
    ),
    var(
        "WB_BLESS",
        Contributor,
        "`1`: the tests of generated pages rewrite them (docs/cli.md, docs/environment.md)",
    ),
    var(
        "WB_TEST_LOCKED_CHILD",
        Contributor,
        "marks the child process of a ceilings test",
    ),
    var(
        "WB_PROFILE_LOOP",
        Contributor,
        "the pipeline bench: loop one line this many seconds, for a profiler",
    ),
    var(
        "WB_PROFILE_LINE",
        Contributor,
        "the pipeline bench: the line that loop runs",
    ),
    var(
        "WB_BENCH_ORAS_PYTHON",
        Contributor,
        "the oci bench: a Python with `oras` installed, its peer",
    ),
    var(
        "WB_BENCH_OCI_COMPONENT",
        Contributor,
        "the oci bench: the component it pushes and pulls",
    ),
];

/// Strings spelled like variables that are not read from the environment.
#[cfg(test)]
pub(crate) const NOT_VARIABLES: &[(&str, &str)] = &[
    ("WB_TASKS", "the JetStream stream of the node tier"),
    (
        "WB_TARGET",
        "the build's target, set by the engine's build script at compile time",
    ),
];

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// List every variable the engine reads and what it does, set or not.
    #[arg(long)]
    list: bool,
}

/// The paths this home uses, by name.
fn paths(home: &std::path::Path) -> Vec<(&'static str, String)> {
    let shown = |p: Option<PathBuf>| p.map_or_else(|| "(none)".into(), |p| p.display().to_string());
    let absolute = |p: &std::path::Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    let socket = workbooks_wire::socket_path_in(
        &workbooks_wire::socket_dir(false).unwrap_or_default(),
        home,
    )
    .ok();
    vec![
        ("home", absolute(home).display().to_string()),
        (
            "cache",
            shown(Some(absolute(&workbooks_wire::cache_dir(home)))),
        ),
        ("state", shown(workbooks::default_state_dir())),
        (
            "socket",
            socket.map_or_else(
                || "(none: the home does not exist yet, or no runtime directory)".into(),
                |p| p.display().to_string(),
            ),
        ),
    ]
}

/// Every variable, by who sets it, and what it does.
fn list() -> u8 {
    if crate::out::json() {
        let all: Vec<serde_json::Value> = VARIABLES
            .iter()
            .map(|v| {
                serde_json::json!({
                    "name": v.name,
                    "for": v.audience.heading(),
                    "secret": v.secret,
                    "does": v.does,
                })
            })
            .collect();
        outln!("{}", serde_json::Value::Array(all));
        return 0;
    }
    for audience in [Everyone, Operator, Agent, Engine, Contributor] {
        outln!("{}:", audience.heading());
        for v in VARIABLES.iter().filter(|v| v.audience == audience) {
            outln!("  {:<24} {}", v.name, v.does.replace('`', ""));
        }
    }
    0
}

pub(crate) fn run(args: Args, home: PathBuf) -> u8 {
    if args.list {
        return list();
    }
    let paths = paths(&home);
    let set: Vec<(&Variable, String)> = VARIABLES
        .iter()
        .filter_map(|v| {
            let value = std::env::var_os(v.name)?;
            let shown = if v.secret {
                "(set; hidden)".to_string()
            } else {
                value.to_string_lossy().into_owned()
            };
            Some((v, shown))
        })
        .collect();
    if crate::out::json() {
        let paths: serde_json::Map<String, serde_json::Value> = paths
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.into()))
            .collect();
        let vars: serde_json::Map<String, serde_json::Value> = set
            .into_iter()
            .map(|(v, value)| (v.name.to_string(), value.into()))
            .collect();
        outln!("{}", serde_json::json!({"paths": paths, "variables": vars}));
        return 0;
    }
    for (name, path) in paths {
        outln!("{name:<8} {path}");
    }
    if set.is_empty() {
        outln!("\nno WB_* variable is set (`wbx env --list` lists them and what each does)");
    } else {
        outln!();
        for (v, value) in set {
            outln!("{}={value}", v.name);
        }
    }
    0
}

/// docs/environment.md: every variable by audience, then every exit code.
#[cfg(test)]
pub(crate) fn page() -> String {
    let mut out = String::from(
        "# Environment variables and exit codes\n\n\
         <!-- Generated from the CLI's own tables (host/cli/src/env.rs, host/cli/src/exit.rs); \
         a test fails when it differs, or when the code reads a WB_* variable missing here. \
         Regenerate: WB_BLESS=1 cargo test -p workbooks-cli --bin wbx environment -->\n\n\
         `wbx env` prints the paths this home uses and every variable below that is set \
         (secrets as `(set; hidden)`).\n",
    );
    for audience in [Everyone, Operator, Agent, Engine, Contributor] {
        out.push_str(&format!(
            "\n## {}\n\n| variable | what it does |\n|---|---|\n",
            audience.heading()
        ));
        for v in VARIABLES.iter().filter(|v| v.audience == audience) {
            let secret = if v.secret {
                " (a secret: never printed)"
            } else {
                ""
            };
            out.push_str(&format!("| `{}` | {}{secret} |\n", v.name, v.does));
        }
    }
    out.push_str(
        "\n## Exit codes\n\n\
         One table for every verb. Under `--json` a failure is one object on stdout, \
         `{\"error\": {\"kind\", \"message\", \"exit\"}}`, with the same exit code; `kind` is the \
         name below.\n\n| code | kind | what it means |\n|---|---|---|\n",
    );
    for c in crate::exit::TABLE {
        out.push_str(&format!("| {} | `{}` | {} |\n", c.code, c.kind, c.means));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn repo() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .find(|p| p.join("host/cli/src/main.rs").is_file())
            .expect("the repository root")
            .to_path_buf()
    }

    /// Every `WB_*` name spelled in the code, the tests, the benches and CI.
    fn spelled() -> std::collections::BTreeSet<String> {
        fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
            for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
                let p = entry.path();
                let name = entry.file_name();
                if p.is_dir() && name != "target" && name != "fuzz" {
                    walk(&p, out);
                } else if p.extension().is_some_and(|e| e == "rs")
                    || p.parent()
                        .and_then(Path::file_name)
                        .is_some_and(|d| d == ".ci")
                {
                    out.push(p);
                }
            }
        }
        let root = repo();
        let mut files = Vec::new();
        for dir in ["host", "wire", "tests", ".ci"] {
            walk(&root.join(dir), &mut files);
        }
        // This file spells every name it lists.
        files.retain(|f| !f.ends_with("host/cli/src/env.rs"));
        assert!(files.len() > 100, "found only {} files", files.len());
        let mut names = std::collections::BTreeSet::new();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap_or_default();
            let mut rest = text.as_str();
            while let Some(at) = rest.find("WB_") {
                let tail = &rest[at..];
                let len = tail
                    .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
                    .unwrap_or(tail.len());
                let before = rest[..at].chars().next_back();
                if len > 3 && !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                    names.insert(tail[..len].trim_end_matches('_').to_string());
                }
                rest = &tail[len.max(3)..];
            }
        }
        names
    }

    #[test]
    fn every_wb_variable_the_code_reads_is_on_the_page() {
        let names = spelled();
        assert!(
            names.contains("WB_HOME") && names.contains("WB_NET_ALLOW"),
            "{names:?}"
        );
        let missing: Vec<&String> = names
            .iter()
            .filter(|n| !VARIABLES.iter().any(|v| v.name == n.as_str()))
            .filter(|n| !NOT_VARIABLES.iter().any(|(name, _)| name == n))
            .collect();
        assert!(
            missing.is_empty(),
            "read in the code but not in env.rs's VARIABLES (and so not on docs/environment.md): {missing:?}"
        );
        let stale: Vec<&str> = VARIABLES
            .iter()
            .map(|v| v.name)
            .filter(|n| !names.contains(*n))
            .collect();
        assert!(stale.is_empty(), "listed but read nowhere: {stale:?}");
    }

    #[test]
    fn the_environment_page_is_what_the_tables_give() {
        let file = repo().join("docs/environment.md");
        let want = page();
        if std::env::var_os("WB_BLESS").is_some() {
            std::fs::write(&file, &want).expect("write docs/environment.md");
            return;
        }
        let held = std::fs::read_to_string(&file).unwrap_or_default();
        assert!(
            held == want,
            "docs/environment.md differs from the tables; regenerate it with \
             WB_BLESS=1 cargo test -p workbooks-cli --bin wbx environment"
        );
    }
}
