//! `wbx catalog`: the programs this build knows by name and sha256 pin.
//! `list` groups them; `install` fetches (through the SSRF floor), checks
//! the pin and registers; `verify` hashes what the store holds again;
//! `prove` runs each row's proof line.

use crate::options::{engine, engine_with, runtime};
use crate::{exit, fail};
use std::path::PathBuf;
use std::time::Instant;
use workbooks_toolkit::catalog::{self, Catalog, CatalogError, Held, Row, Step};

#[derive(Debug, clap::Subcommand)]
pub(crate) enum CatalogCommand {
    /// List the rows by kind: name, size, whether installed, source, what it is.
    List,
    /// Fetch rows, check their sha256 pins and register them (a URL
    /// carrying several rows is fetched once).
    Install(Chosen),
    /// Hash every installed row's stored bytes again and compare with its
    /// pin (exit 1 if one differs).
    Verify,
    /// Run rows' proofs: each line, and the output it must give (exit 1
    /// if one fails or is not installed).
    Prove(Chosen),
    /// Remove installed rows: each one's command (when its name holds the
    /// row's pin) and the sysroot it keeps.
    Remove(Chosen),
}

/// The rows a command acts on.
#[derive(Debug, clap::Args)]
pub(crate) struct Chosen {
    /// The rows' names.
    #[arg(required_unless_present = "all")]
    names: Vec<String>,
    /// Every row.
    #[arg(long, conflicts_with = "names")]
    all: bool,
}

pub(crate) fn run(cmd: CatalogCommand, home: PathBuf) -> u8 {
    let json = crate::out::json();
    let body = || -> Result<u8, u8> {
        let rows = catalog::rows();
        match cmd {
            CatalogCommand::List => list(&Catalog::new(engine(home)?), rows, json),
            CatalogCommand::Install(c) => {
                let chosen = chosen(rows, &c)?;
                install(engine(home)?, &chosen, json)
            }
            CatalogCommand::Verify => verify(&Catalog::new(engine(home)?), rows, json),
            CatalogCommand::Remove(c) => {
                let chosen = chosen(rows, &c)?;
                remove(&Catalog::new(engine(home)?), &chosen, json)
            }
            CatalogCommand::Prove(c) => {
                let chosen = chosen(rows, &c)?;
                // The engine's instances must be able to hold the largest
                // memory a chosen row needs.
                let memory = chosen.iter().filter_map(|r| r.memory_mib).max();
                let engine = engine_with(home, false, memory.map(|m| m << 20))?;
                prove(&Catalog::new(engine), &chosen, json)
            }
        }
    };
    body().unwrap_or_else(|c| c)
}

/// The rows named, or all of them; an unknown name is a usage error.
fn chosen(rows: &[Row], c: &Chosen) -> Result<Vec<Row>, u8> {
    if c.all {
        return Ok(rows.to_vec());
    }
    c.names
        .iter()
        .map(|name| {
            rows.iter()
                .find(|r| r.name == *name)
                .cloned()
                .ok_or_else(|| fail("catalog", CatalogError::Unknown(name.clone()), exit::USAGE))
        })
        .collect()
}

fn mib(bytes: Option<u64>) -> String {
    bytes.map_or_else(
        || "?".into(),
        |b| format!("{:.1} MiB", b as f64 / 1048576.0),
    )
}

fn list(catalog: &Catalog, rows: &[Row], json: bool) -> Result<u8, u8> {
    let mut status = catalog.status(rows);
    if json {
        outln!("{}", serde_json::to_string(&status).unwrap_or_default());
        return Ok(0);
    }
    status.sort_by(|a, b| (a.row.kind, &a.row.name).cmp(&(b.row.kind, &b.row.name)));
    let source = |r: &Row| format!("{}:{}@{}", r.registry, r.package, r.version);
    let name_width = status.iter().map(|s| s.row.name.len()).max().unwrap_or(0);
    let source_width = status
        .iter()
        .map(|s| source(&s.row).len())
        .max()
        .unwrap_or(0);
    let mut heading = None;
    for s in &status {
        if heading != Some(s.row.kind) {
            heading = Some(s.row.kind);
            outln!("{}:", s.row.kind.heading());
        }
        let state = match (s.installed, s.pinned) {
            (true, true) => "installed",
            (true, false) => "NOT PINNED",
            _ => "-",
        };
        outln!(
            "  {:<name_width$}  {:>9}  {:<10}  {:<source_width$}  {}",
            s.row.name,
            mib(s.row.size),
            state,
            source(&s.row),
            s.row.about
        );
    }
    let installed = status.iter().filter(|s| s.pinned).count();
    outln!("{installed} of {} installed", status.len());
    Ok(0)
}

fn install(engine: workbooks::Engine, rows: &[Row], json: bool) -> Result<u8, u8> {
    // Every byte the fetches read is counted here (a budget too large to
    // run out; each fetch is still capped), for the bar's bytes and rate.
    let read = std::sync::Arc::new(workbooks::egress::ByteBudget::new(usize::MAX / 2));
    let catalog = Catalog::new(engine).with_progress(read.clone());
    let progress = crate::options::byte_progress(String::new(), move || read.taken() as u64);
    let spinner = &progress.bar;
    let started = Instant::now();
    let mut failed = 0;
    let mut done = 0;
    let mut report = Vec::new();
    // Each row's time runs from the end of the one before (its fetch,
    // when it has one of its own, included).
    let mut since = Instant::now();
    let results = runtime()?.block_on(catalog.install_all(rows, |step| match step {
        Step::Fetching(row) => spinner.set_message(format!(
            "[{done}/{}] fetching {}",
            rows.len(),
            row.url.rsplit('/').next().unwrap_or(&row.url)
        )),
        Step::Building(row) => spinner.set_message(format!(
            "[{done}/{}] building {} in the sandbox",
            rows.len(),
            row.name
        )),
        Step::Done(row, result) => {
            done += 1;
            let secs = since.elapsed().as_secs_f64();
            since = Instant::now();
            let line = match result {
                Ok(e) => format!(
                    "registered {} → sha256:{} ({}, {secs:.1} s)",
                    e.name,
                    e.sha256,
                    mib(Some(e.size))
                ),
                Err(e) => {
                    failed += 1;
                    format!("FAILED {}: {e}", row.name)
                }
            };
            if !json {
                // Not unwound inside the bar's suspension: afterwards.
                if !spinner.suspend(|| crate::out::try_line(&line)) {
                    crate::out::closed();
                }
            }
        }
    }));
    drop(progress);
    for (row, result) in rows.iter().zip(&results) {
        report.push(match result {
            Ok(e) => serde_json::json!({"name": row.name, "ok": true, "sha256": e.sha256, "size": e.size}),
            Err(e) => serde_json::json!({"name": row.name, "ok": false, "error": e.to_string()}),
        });
    }
    let secs = started.elapsed().as_secs_f64();
    let code = if failed == 0 { 0 } else { exit::FAILED };
    if json {
        let report = serde_json::json!({"installed": results.len() - failed, "failed": failed, "seconds": secs, "rows": report});
        let why = format!("catalog install: {failed} of {} rows failed", rows.len());
        outln!("{}", crate::out::verdict(report, code, &why));
    } else {
        outln!(
            "{} of {} installed in {secs:.1} s",
            results.len() - failed,
            rows.len()
        );
    }
    Ok(code)
}

fn verify(catalog: &Catalog, rows: &[Row], json: bool) -> Result<u8, u8> {
    let held: Vec<(&Row, Held)> = rows.iter().map(|r| (r, catalog.verify(r))).collect();
    let bad = held
        .iter()
        .filter(|(_, h)| matches!(h, Held::Other { .. } | Held::Corrupt { .. }))
        .count();
    if json {
        let rows: Vec<_> = held
            .iter()
            .map(|(r, h)| serde_json::json!({"name": r.name, "held": h}))
            .collect();
        let why = format!("catalog verify: {bad} rows do not hold their pinned bytes");
        let code = if bad == 0 { 0 } else { exit::FAILED };
        outln!(
            "{}",
            crate::out::verdict(
                serde_json::json!({"ok": bad == 0, "rows": rows}),
                code,
                &why
            )
        );
    } else {
        for (row, h) in &held {
            let line = match h {
                Held::Missing => "-  not installed".to_string(),
                Held::Pinned => format!("✓  sha256:{}", row.sha256),
                Held::Other { sha256 } => format!("✗  bound to other bytes, sha256:{sha256}"),
                Held::Corrupt { why } => format!("✗  store altered: {why}"),
            };
            outln!("{:<14} {line}", row.name);
        }
    }
    Ok(if bad == 0 { 0 } else { exit::FAILED })
}

fn prove(catalog: &Catalog, rows: &[Row], json: bool) -> Result<u8, u8> {
    let runtime = runtime()?;
    let mut proved = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let spinner = crate::options::spinner(format!("[{i}/{}] proving {}", rows.len(), row.name));
        let p = runtime.block_on(catalog.prove(row));
        spinner.finish_and_clear();
        if !json {
            match &p.why {
                None => outln!("✓ {:<14} {:>7} ms", p.name, p.ms),
                Some(why) => outln!("✗ {:<14} {:>7} ms  {why}", p.name, p.ms),
            }
        }
        proved.push(p);
    }
    let failed = proved.iter().filter(|p| !p.ok).count();
    if json {
        let why = format!(
            "catalog prove: {failed} of {} rows failed their proof",
            proved.len()
        );
        let code = if failed == 0 { 0 } else { exit::FAILED };
        outln!(
            "{}",
            crate::out::verdict(
                serde_json::json!({"ok": failed == 0, "rows": proved}),
                code,
                &why
            )
        );
    } else {
        outln!("{} of {} proved", proved.len() - failed, proved.len());
    }
    Ok(if failed == 0 { 0 } else { exit::FAILED })
}

fn remove(catalog: &Catalog, rows: &[Row], json: bool) -> Result<u8, u8> {
    let mut report = Vec::new();
    let mut code = 0;
    for row in rows {
        match catalog.remove(row) {
            Ok(freed) => {
                let bytes: u64 = freed.iter().map(|(_, n)| n).sum();
                if !json {
                    let kept = if freed.is_empty() {
                        String::new()
                    } else {
                        format!(" and its sysroot ({})", mib(Some(bytes)))
                    };
                    outln!("removed {}{kept}", row.name);
                }
                report
                    .push(serde_json::json!({"name": row.name, "ok": true, "freed_bytes": bytes}));
            }
            // `--all` removes what is installed, and names nothing else.
            Err(CatalogError::NotInstalled(_)) if rows.len() > 1 => {}
            Err(e) => {
                code = match e {
                    CatalogError::NotInstalled(_) => exit::NOT_FOUND,
                    CatalogError::NotTheRow { .. } => exit::REFUSED,
                    _ => exit::ENGINE,
                };
                if json {
                    report.push(
                        serde_json::json!({"name": row.name, "ok": false, "error": e.to_string()}),
                    );
                } else {
                    fail("catalog", e, code);
                }
            }
        }
    }
    if json {
        outln!("{}", serde_json::json!({"rows": report}));
    }
    Ok(code)
}
