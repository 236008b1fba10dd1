//! `wbx catalog`: the programs this build knows by name and sha256 pin;
//! `install` fetches one (through the SSRF floor), checks its pin and
//! registers it as a command.

use crate::options::{engine, runtime};
use crate::{exit, fail};
use std::path::PathBuf;
use workbooks_toolkit::catalog::{self, Catalog};

#[derive(Debug, clap::Subcommand)]
pub(crate) enum CatalogCommand {
    /// List the rows: name, installed, pinned, what it is.
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Fetch a row, check its sha256 pin and register it.
    Install {
        /// The row's name.
        name: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Check that every installed row holds its pinned bytes (exit 1 if
    /// one does not).
    Verify {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

pub(crate) fn run(cmd: CatalogCommand, home: PathBuf) -> u8 {
    let body = || -> Result<u8, u8> {
        let catalog = Catalog::new(engine(home)?);
        let rows = catalog::rows();
        match cmd {
            CatalogCommand::List { json } => {
                let status = catalog.status(&rows);
                if json {
                    println!("{}", serde_json::to_string(&status).unwrap_or_default());
                } else {
                    for s in status {
                        let state = match (s.installed, s.pinned) {
                            (true, true) => "installed",
                            (true, false) => "NOT PINNED",
                            _ => "-",
                        };
                        println!("{:<10} {:<10} {}", s.row.name, state, s.row.about);
                    }
                }
                Ok(0)
            }
            CatalogCommand::Install { name, json } => {
                let row = rows.iter().find(|r| r.name == name).ok_or_else(|| {
                    fail(
                        "catalog",
                        catalog::CatalogError::Unknown(name.clone()),
                        exit::USAGE,
                    )
                })?;
                let spinner = crate::options::spinner(format!("fetching {}", row.url));
                let entry = runtime()?.block_on(catalog.install(row));
                spinner.finish_and_clear();
                let entry = entry.map_err(|e| fail("catalog", e, 1))?;
                if json {
                    println!("{}", serde_json::to_string(&entry).unwrap_or_default());
                } else {
                    println!("registered {} → sha256:{}", entry.name, entry.sha256);
                }
                Ok(0)
            }
            CatalogCommand::Verify { json } => {
                let status = catalog.status(&rows);
                let bad: Vec<&str> = status
                    .iter()
                    .filter(|s| s.installed && !s.pinned)
                    .map(|s| s.row.name.as_str())
                    .collect();
                if json {
                    println!(
                        "{}",
                        serde_json::json!({"ok": bad.is_empty(), "not_pinned": bad, "rows": status})
                    );
                } else {
                    for s in &status {
                        let mark = if !s.installed {
                            "-"
                        } else if s.pinned {
                            "✓"
                        } else {
                            "✗"
                        };
                        println!("{mark} {}", s.row.name);
                    }
                }
                Ok(if bad.is_empty() { 0 } else { 1 })
            }
        }
    };
    body().unwrap_or_else(|c| c)
}
