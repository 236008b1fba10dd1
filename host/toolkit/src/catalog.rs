//! The catalog: programs as data. Each row of `catalog.json` (built into
//! the binary) names a program, where its bytes are (a URL, and the path
//! inside a zip archive when they travel in one), and the sha256 of the
//! wasm itself. Installing fetches through the engine's capped HTTP
//! transport (the SSRF floor applies; a `file://` URL reads a local file),
//! checks the pin and registers the program as a command by name.
//!
//! Invariant: the pin is the whole gate. Bytes that do not hash to the
//! row's sha256 are refused with `artifact_integrity` and nothing is
//! registered; a download or an archive entry past [`CATALOG_MAX_BYTES`]
//! is refused before it is held whole.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Read;
use workbooks::commands::{ArgMode, Entry, RegistryError, Tier};
use workbooks::egress::{HttpError, HttpLimits, HttpRequest};
use workbooks::engine::Engine;
use workbooks::limits::{CATALOG_FETCH_TIMEOUT, CATALOG_MAX_BYTES};

/// The rows this build carries.
const ROWS: &str = workbooks::commands::builtin::CATALOG_ROWS;

/// One program.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Row {
    /// The command name it is registered under.
    pub name: String,
    /// What it is.
    pub about: String,
    /// Where its bytes are (`https://`, `http://` or `file://`).
    pub url: String,
    /// `zip` when the URL holds an archive (a wheel is one).
    #[serde(default)]
    pub archive: Option<String>,
    /// The wasm's path inside the archive.
    #[serde(default)]
    pub wasm_path: Option<String>,
    /// The sha256 (hex) of the wasm.
    pub sha256: String,
    /// `argv` or `stdin1`.
    #[serde(default = "argv")]
    pub arg_mode: String,
}

fn argv() -> String {
    "argv".into()
}

/// The rows of this build's catalog.
pub fn rows() -> Vec<Row> {
    serde_json::from_str(ROWS).unwrap_or_default()
}

/// Why a row could not be installed.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// No row has that name.
    #[error("no catalog row `{0}`")]
    Unknown(String),
    /// The bytes could not be fetched.
    #[error("catalog {name}: fetch failed: {why}")]
    Fetch {
        /// The row.
        name: String,
        /// Why.
        why: String,
    },
    /// The archive could not be read, or lacks the path.
    #[error("catalog {name}: archive: {why}")]
    Archive {
        /// The row.
        name: String,
        /// Why.
        why: String,
    },
    /// The bytes do not hash to the pin.
    #[error(
        "artifact_integrity: catalog {name} hashes to {got}, pinned {pinned}; nothing registered"
    )]
    Integrity {
        /// The row.
        name: String,
        /// The pin.
        pinned: String,
        /// What the bytes hash to.
        got: String,
    },
    /// The registry refused it.
    #[error("catalog {0}")]
    Register(#[from] RegistryError),
}

/// A row with what the registry holds under its name.
#[derive(Debug, Clone, Serialize)]
pub struct RowStatus {
    /// The row.
    #[serde(flatten)]
    pub row: Row,
    /// Whether a command of that name is registered.
    pub installed: bool,
    /// Whether it is the pinned bytes.
    pub pinned: bool,
}

/// The catalog over one engine: installs rows into its registry.
#[derive(Clone)]
pub struct Catalog {
    engine: Engine,
}

impl Catalog {
    /// The catalog of `engine`'s registry.
    pub fn new(engine: Engine) -> Catalog {
        Catalog { engine }
    }

    /// Each row, and whether the registry holds its pinned bytes.
    pub fn status(&self, rows: &[Row]) -> Vec<RowStatus> {
        rows.iter()
            .map(|row| {
                let entry = self.engine.registry().get(&row.name).ok().flatten();
                RowStatus {
                    row: row.clone(),
                    installed: entry.is_some(),
                    pinned: entry.is_some_and(|e| e.sha256 == row.sha256),
                }
            })
            .collect()
    }

    /// Fetches `row`, checks its pin and registers it.
    pub async fn install(&self, row: &Row) -> Result<Entry, CatalogError> {
        let wasm = self.fetch_pinned(row).await?;
        let mode = ArgMode::parse(&row.arg_mode).unwrap_or(ArgMode::Argv);
        // Installing a row is the operator's act, and its name holds only
        // its pin: whatever held the name before is replaced.
        Ok(self
            .engine
            .registry()
            .replace(&row.name, wasm, mode, Tier::Instance)?
            .0)
    }

    /// The wasm `row` points at, fetched (and taken out of its archive)
    /// and checked against its pin; nothing is kept when the pin fails.
    pub async fn fetch_pinned(&self, row: &Row) -> Result<Vec<u8>, CatalogError> {
        let fetched = self.fetch(row).await?;
        let wasm = match row.archive.as_deref() {
            None => fetched,
            Some("zip") => unzip(row, fetched)?,
            Some(other) => {
                return Err(CatalogError::Archive {
                    name: row.name.clone(),
                    why: format!("`{other}` is not an archive kind this engine reads (zip)"),
                });
            }
        };
        let got = hex::encode(Sha256::digest(&wasm));
        if !got.eq_ignore_ascii_case(&row.sha256) {
            return Err(CatalogError::Integrity {
                name: row.name.clone(),
                pinned: row.sha256.clone(),
                got,
            });
        }
        Ok(wasm)
    }

    /// Installs, in the background, every row not yet registered with
    /// its pinned bytes; the caller never waits on a fetch. Failures are
    /// logged, and a row that fails is tried again at the next start.
    pub fn seed(&self) -> tokio::task::JoinHandle<()> {
        let catalog = self.clone();
        tokio::spawn(async move {
            let rows = rows();
            for status in catalog.status(&rows) {
                if status.pinned {
                    continue;
                }
                match catalog.install(&status.row).await {
                    Ok(e) => tracing::info!("catalog: {} registered (sha256:{})", e.name, e.sha256),
                    Err(e) => tracing::warn!("{e}"),
                }
            }
        })
    }

    async fn fetch(&self, row: &Row) -> Result<Vec<u8>, CatalogError> {
        let failed = |why: String| CatalogError::Fetch {
            name: row.name.clone(),
            why,
        };
        if let Some(path) = row.url.strip_prefix("file://") {
            let mut bytes = Vec::new();
            std::fs::File::open(path)
                .and_then(|f| f.take(CATALOG_MAX_BYTES as u64 + 1).read_to_end(&mut bytes))
                .map_err(|e| failed(format!("{path}: {e}")))?;
            if bytes.len() > CATALOG_MAX_BYTES {
                return Err(failed(format!("more than {CATALOG_MAX_BYTES} bytes")));
            }
            return Ok(bytes);
        }
        let limits = HttpLimits {
            max_body: CATALOG_MAX_BYTES,
            deadline: CATALOG_FETCH_TIMEOUT,
            max_redirects: 3,
            shared: None,
        };
        let got = self
            .engine
            .http()
            .fetch(HttpRequest::get(&row.url), &limits)
            .await;
        match got {
            Ok(r) if r.status == 200 => Ok(r.body.to_vec()),
            Ok(r) => Err(failed(format!("the server answered {}", r.status))),
            Err(HttpError::TooLarge(n)) => Err(failed(format!("more than {n} bytes"))),
            Err(e) => Err(failed(e.to_string())),
        }
    }
}

/// The row's entry of a zip archive, within the cap.
fn unzip(row: &Row, archive: Vec<u8>) -> Result<Vec<u8>, CatalogError> {
    let bad = |why: String| CatalogError::Archive {
        name: row.name.clone(),
        why,
    };
    let path = row
        .wasm_path
        .as_deref()
        .ok_or_else(|| bad("the row names no wasm_path".into()))?;
    let mut zip =
        zip::ZipArchive::new(std::io::Cursor::new(archive)).map_err(|e| bad(e.to_string()))?;
    let entry = zip.by_name(path).map_err(|e| bad(format!("{path}: {e}")))?;
    let mut bytes = Vec::new();
    entry
        .take(CATALOG_MAX_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| bad(format!("{path}: {e}")))?;
    if bytes.len() > CATALOG_MAX_BYTES {
        return Err(bad(format!(
            "{path} is more than {CATALOG_MAX_BYTES} bytes"
        )));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_download_past_the_cap_is_refused_and_nothing_is_registered() {
        let (_home, engine) = workbooks::engine::for_tests();
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.wasm");
        // Sparse: its length counts, no disk is spent.
        std::fs::File::create(&big)
            .unwrap()
            .set_len(CATALOG_MAX_BYTES as u64 + 1)
            .unwrap();
        let row = Row {
            name: "big".into(),
            about: String::new(),
            url: format!("file://{}", big.display()),
            archive: None,
            wasm_path: None,
            sha256: "0".repeat(64),
            arg_mode: "argv".into(),
        };
        let err = Catalog::new(engine.clone())
            .install(&row)
            .await
            .unwrap_err();
        assert!(
            err.to_string()
                .ends_with(&format!("more than {CATALOG_MAX_BYTES} bytes")),
            "{err}"
        );
        assert!(engine.registry().get("big").unwrap().is_none());
    }

    #[test]
    fn the_built_in_rows_parse_and_each_is_pinned() {
        let rows = rows();
        let names: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["python", "qjs"]);
        for r in &rows {
            assert_eq!(r.sha256.len(), 64, "{}", r.name);
            assert!(r.url.starts_with("https://"), "{}", r.name);
            assert!(ArgMode::parse(&r.arg_mode).is_some());
        }
    }
}
