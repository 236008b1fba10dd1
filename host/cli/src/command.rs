//! `wbx command`: the command registry.

use crate::options::{StageArgs, StageOptions as _, engine_with, read_file, runtime, stdin_stream};
use crate::{exit, fail};
use std::io::Write;
use std::path::PathBuf;
use workbooks::commands::{ArgMode, RegistryError, Tier, builtin, listing};

#[derive(Debug, clap::Subcommand)]
pub(crate) enum Command {
    /// Register (or hot-swap) a command: a wasm32-wasip2 command component
    /// or a WASI preview 1 core module. `--stub`, `--profile` and `--caps`
    /// are recorded with it and hold for every run (`command show` shows
    /// them).
    Register {
        /// The name to bind (A-Z a-z 0-9 _ . -).
        name: String,
        /// The artifact.
        file: PathBuf,
        /// How it takes its argument: argv, or stdin1 (first stdin line).
        #[arg(long, default_value = "argv", value_name = "MODE")]
        arg_mode: String,
        /// Where it runs: instance (in process) or os_process (child wbx).
        #[arg(long, default_value = "instance", value_name = "TIER")]
        tier: String,
        /// Replace a command registered under the name already (a hot
        /// swap: calls in flight finish on the old bytes). What this line
        /// gives (--profile, --caps, --stub) replaces what was recorded.
        #[arg(long)]
        replace: bool,
        /// The profile its runs may use at most, recorded with it: every
        /// run narrows its caller's grant to the profile's caps.
        #[arg(long, value_name = "P")]
        profile: Option<String>,
        /// The caps its runs may use at most (comma-separated), recorded
        /// with it (within --profile when both are given).
        #[arg(long, value_name = "CAPS")]
        caps: Option<String>,
    },
    /// List registered and built-in commands.
    List,
    /// Show one command.
    Show {
        /// The name.
        name: String,
    },
    /// Remove a registered command (its bytes stay for runs in flight).
    Remove {
        /// The name.
        name: String,
    },
    /// Run one command with argv given directly (no shell parsing).
    Run {
        #[command(flatten)]
        stage: StageArgs,
        /// The name.
        name: String,
        /// Its arguments.
        #[arg(last = true)]
        args: Vec<String>,
    },
}

fn registry_failure(e: RegistryError) -> u8 {
    let code = match e {
        RegistryError::InvalidName(_)
        | RegistryError::PrefixTooLarge(_)
        | RegistryError::NotAFloor(_)
        | RegistryError::Ceiling(_) => exit::USAGE,
        RegistryError::Reserved(_)
        | RegistryError::Pinned { .. }
        | RegistryError::Exists { .. }
        | RegistryError::Full => exit::REFUSED,
        RegistryError::NotWasm(_) | RegistryError::Integrity { .. } => exit::LOAD,
        RegistryError::NotFound(_) => exit::NOT_FOUND,
        RegistryError::Io(_) | RegistryError::Corrupt { .. } => exit::ENGINE,
    };
    crate::out::report(&e.to_string(), code);
    code
}

pub(crate) fn run(cmd: Command, home: PathBuf) -> u8 {
    let body = || -> Result<u8, u8> {
        let memory = match &cmd {
            Command::Run { stage, .. } => stage.memory.map(|m| m << 20),
            _ => None,
        };
        let engine = engine_with(home, false, memory)?;
        let registry = engine.registry();
        match cmd {
            Command::Register {
                name,
                file,
                arg_mode,
                tier,
                replace,
                profile,
                caps,
            } => {
                let caps = caps
                    .map(|words| workbooks::CapSet::parse(&words))
                    .transpose()
                    .map_err(|e| fail("usage", format!("--caps: {e}"), exit::USAGE))?;
                // Checked before anything is registered: a refused ceiling
                // must not leave the command registered without one.
                if let Some(p) = &profile {
                    workbooks::Profile::parse(p).map_err(|e| fail("usage", e, exit::USAGE))?;
                    if let Some(c) = caps {
                        workbooks::Grant::narrowed(p, c)
                            .map_err(|e| fail("usage", e, exit::USAGE))?;
                    }
                }
                let arg_mode = ArgMode::parse(&arg_mode)
                    .ok_or_else(|| fail("usage", "--arg-mode is argv or stdin1", exit::USAGE))?;
                let tier = Tier::parse(&tier).filter(|t| t.is_floor()).ok_or_else(|| {
                    fail("usage", "--tier is instance or os_process", exit::USAGE)
                })?;
                let (file, pulled) = crate::oci::local(&file, engine.home())?;
                let bytes = read_file(&file)?;
                let (entry, replaced) = if replace {
                    registry.replace(&name, bytes, arg_mode, tier)
                } else {
                    registry
                        .register(&name, bytes, arg_mode, tier)
                        .map(|e| (e, None))
                }
                .map_err(registry_failure)?;
                // The origin follows the bytes: a reference pins its digest
                // and signers; a file clears what a reference had set.
                let origin = pulled.map(|p| workbooks::commands::Origin {
                    reference: p.pinned(),
                    signers: p.signers,
                });
                let entry = if origin.is_some() || entry.origin.is_some() {
                    registry
                        .set_origin(&entry.name, origin)
                        .map_err(registry_failure)?
                } else {
                    entry
                };
                // What the line gives is kept with the entry: the stubs and
                // the ceiling hold for every run, wherever it is called.
                let stubs = crate::options::stubs_given();
                let entry = if !stubs.is_empty() || !entry.stubs.is_empty() {
                    registry
                        .set_stubs(&entry.name, stubs)
                        .map_err(registry_failure)?
                } else {
                    entry
                };
                let entry = if profile.is_some() || caps.is_some() || entry.ceiling().is_some() {
                    registry
                        .set_ceiling(&entry.name, profile.as_deref(), caps)
                        .map_err(registry_failure)?
                } else {
                    entry
                };
                if let Some(o) = &entry.origin {
                    outln!("from {}", o.reference);
                }
                match replaced {
                    Some(old) => outln!(
                        "registered {} → sha256:{} (replaced sha256:{}, tier {})",
                        entry.name,
                        entry.sha256,
                        old.sha256,
                        old.tier.name()
                    ),
                    None => outln!("registered {} → sha256:{}", entry.name, entry.sha256),
                }
                Ok(0)
            }
            Command::List => {
                let entries = registry.list().map_err(registry_failure)?;
                outln!("{}", listing::list_text(&entries, crate::out::json()));
                Ok(0)
            }
            Command::Show { name } => {
                let entry = registry.get(&name).map_err(registry_failure)?;
                let text = listing::show_text(&name, entry.as_ref())
                    .ok_or_else(|| registry_failure(RegistryError::NotFound(name.clone())))?;
                outln!("{text}");
                if let Some(entry) = entry.filter(|_| !builtin::is_reserved(&name)) {
                    outln!("path: {}", registry.path_of(&entry).display());
                }
                Ok(0)
            }
            Command::Remove { name } => {
                let entry = registry.remove(&name).map_err(registry_failure)?;
                outln!("removed {} (sha256:{})", entry.name, entry.sha256);
                Ok(0)
            }
            Command::Run { stage, name, args } => {
                let mut opts = stage.to_options()?;
                opts.stdin = stdin_stream();
                match runtime()?.block_on(engine.commands().run(&name, args, opts)) {
                    Ok(out) => {
                        let _ = std::io::stderr().write_all(&out.stderr);
                        crate::out::write_bytes(&out.stdout);
                        Ok(u8::try_from(out.exit_code).unwrap_or(1))
                    }
                    Err(e) => {
                        let code = exit::for_line_error(&e);
                        crate::out::report(&format!("{e}{}", exit::raise_hint(code)), code);
                        Ok(code)
                    }
                }
            }
        }
    };
    body().unwrap_or_else(|code| code)
}
