//! `wbx cache gc|clean`: free the compile cache, saying what each frees
//! (`--dry-run` lists it and removes nothing). gc frees what this build can
//! never use; clean frees everything, made again on first use.

use crate::options::engine;
use crate::{exit, fail};
use std::path::PathBuf;

#[derive(Debug, clap::Subcommand)]
pub(crate) enum CacheCommand {
    /// Free what this build can never use: code another engine compiled,
    /// entries without their seal, files an interrupted write left.
    Gc(Upkeep),
    /// Free the whole compile cache (compiled code, compositions); each
    /// entry is made again on first use.
    Clean(Upkeep),
}

#[derive(Debug, clap::Args)]
pub(crate) struct Upkeep {
    /// List what would be freed, and remove nothing.
    #[arg(long)]
    dry_run: bool,
}

/// `n` bytes, for a person.
fn size(n: u64) -> String {
    match n {
        n if n >= 1 << 30 => format!("{:.1} GiB", n as f64 / (1u64 << 30) as f64),
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

pub(crate) fn run(cmd: CacheCommand, home: PathBuf) -> u8 {
    let engine = match engine(home) {
        Ok(e) => e,
        Err(code) => return code,
    };
    let (verb, upkeep, freed) = match &cmd {
        CacheCommand::Gc(u) => ("gc", u, engine.cache_gc(u.dry_run)),
        CacheCommand::Clean(u) => ("clean", u, engine.cache_clean(u.dry_run)),
    };
    let freed = match freed {
        Ok(freed) => freed,
        Err(e) => return fail(&format!("cache {verb}"), e, exit::ENGINE),
    };
    let dir = engine.cache_dir().map_or_else(
        || "(no disk cache)".to_string(),
        |d| d.display().to_string(),
    );
    if crate::out::json() {
        let files: Vec<serde_json::Value> = freed
            .files
            .iter()
            .map(|(path, bytes)| serde_json::json!({"file": path, "bytes": bytes}))
            .collect();
        outln!(
            "{}",
            serde_json::json!({
                "cache": dir,
                "dry_run": upkeep.dry_run,
                "files": files,
                "bytes": freed.bytes(),
            })
        );
        return 0;
    }
    if upkeep.dry_run {
        for (path, bytes) in &freed.files {
            outln!("{:>10}  {}", size(*bytes), path.display());
        }
    }
    let verb = if upkeep.dry_run {
        "would free"
    } else {
        "freed"
    };
    outln!(
        "{verb} {} in {} files from {dir}",
        size(freed.bytes()),
        freed.files.len()
    );
    0
}
