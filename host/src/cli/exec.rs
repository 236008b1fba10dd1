//! `wbx exec`: run a command component once, with our stdin, stdout and
//! stderr passed through and its exit code propagated.

use crate::{exit, fail};
use std::path::PathBuf;
use workbooks::{Artifact, CapSet, Grant, Output, Preopen, Profile, SessionOptions, Stdin};

#[derive(Debug, clap::Args)]
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
    /// Refuse to run unless the file's sha256 is this (artifact_integrity).
    #[arg(long, value_name = "HEX")]
    expect_sha256: Option<String>,
    /// Tenant whose durable state (kv) the command reaches.
    #[arg(long, default_value = "default")]
    tenant: String,
    /// The command component.
    file: PathBuf,
    /// Arguments passed to the command.
    #[arg(last = true)]
    args: Vec<String>,
}

pub(crate) fn run(args: Args, home: PathBuf) -> u8 {
    let profile = match Profile::parse(&args.profile) {
        Ok(p) => p,
        Err(e) => return fail("usage", e, exit::USAGE),
    };
    let grant = match &args.caps {
        None => Grant::profile(profile.name()),
        Some(words) => {
            match CapSet::parse(words).and_then(|c| Grant::narrowed(profile.name(), c)) {
                Ok(g) => g,
                Err(e) => return fail("refused", e, exit::REFUSED),
            }
        }
    };
    let mut dirs = Vec::new();
    for spec in &args.dirs {
        match Preopen::parse(spec) {
            Ok(d) => dirs.push(d),
            Err(e) => return fail("usage", e, exit::USAGE),
        }
    }
    let artifact = match Artifact::from_file(&args.file) {
        Ok(a) => a,
        Err(e) => return fail("load", e, exit::LOAD),
    };
    if let Some(expected) = &args.expect_sha256
        && artifact.sha256_hex() != expected.to_ascii_lowercase()
    {
        return fail(
            "artifact_integrity",
            format!("{} does not match sha256 {expected}", args.file.display()),
            exit::LOAD,
        );
    }
    let engine = match crate::options::engine_with(home, false, args.memory.map(|m| m << 20)) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let docked = match engine.dock(&artifact, &grant) {
        Ok(d) => d,
        Err(e) => return fail("refused", &e, exit::for_dock_error(&e)),
    };
    // The session id names the command's vfs volumes: the file stem, made
    // a valid name.
    let id: String = args
        .file
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
    let id = if id.is_empty() || id == "." || id == ".." {
        "command".to_string()
    } else {
        id
    };
    let mut opts = SessionOptions::new(id, args.tenant);
    opts.args = args.args;
    opts.stdin = Stdin::Inherit;
    opts.stdout = Output::Inherit;
    opts.stderr = Output::Inherit;
    opts.dirs = dirs;
    opts.timeout = args.timeout.map(std::time::Duration::from_millis);
    opts.fuel = Some(args.fuel);
    opts.memory = args.memory.map(|m| m << 20);
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return fail("engine", e, exit::ENGINE),
    };
    match runtime.block_on(engine.run(&docked, opts)) {
        Ok(out) => u8::try_from(out.exit_code).unwrap_or(1),
        Err(e) => {
            // Run errors already start with their kind ("timeout: ...").
            eprintln!("wbx: {e}");
            exit::for_run_error(&e)
        }
    }
}
