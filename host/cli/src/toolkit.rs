//! `wbx toolkit`: list, show, search, verify and sign the toolkits under
//! the toolkits root (`--root`, else `WB_TOOLKITS_ROOT` when it names a
//! folder, else `toolkits/` or `../toolkits`); `run` is refused, as native
//! execution is.

use crate::{exit, fail};
use std::path::PathBuf;
use workbooks::commands::Registry;
use workbooks::identity::Identity;
use workbooks_toolkit::{self as toolkit, Toolkits};

#[derive(Debug, clap::Args)]
pub(crate) struct ToolkitArgs {
    /// The toolkits root.
    #[arg(long, global = true, value_name = "DIR")]
    root: Option<PathBuf>,
    #[command(subcommand)]
    verb: ToolkitVerb,
}

#[derive(Debug, clap::Subcommand)]
enum ToolkitVerb {
    /// List the toolkits: id, status, tagline.
    List,
    /// Show a toolkit's manifest and skill index, or one skill's text.
    Show {
        /// The toolkit.
        id: String,
        /// A skill's slug.
        skill: Option<String>,
    },
    /// Find toolkits and skills mentioning a phrase.
    Search {
        /// The phrase (case-insensitive).
        query: Vec<String>,
    },
    /// Check a toolkit's manifest, exec contract, caps and trust: ✓ or ✗
    /// per check, exit 1 if any ✗.
    Verify {
        /// The toolkit.
        id: String,
    },
    /// Sign a third-party manifest as the tenant's did:key
    /// (`WB_SIGNING_KEY`, base64 of a 32-byte seed, overrides the key).
    Sign {
        /// The toolkit.
        id: String,
        /// The tenant whose key signs.
        #[arg(long, default_value = "default")]
        tenant: String,
    },
    /// Build the toolkit's artifact (a prebuilt path:, a wasm:/archive:
    /// URL pinned by #+SHA256, or oci:HOST/REPO@sha256:…) and register it under #+CLI_BIN, at
    /// `instance` only if the operator vouches for it
    /// (`WB_FIRST_PARTY_TOOLKITS`, `WB_TRUSTED_SIGNERS`), else one tier
    /// stronger.
    Build {
        /// The toolkit.
        id: String,
        /// Replace a command registered under its #+CLI_BIN already.
        #[arg(long)]
        replace: bool,
    },
    /// Ship a toolkit folder into the root as ID: copied, verified, and
    /// only then put in place.
    Push {
        /// The toolkit's id (its #+TOOLKIT).
        id: String,
        /// The folder to ship.
        dir: PathBuf,
        /// Replace a toolkit already there.
        #[arg(long)]
        replace: bool,
    },
    /// Package a Claude skill (a folder with SKILL.md), a markdown file or
    /// a folder of them as a discovery-only toolkit, then audit it.
    Import {
        /// The skill folder or markdown file.
        source: PathBuf,
        /// The toolkit id (default: the skill's name, else the file's stem).
        #[arg(long = "as", value_name = "ID")]
        id: Option<String>,
        /// The folder to write it in (default: the toolkits root).
        #[arg(short, long, value_name = "DIR")]
        output: Option<PathBuf>,
    },
    /// The wasm-compatibility audit of a toolkit folder: every recipe that
    /// would need native execution here; exit 1 if any.
    Audit {
        /// The toolkit folder.
        dir: PathBuf,
        /// Turn the shell blocks it names into example blocks.
        #[arg(long)]
        fix: bool,
    },
    /// Remove a toolkit: unregister the command its build registered
    /// (its #+CLI_BIN) and delete its folder from the root.
    Remove {
        /// The toolkit.
        id: String,
        /// Unregister its command, and keep its folder.
        #[arg(long)]
        keep_files: bool,
    },
    /// Run a task recipe: refused, native execution is banned.
    Run {
        /// The toolkit.
        id: String,
        /// The task and its arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        rest: Vec<String>,
    },
}

pub(crate) use crate::options::{keyring, seed};

/// The toolkits under `--root`, else the default root; first-party where
/// the operator vouches (`WB_FIRST_PARTY_TOOLKITS`, `WB_TRUSTED_SIGNERS`).
pub(crate) fn toolkits(root: Option<PathBuf>) -> Toolkits {
    Toolkits::at_or_from_env(root)
}

pub(crate) fn run(args: ToolkitArgs, home: PathBuf) -> u8 {
    let kits = toolkits(args.root.clone());
    let json = crate::out::json();
    let print = |text: String, value: serde_json::Value| {
        if json {
            outln!("{value}");
        } else {
            outln!("{text}");
        }
    };
    let failed = |e: toolkit::ToolkitError| fail("toolkit", e, exit::USAGE);
    match args.verb {
        ToolkitVerb::List => {
            let all = kits.list();
            let rows: Vec<serde_json::Value> = all
                .iter()
                .map(|t| {
                    serde_json::json!({
                        "id": t.id,
                        "title": t.manifest.kw("TITLE"),
                        "status": t.manifest.kw("STATUS"),
                        "tagline": t.tagline(),
                        "cli": t.manifest.cli_bin(),
                        "skills": t.skills(),
                    })
                })
                .collect();
            print(toolkit::list_text(&all), rows.into());
            0
        }
        ToolkitVerb::Show { id, skill } => {
            let tk = match kits.get(&id) {
                Ok(tk) => tk,
                Err(e) => return failed(e),
            };
            match skill {
                Some(slug) => match tk.skill(&slug) {
                    Ok(text) => {
                        print(
                            text.trim_end().to_string(),
                            serde_json::json!({"id": id, "skill": slug, "text": text}),
                        );
                        0
                    }
                    Err(e) => failed(e),
                },
                None => {
                    let value = serde_json::json!({
                        "id": tk.id,
                        "keywords": tk.manifest.keywords,
                        "skills": tk.skills(),
                    });
                    print(toolkit::show_text(&tk), value);
                    0
                }
            }
        }
        ToolkitVerb::Search { query } => {
            let hits = toolkit::search(&kits.list(), &query.join(" "));
            let text = if hits.is_empty() {
                "no matches".to_string()
            } else {
                hits.join("\n")
            };
            print(text, hits.into());
            0
        }
        ToolkitVerb::Verify { id } => {
            let tk = match kits.get(&id) {
                Ok(tk) => tk,
                Err(e) => return failed(e),
            };
            let report = toolkit::verify(&tk, &Registry::new(&home));
            let code = if report.ok() { 0 } else { exit::FAILED };
            let value = serde_json::json!({"ok": report.ok(), "report": report});
            let why = format!("toolkit {id} does not verify");
            print(report.text(), crate::out::verdict(value, code, &why));
            code
        }
        ToolkitVerb::Sign { id, tenant } => {
            let signed = kits.get(&id).and_then(|tk| {
                let identity = Identity::of_tenant(&keyring(&home), &tenant, seed().as_deref())?;
                toolkit::sign(&tk, &identity).map(|sig| (identity.did, sig))
            });
            match signed {
                Ok((did, sig)) => {
                    print(
                        format!("signed {id} as {did}"),
                        serde_json::json!({"id": id, "author_did": did, "signature": sig}),
                    );
                    0
                }
                Err(e) => failed(e),
            }
        }
        ToolkitVerb::Build { id, replace } => {
            let tk = match kits.get(&id) {
                Ok(tk) => tk,
                Err(e) => return failed(e),
            };
            let spinner = crate::options::spinner(format!("building toolkit {id}"));
            let built = crate::options::engine(home).and_then(|engine| {
                crate::options::runtime().map(|rt| {
                    rt.block_on(toolkit::Builds::new(engine.clone()).toolkit(&tk, replace))
                })
            });
            spinner.finish_and_clear();
            match built {
                Ok(Ok(entry)) => {
                    print(
                        format!(
                            "built {id}: registered {} → sha256:{}",
                            entry.name, entry.sha256
                        ),
                        serde_json::to_value(&entry).unwrap_or_default(),
                    );
                    0
                }
                Ok(Err(e)) => fail("toolkit", e, 1),
                Err(code) => code,
            }
        }
        ToolkitVerb::Remove { id, keep_files } => {
            let tk = match kits.get(&id) {
                Ok(tk) => tk,
                Err(e) => return fail("toolkit", e, exit::NOT_FOUND),
            };
            let registry = Registry::new(&home);
            let unregistered = match tk.manifest.cli_bin() {
                Some(bin) => match registry.get(bin) {
                    Ok(Some(_)) => match registry.remove(bin) {
                        Ok(entry) => Some(entry),
                        Err(e) => return fail("toolkit", e, exit::ENGINE),
                    },
                    Ok(None) => None,
                    Err(e) => return fail("toolkit", e, exit::ENGINE),
                },
                None => None,
            };
            if !keep_files && let Err(e) = std::fs::remove_dir_all(&tk.dir) {
                return fail(
                    "toolkit",
                    format!("{}: {e}", tk.dir.display()),
                    exit::ENGINE,
                );
            }
            let command = unregistered
                .as_ref()
                .map(|e| format!("unregistered {} (sha256:{})", e.name, e.sha256))
                .unwrap_or_else(|| "no command registered".into());
            let folder = if keep_files {
                format!("kept {}", tk.dir.display())
            } else {
                format!("deleted {}", tk.dir.display())
            };
            print(
                format!("removed toolkit {id}: {command}; {folder}"),
                serde_json::json!({
                    "id": id,
                    "unregistered": unregistered.map(|e| e.name),
                    "folder": tk.dir,
                    "deleted": !keep_files,
                }),
            );
            0
        }
        ToolkitVerb::Push { id, dir, replace } => {
            match toolkit::push::push(&kits, &Registry::new(&home), &id, &dir, replace) {
                Ok(p) => {
                    print(
                        format!(
                            "pushed {} ({} files, {} bytes{}); it verifies",
                            p.id,
                            p.files,
                            p.bytes,
                            if p.replaced {
                                ", replacing the old one"
                            } else {
                                ""
                            }
                        ),
                        serde_json::to_value(&p).unwrap_or_default(),
                    );
                    0
                }
                Err(e) => fail("toolkit", e, 1),
            }
        }
        ToolkitVerb::Import { source, id, output } => {
            let Some(root) = output.or_else(|| kits.root().map(std::path::Path::to_path_buf))
            else {
                return fail("toolkit", "no toolkits root: pass -o DIR", exit::USAGE);
            };
            let registry = Registry::new(&home);
            let imported = toolkit::import::import(&source, id.as_deref(), &root).and_then(|dir| {
                let findings = toolkit::import::audit(&dir, &known(&registry), false)?;
                Ok((dir, findings))
            });
            match imported {
                Ok((dir, findings)) => {
                    let mut text =
                        format!("imported {} as a discovery-only toolkit", dir.display());
                    text.push_str(&audit_text(&findings));
                    print(
                        text,
                        serde_json::json!({"dir": dir.display().to_string(), "findings": findings}),
                    );
                    0
                }
                Err(e) => fail("toolkit", e, 1),
            }
        }
        ToolkitVerb::Audit { dir, fix } => {
            let registry = Registry::new(&home);
            match toolkit::import::audit(&dir, &known(&registry), fix) {
                Ok(findings) => {
                    let mut text = format!("audit {}", dir.display());
                    text.push_str(&audit_text(&findings));
                    let code = if findings.is_empty() { 0 } else { exit::FAILED };
                    let why = format!(
                        "{}: {} recipes would need native execution",
                        dir.display(),
                        findings.len()
                    );
                    let value =
                        serde_json::json!({"ok": findings.is_empty(), "findings": findings});
                    print(text, crate::out::verdict(value, code, &why));
                    code
                }
                Err(e) => fail("toolkit", e, exit::USAGE),
            }
        }
        ToolkitVerb::Run { .. } => fail("toolkit", toolkit::RUN_BANNED, 1),
    }
}

/// The commands a recipe may call here: the built-ins, the registered
/// commands and `wbx` itself.
fn known(registry: &Registry) -> impl Fn(&str) -> bool + '_ {
    move |word| {
        word == "wbx"
            || workbooks::commands::builtin::is_reserved(word)
            || registry.get(word).ok().flatten().is_some()
    }
}

/// The audit's findings as ✓/✗ lines.
fn audit_text(findings: &[toolkit::import::Finding]) -> String {
    if findings.is_empty() {
        return "\n✓ every recipe runs in the sandbox".into();
    }
    findings
        .iter()
        .map(|f| match f.line {
            0 => format!("\n✗ {}: {}", f.file, f.what),
            n => format!("\n✗ {}:{n}: {}", f.file, f.what),
        })
        .collect()
}
