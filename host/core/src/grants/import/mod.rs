//! Grants read from what users already have: a Wassette policy file
//! ([`wassette`]), a Spin manifest's components ([`spin`]) and a grant
//! this host exported (its JSON). Each becomes [`GrantRecord`]s the book
//! then stores under new ids.
//!
//! Invariant: an import never makes a grant wider than the file
//! describes. What a grant cannot hold yet (a deny list, Wassette's
//! `defaults`, Spin's `ai_models`, a store label other than `default`) is
//! refused, naming it, and nothing is added; what is configuration rather
//! than reach (Spin's `environment` values, its triggers) is left out and
//! said in [`Imported::notes`].
//!
//! Threat: the file is the operator's, but may come from anywhere (a
//! component's repository): it is read within [`GRANT_IMPORT_MAX_BYTES`],
//! YAML aliases expand within the reader's budget, and every entry passes
//! the same checks as `wbx grant add` ([`GrantRecord::validate`]).

mod spin;
mod wassette;

use super::GrantRecord;
use crate::limits::{GRANT_IMPORT_MAX_BYTES, GRANT_IMPORT_MAX_GRANTS};
use std::path::Path;

/// What an import read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Imported {
    /// The file's format, as its name or contents told it.
    pub format: Format,
    /// The grants it describes, without ids (the book gives them).
    pub records: Vec<GrantRecord>,
    /// What the file says that is not reach, and so is not in a grant.
    pub notes: Vec<String>,
}

/// A format an import reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A Wassette (policy-mcp 1.x) policy file, YAML.
    Wassette,
    /// A Spin manifest (`spin_manifest_version = 2`), TOML.
    Spin,
    /// Grants this host exported (`wbx grant export`), JSON.
    Exported,
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Format::Wassette => "Wassette policy",
            Format::Spin => "Spin manifest",
            Format::Exported => "exported grants",
        })
    }
}

/// Why a file does not import. Nothing is added then.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    /// The file cannot be read, or is over [`GRANT_IMPORT_MAX_BYTES`].
    #[error("{file}: {why}")]
    Read {
        /// The file.
        file: String,
        /// Why.
        why: String,
    },
    /// The file does not parse as its format.
    #[error("{file}: not a {format}: {why}")]
    Parse {
        /// The file.
        file: String,
        /// The format it was read as.
        format: Format,
        /// The reader's words.
        why: String,
    },
    /// The file asks for something a grant cannot hold yet; importing it
    /// without would make a grant wider than the file describes.
    #[error("{file}: {what} cannot be carried into a grant: {why}")]
    Unsupported {
        /// The file.
        file: String,
        /// Where in it (`permissions.network.deny`, `component.x.ai_models`).
        what: String,
        /// Why, and what to do instead.
        why: String,
    },
    /// An entry does not read as a grant's.
    #[error("{file}: {what}: {why}")]
    Entry {
        /// The file.
        file: String,
        /// Which entry.
        what: String,
        /// Why.
        why: String,
    },
    /// More grants than [`GRANT_IMPORT_MAX_GRANTS`], or none.
    #[error("{file}: {why}")]
    Count {
        /// The file.
        file: String,
        /// Why.
        why: String,
    },
}

/// Who an import is for: the tenant (required for Wassette and Spin, which
/// have none; in place of an exported grant's own when given), the
/// subject when the operator names one, the component of a manifest, and
/// who imports.
#[derive(Debug, Clone, Default)]
pub struct ImportFor {
    /// The tenant.
    pub tenant: Option<String>,
    /// The subject (`sha256:<hex>`), in place of what the file implies.
    pub subject: Option<String>,
    /// Only this component of a Spin manifest.
    pub component: Option<String>,
    /// Who imports.
    pub by: String,
}

/// Reads `file` as the grants it describes (see the module's header).
pub fn import(file: &Path, to: &ImportFor) -> Result<Imported, ImportError> {
    let name = file.display().to_string();
    let read = |why: String| ImportError::Read {
        file: name.clone(),
        why,
    };
    let meta = std::fs::metadata(file).map_err(|e| read(e.to_string()))?;
    if meta.len() > GRANT_IMPORT_MAX_BYTES as u64 {
        return Err(read(format!(
            "{} bytes, over the {GRANT_IMPORT_MAX_BYTES} an import reads",
            meta.len()
        )));
    }
    let text = std::fs::read_to_string(file).map_err(|e| read(e.to_string()))?;
    let format = detect(file, &text);
    let ctx = Ctx {
        file: &name,
        dir: file.parent().unwrap_or(Path::new(".")),
        to,
    };
    let mut imported = match format {
        Format::Wassette => wassette::read(&text, &ctx)?,
        Format::Spin => spin::read(&text, &ctx)?,
        Format::Exported => exported(&text, &ctx)?,
    };
    if imported.records.is_empty() {
        return Err(ImportError::Count {
            file: name,
            why: "describes no grant".into(),
        });
    }
    if imported.records.len() > GRANT_IMPORT_MAX_GRANTS {
        return Err(ImportError::Count {
            file: name,
            why: format!(
                "describes {} grants, over the {GRANT_IMPORT_MAX_GRANTS} one import makes \
                 (import one component with --component)",
                imported.records.len()
            ),
        });
    }
    for r in &mut imported.records {
        if let Some(subject) = &to.subject {
            r.subject = Some(subject.clone());
        }
        r.validate().map_err(|e| ImportError::Entry {
            file: name.clone(),
            what: r.label.clone().unwrap_or_else(|| "a grant".into()),
            why: e.to_string(),
        })?;
    }
    Ok(imported)
}

/// What a reader of one format reads with.
struct Ctx<'a> {
    file: &'a str,
    /// The file's folder (a Spin component's paths are relative to it).
    dir: &'a Path,
    to: &'a ImportFor,
}

impl Ctx<'_> {
    /// The tenant a format without one needs.
    fn tenant(&self, format: Format) -> Result<&str, ImportError> {
        self.to.tenant.as_deref().ok_or_else(|| ImportError::Entry {
            file: self.file.to_string(),
            what: format!("a {format}"),
            why: "names no tenant: give --tenant".into(),
        })
    }

    fn parse(&self, format: Format, why: impl std::fmt::Display) -> ImportError {
        ImportError::Parse {
            file: self.file.to_string(),
            format,
            why: why.to_string(),
        }
    }

    fn unsupported(&self, what: impl Into<String>, why: impl Into<String>) -> ImportError {
        ImportError::Unsupported {
            file: self.file.to_string(),
            what: what.into(),
            why: why.into(),
        }
    }

    fn entry(&self, what: impl Into<String>, why: impl Into<String>) -> ImportError {
        ImportError::Entry {
            file: self.file.to_string(),
            what: what.into(),
            why: why.into(),
        }
    }
}

/// The format of `file`: by its extension, else by what its text starts
/// with.
fn detect(file: &Path, text: &str) -> Format {
    match file.extension().and_then(|e| e.to_str()) {
        Some("yaml" | "yml") => Format::Wassette,
        Some("toml") => Format::Spin,
        Some("json") => Format::Exported,
        _ => match text.trim_start().chars().next() {
            Some('{' | '[') => Format::Exported,
            _ if text.contains("spin_manifest_version") => Format::Spin,
            _ => Format::Wassette,
        },
    }
}

/// Grants exported by `wbx grant export`: one record or a list. Ids,
/// history and times are the new book's; the tenant is `--tenant`'s when
/// given.
fn exported(text: &str, ctx: &Ctx<'_>) -> Result<Imported, ImportError> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(Box<GrantRecord>),
        Many(Vec<GrantRecord>),
    }
    let records = match serde_json::from_str(text).map_err(|e| ctx.parse(Format::Exported, e))? {
        OneOrMany::One(r) => vec![*r],
        OneOrMany::Many(r) => r,
    };
    let records = records
        .into_iter()
        .map(|r| GrantRecord {
            id: String::new(),
            tenant: ctx.to.tenant.clone().unwrap_or_else(|| r.tenant.clone()),
            label: Some(format!("{} (was {})", ctx.file, r.id)),
            created_ms: super::now_ms(),
            by: ctx.to.by.clone(),
            history: Vec::new(),
            ..r
        })
        .collect();
    Ok(Imported {
        format: Format::Exported,
        records,
        notes: Vec::new(),
    })
}

#[cfg(test)]
mod tests;
