//! `wbx exec`: run a command once (a component exporting `wasi:cli/run`,
//! or a wasip1 core module exporting `_start`), with our stdin, stdout and
//! stderr passed through, exactly the `--env` pairs as its environment, and
//! its exit code propagated.
//!
//! The children the tiers start are not run here: `wbx exec --framed`, and
//! nothing else on the line, is `workbooks::child::run`, which reads its
//! request on stdin (see `main`).

mod early;

pub(crate) use early::early;

use crate::{exit, fail};
use std::path::{Path, PathBuf};
use workbooks::{CapSet, Grant, Output, Preopen, Profile, RunError, SessionOptions, Stdin};

#[derive(Debug, PartialEq, clap::Args)]
pub(crate) struct Args {
    /// Capability profile: compute, minimal, network or posix.
    #[arg(long, default_value = "compute", value_name = "P")]
    profile: String,
    /// Narrow the profile to these caps (comma-separated).
    #[arg(long, value_name = "CAPS")]
    caps: Option<String>,
    /// Preopen a host directory as HOST::GUEST (add ::ro for read-only).
    #[arg(long = "dir", value_name = "HOST::GUEST")]
    dirs: Vec<String>,
    /// Wall-clock budget in milliseconds (default: the profile's).
    #[arg(long, value_name = "MS")]
    timeout: Option<u64>,
    /// Memory cap in MiB, in place of the profile's.
    #[arg(long, value_name = "MIB")]
    memory: Option<usize>,
    /// Fuel budget (default 5e9).
    #[arg(long, value_name = "N", default_value_t = workbooks::limits::COMMAND_FUEL)]
    fuel: u64,
    /// Set NAME=VALUE in the guest's environment (repeatable); it sees
    /// these and nothing of the host's.
    #[arg(long = "env", value_name = "NAME=VALUE")]
    env: Vec<String>,
    /// Let the guest's network caps reach only these destinations
    /// (repeatable), in Spin's `allowed_outbound_hosts` syntax:
    /// `https://api.example.com`, `https://*.example.com:443`,
    /// `tcp://db.example.com:5432`. The floor still applies under them.
    #[arg(long = "allow-host", value_name = "DEST")]
    allow_hosts: Vec<String>,
    /// Run under stored grant ID (`wbx grant add`): its tenant, its profile
    /// and caps when it names them, its scopes and expiry, read again at
    /// every call so a narrowing or a revocation reaches the run.
    #[arg(long, value_name = "ID", conflicts_with = "allow_hosts")]
    grant: Option<String>,
    /// Refuse to run unless the file's sha256 is this (artifact_integrity).
    #[arg(long, value_name = "HEX")]
    expect_sha256: Option<String>,
    /// Tenant whose durable state (vfs volumes, kv, queues) the command
    /// reaches (default: the grant's, else `default`).
    #[arg(long)]
    tenant: Option<String>,
    /// Instance id the command runs as (names its vfs volumes within the
    /// tenant; default: the file's stem).
    #[arg(long, value_name = "ID")]
    id: Option<String>,
    /// The command (a component or a wasip1 core module: a file, or an
    /// `oci://` reference), then the arguments passed to it: everything
    /// after FILE is the guest's, as for `wasmtime run`, and a `--` right
    /// after FILE is taken too. The guest sees FILE, as written, as its
    /// program name.
    #[arg(
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "FILE [ARGS]"
    )]
    command: Vec<String>,
}

impl Args {
    /// The file (or reference) to run.
    fn file(&self) -> PathBuf {
        PathBuf::from(self.command.first().map(String::as_str).unwrap_or_default())
    }

    /// What clap took for FILE when it is a flag no parser knows (the
    /// positional takes hyphenated values, so an unknown flag before FILE
    /// lands there): a usage error, never a file to read.
    fn stray_flag(&self) -> Option<&str> {
        self.command
            .first()
            .map(String::as_str)
            .filter(|f| f.starts_with('-') && *f != "-")
    }

    /// The guest's arguments after argv\[0\]: what follows FILE, less one
    /// `--` right after it.
    fn guest_args(&self) -> Vec<String> {
        let rest = self.command.get(1..).unwrap_or_default();
        let rest = match rest.split_first() {
            Some((first, after)) if first == "--" => after,
            _ => rest,
        };
        rest.to_vec()
    }
}

/// Why no exit code came back.
enum Failure {
    /// Refused before the guest ran: the kind and message printed, the
    /// exit code. An empty message was already printed where it happened.
    Before {
        kind: &'static str,
        message: String,
        code: u8,
    },
    /// The run itself failed.
    Run(RunError),
}

impl Failure {
    fn before(kind: &'static str, message: impl std::fmt::Display, code: u8) -> Self {
        Failure::Before {
            kind,
            message: message.to_string(),
            code,
        }
    }
}

/// The session id for `file`: its stem, made a valid name.
fn stem_id(file: &std::path::Path) -> String {
    let id: String = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                c
            } else {
                '-'
            }
        })
        .take(workbooks::limits::MAX_NAME_BYTES)
        .collect();
    if id.is_empty() || id == "." || id == ".." {
        "command".to_string()
    } else {
        id
    }
}

pub(crate) fn run(args: Args, home: PathBuf) -> u8 {
    if let Some(flag) = args.stray_flag() {
        return fail(
            "usage",
            format!(
                "unexpected argument '{flag}' found (flags go before FILE; everything after FILE is the guest's)"
            ),
            exit::USAGE,
        );
    }
    match execute(args, home) {
        Ok(out) => u8::try_from(out.exit_code).unwrap_or(1),
        Err(Failure::Run(e)) => {
            // Run errors already start with their kind ("timeout: ...").
            let code = exit::for_run_error(&e);
            crate::out::report(&format!("{e}{}", exit::raise_hint(code)), code);
            code
        }
        // Already reported where it happened.
        Err(Failure::Before { message, code, .. }) if message.is_empty() => code,
        Err(Failure::Before {
            kind,
            message,
            code,
        }) => fail(kind, message, code),
    }
}

fn execute(mut args: Args, home: PathBuf) -> Result<workbooks::RunOutput, Failure> {
    // A stored grant's tenant, profile and caps stand in for the flags.
    let record = match &args.grant {
        None => None,
        Some(id) => {
            let r = crate::grant::book(&home).get(id).ok_or_else(|| {
                Failure::before(
                    "refused",
                    workbooks::grants::GrantUseError::Unknown(id.clone()),
                    exit::REFUSED,
                )
            })?;
            args.tenant = args.tenant.or_else(|| Some(r.tenant.clone()));
            args.profile = r.profile.clone().unwrap_or(args.profile);
            args.caps = r.caps.clone().or(args.caps);
            Some(r)
        }
    };
    let tenant = args.tenant.clone().unwrap_or_else(|| "default".into());
    let profile =
        Profile::parse(&args.profile).map_err(|e| Failure::before("usage", e, exit::USAGE))?;
    let grant = match &args.caps {
        None => Grant::profile(profile.name()),
        Some(words) => CapSet::parse(words)
            .and_then(|c| Grant::narrowed(profile.name(), c))
            .map_err(|e| Failure::before("refused", e, exit::REFUSED))?,
    };
    let mut dirs = args
        .dirs
        .iter()
        .map(|spec| Preopen::parse(spec))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Failure::before("usage", e, exit::USAGE))?;
    let mut env =
        crate::options::parse_env(&args.env).map_err(|code| Failure::before("usage", "", code))?;
    if let Some(r) = &record {
        crate::options::reach_of(r, !args.dirs.is_empty(), &mut dirs, &mut env)
            .map_err(|e| Failure::before("usage", e, exit::USAGE))?;
    }
    let scope = crate::options::scope(&args.allow_hosts)
        .map_err(|e| Failure::before("usage", e, exit::USAGE))?;
    let named = args.file();
    let (file, _) =
        crate::oci::local(&named, &home).map_err(|code| Failure::before("load", "", code))?;
    let engine = crate::options::engine_built(home, false, args.memory.map(|m| m << 20), Ok)
        .map_err(|code| Failure::before("engine", "", code))?;
    let artifact = engine
        .load_artifact(&file)
        .map_err(|e| Failure::before("load", e, exit::LOAD))?;
    if let Some(expected) = &args.expect_sha256
        && artifact.sha256_hex() != expected.to_ascii_lowercase()
    {
        return Err(Failure::before(
            "artifact_integrity",
            format!("{} does not match sha256 {expected}", named.display()),
            exit::LOAD,
        ));
    }
    let scope = match &record {
        None => scope,
        Some(r) => Some(
            engine
                .granted_scope(&r.id, &tenant, &format!("sha256:{}", artifact.sha256_hex()))
                .map_err(|e| Failure::before("refused", e, exit::REFUSED))?,
        ),
    };
    let docked = engine
        .dock(&artifact, &grant)
        .map_err(|e| Failure::before("refused", &e, exit::for_dock_error(&e)))?;
    let id = args.id.clone().unwrap_or_else(|| {
        crate::oci::instance_name(&named)
            .map_or_else(|| stem_id(&named), |n| stem_id(Path::new(&n)))
    });
    let mut opts = SessionOptions::new(id, tenant);
    // A user's run shows FILE as written.
    opts.program = Some(named.display().to_string());
    opts.args = args.guest_args();
    opts.env = env;
    opts.stdin = Stdin::Inherit;
    opts.stdout = Output::Inherit;
    opts.stderr = Output::Inherit;
    opts.dirs = dirs;
    opts.scope = scope;
    // One guest, one thread: its file calls need not hop to a pool.
    opts.inline_file_io = true;
    opts.timeout = args.timeout.map(std::time::Duration::from_millis);
    opts.fuel = Some(args.fuel);
    opts.memory = args.memory.map(|m| m << 20);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .thread_keep_alive(std::time::Duration::from_secs(24 * 3600))
        .build()
        .map_err(|e| Failure::before("engine", e, exit::ENGINE))?;
    runtime
        .block_on(engine.run(&docked, opts))
        .map_err(Failure::Run)
}
