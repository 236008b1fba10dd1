//! The catalog: programs as data. Each row of `catalog.json` (built into
//! the binary) names a program, what it is and where it comes from (a
//! registry, a package and its version), where its bytes are (a URL, and
//! the path inside the archive they travel in: a wheel, an npm tarball, a
//! Debian package), the sha256 of the wasm itself, the profile it runs
//! under, and a proof: a line and the output it must give. Installing
//! fetches through the engine's capped HTTP transport (the SSRF floor
//! applies; a `file://` URL reads a local file), checks the pin and
//! registers the program as a command by name; proving runs the line.
//!
//! Invariant: the pin is the whole gate. Bytes that do not hash to the
//! row's sha256 are refused with `artifact_integrity` and nothing is
//! registered; a download or an archive entry past [`CATALOG_MAX_BYTES`]
//! is refused before it is held whole, and an archive is read as a
//! stranger's file ([`archive`]).

mod archive;
mod built;
pub mod c_lane;
mod proof;
mod sysroot;

pub use archive::Archive;
pub use built::Build;
pub use c_lane::{Built, CBuild, CLaneError, Units};
pub use proof::{Proof, Proved};
pub use sysroot::Sysroot;

use crate::limits::{CATALOG_FETCH_TIMEOUT, CATALOG_MAX_BYTES};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::PathBuf;
use workbooks::commands::{ArgMode, Entry, RegistryError, Tier};
use workbooks::egress::{HttpError, HttpLimits, HttpRequest};
use workbooks::engine::Engine;

/// The rows this build carries.
const ROWS: &str = workbooks::commands::builtin::CATALOG_ROWS;

/// What a row is, for grouping.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// A language runtime: Python, JavaScript, Lua, ...
    Interpreter,
    /// A program that does one job.
    #[default]
    Tool,
    /// A compiler a build lane runs.
    BuildLane,
}

impl Kind {
    /// The heading its group is listed under.
    pub fn heading(self) -> &'static str {
        match self {
            Kind::Interpreter => "interpreters",
            Kind::Tool => "tools",
            Kind::BuildLane => "build lanes",
        }
    }
}

/// One program.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Row {
    /// The command name it is registered under.
    pub name: String,
    /// What it is, for grouping.
    #[serde(default)]
    pub kind: Kind,
    /// What it does, in a line.
    pub about: String,
    /// The registry it is published on (`pypi`, `npm`, `debian`).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub registry: String,
    /// The package that carries it there.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub package: String,
    /// The package's version.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    /// Where its bytes are (`https://`, `http://` or `file://`).
    pub url: String,
    /// The archive kind the URL holds (`zip`, `tgz`, `deb`); when absent
    /// and a `wasm_path` is given, the URL's file name says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archive: Option<String>,
    /// The wasm's path inside the archive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wasm_path: Option<String>,
    /// The sha256 (hex) of the wasm.
    pub sha256: String,
    /// The wasm's size in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// `argv` or `stdin1`.
    #[serde(default = "argv")]
    pub arg_mode: String,
    /// Arguments always put before the caller's: the tool a multicall
    /// binary runs (`clang` of LLVM's driver).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prefix: Vec<String>,
    /// The narrowest profile it runs under.
    #[serde(default = "compute")]
    pub profile: String,
    /// Memory it needs beyond its profile's, in MiB (the operator grants
    /// it with `--memory`; the proof runs with it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mib: Option<usize>,
    /// A line that shows it works, and what it must print.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof: Option<Proof>,
    /// For a row built in the sandbox: the URL is a source tarball, and
    /// this says how (the wasm pin is then over the build's output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<Build>,
    /// For a compiler row: the sysroot its archive carries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sysroot: Option<Sysroot>,
}

fn argv() -> String {
    "argv".into()
}

fn compute() -> String {
    "compute".into()
}

impl Row {
    /// Whether `entry` is this row installed: its pinned bytes, with its
    /// prefix.
    pub fn is_held_by(&self, entry: &Entry) -> bool {
        entry.sha256 == self.sha256 && entry.prefix == self.prefix
    }

    /// The archive its URL holds, if any.
    pub fn archive(&self) -> Result<Option<Archive>, String> {
        let unpacked = self.wasm_path.is_some() || self.build.is_some() || self.sysroot.is_some();
        match (self.archive.as_deref(), unpacked) {
            (Some(kind), _) => Archive::parse(kind).map(Some).ok_or_else(|| {
                format!(
                    "`{kind}` is not an archive kind this engine reads ({})",
                    Archive::NAMES
                )
            }),
            (None, false) => Ok(None),
            (None, true) => Archive::of_url(&self.url).map(Some).ok_or_else(|| {
                format!(
                    "the row names no archive, and the URL's file name is none of {}",
                    Archive::NAMES
                )
            }),
        }
    }
}

/// The rows of this build's catalog (parsed once).
pub fn rows() -> &'static [Row] {
    static PARSED: std::sync::OnceLock<Vec<Row>> = std::sync::OnceLock::new();
    PARSED.get_or_init(|| serde_json::from_str(ROWS).unwrap_or_default())
}

/// The row named `name`.
pub fn row(name: &str) -> Option<&'static Row> {
    rows().iter().find(|r| r.name == name)
}

/// Whether `bytes` hash to `pin` (hex); `Err` is what they hash to.
fn matches_pin(bytes: &[u8], pin: &str) -> Result<(), String> {
    let got = workbooks::identity::sha256_hex(bytes);
    if got.eq_ignore_ascii_case(pin) {
        Ok(())
    } else {
        Err(got)
    }
}

/// The end of a run's stderr, for a message saying why it failed.
fn stderr_tail(stderr: &[u8]) -> String {
    let stderr = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = stderr.lines().rev().take(6).collect();
    lines.into_iter().rev().collect::<Vec<_>>().join(" | ")
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
    /// The row is not installed: its name is registered to nothing.
    #[error("catalog {0}: not installed")]
    NotInstalled(String),
    /// Its name holds bytes that are not the row's pin (registered by
    /// hand): a catalog remove leaves them.
    #[error(
        "catalog {name}: the name holds sha256 {held}, not the row's pin; `wbx command remove {name}` removes it"
    )]
    NotTheRow {
        /// The row.
        name: String,
        /// What the name holds.
        held: String,
    },
    /// Building it in the sandbox failed.
    #[error("catalog {name}: {error}")]
    Build {
        /// The row.
        name: String,
        /// Why.
        error: CLaneError,
    },
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

/// What the store holds for an installed row, hashed again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "kebab-case")]
pub enum Held {
    /// No command of that name is registered.
    Missing,
    /// The stored bytes hash to the row's pin.
    Pinned,
    /// The name is bound to other bytes (registered by hand).
    Other {
        /// The sha256 the name is bound to.
        sha256: String,
    },
    /// The stored file no longer hashes to what was registered (or is
    /// gone): the store was altered.
    Corrupt {
        /// What was found.
        why: String,
    },
}

/// A step of [`Catalog::install_all`], for progress.
#[derive(Debug)]
pub enum Step<'a> {
    /// A download starts.
    Fetching(&'a Row),
    /// A build in the sandbox starts.
    Building(&'a Row),
    /// A row is done.
    Done(&'a Row, &'a Result<Entry, CatalogError>),
}

/// The catalog over one engine: installs rows into its registry.
#[derive(Clone)]
pub struct Catalog {
    engine: Engine,
    progress: Option<std::sync::Arc<workbooks::egress::ByteBudget>>,
}

impl Catalog {
    /// The catalog of `engine`'s registry.
    pub fn new(engine: Engine) -> Catalog {
        Catalog {
            engine,
            progress: None,
        }
    }

    /// This catalog, counting every byte its fetches read in `progress`
    /// (a budget large enough never to run out; `max_body` still caps
    /// each fetch): how the CLI shows bytes and rate as a row downloads.
    pub fn with_progress(
        mut self,
        progress: std::sync::Arc<workbooks::egress::ByteBudget>,
    ) -> Catalog {
        self.progress = Some(progress);
        self
    }

    /// Each row, and whether the registry holds its pinned bytes.
    pub fn status(&self, rows: &[Row]) -> Vec<RowStatus> {
        rows.iter()
            .map(|row| {
                let entry = self.engine.registry().get(&row.name).ok().flatten();
                RowStatus {
                    row: row.clone(),
                    installed: entry.is_some(),
                    pinned: entry.is_some_and(|e| row.is_held_by(&e)),
                }
            })
            .collect()
    }

    /// What the store holds for `row`, read and hashed again now (no
    /// cache is consulted).
    pub fn verify(&self, row: &Row) -> Held {
        let registry = self.engine.registry();
        let entry = match registry.get(&row.name) {
            Ok(Some(entry)) => entry,
            Ok(None) => return Held::Missing,
            Err(e) => return Held::Corrupt { why: e.to_string() },
        };
        let path = registry.path_of(&entry);
        let got = match hash_file(&path) {
            Ok(got) => got,
            Err(e) => {
                return Held::Corrupt {
                    why: format!("{}: {e}", path.display()),
                };
            }
        };
        if got != entry.sha256 {
            Held::Corrupt {
                why: format!("{} hashes to {got}", path.display()),
            }
        } else if got.eq_ignore_ascii_case(&row.sha256) {
            Held::Pinned
        } else {
            Held::Other { sha256: got }
        }
    }

    /// Removes what installing `row` made: its command (when the name
    /// holds the row's pin) and the sysroot it keeps; the files freed,
    /// with their sizes (the command's store file stays for runs in
    /// flight; `wbx cache gc` does not touch the store).
    pub fn remove(&self, row: &Row) -> Result<Vec<(PathBuf, u64)>, CatalogError> {
        let registry = self.engine.registry();
        let entry = registry
            .get(&row.name)?
            .ok_or_else(|| CatalogError::NotInstalled(row.name.clone()))?;
        if !row.is_held_by(&entry) {
            return Err(CatalogError::NotTheRow {
                name: row.name.clone(),
                held: entry.sha256,
            });
        }
        registry.remove(&row.name)?;
        let mut freed = Vec::new();
        if row.sysroot.is_some()
            && let Ok((_, kept)) = self.kept_sysroot(row)
            && let Ok(meta) = std::fs::symlink_metadata(&kept)
        {
            std::fs::remove_file(&kept).map_err(|e| CatalogError::Build {
                name: row.name.clone(),
                error: CLaneError::Sysroot(format!("{}: {e}", kept.display())),
            })?;
            freed.push((kept, meta.len()));
        }
        Ok(freed)
    }

    /// Fetches `row`, checks its pin and registers it.
    pub async fn install(&self, row: &Row) -> Result<Entry, CatalogError> {
        let fetched = self.fetch(row).await?;
        self.register(row, &fetched).await
    }

    /// Installs `rows`, fetching each URL once however many rows it
    /// carries (a wheel with several programs), and reports each step.
    pub async fn install_all(
        &self,
        rows: &[Row],
        mut step: impl FnMut(Step),
    ) -> Vec<Result<Entry, CatalogError>> {
        // Rows built in the sandbox come last: they need the compiler rows.
        let mut order: Vec<usize> = (0..rows.len()).collect();
        order.sort_by_key(|i| (rows[*i].build.is_some(), &rows[*i].url));
        let mut results: Vec<Option<Result<Entry, CatalogError>>> =
            (0..rows.len()).map(|_| None).collect();
        let mut held: Option<(&str, Vec<u8>)> = None;
        for i in order {
            let row = &rows[i];
            if held.as_ref().is_none_or(|(url, _)| *url != row.url) {
                held = None;
                step(Step::Fetching(row));
                match self.fetch(row).await {
                    Ok(bytes) => held = Some((&row.url, bytes)),
                    Err(e) => {
                        let done = Err(e);
                        step(Step::Done(row, &done));
                        results[i] = Some(done);
                        continue;
                    }
                }
            }
            let Some((_, fetched)) = &held else {
                continue;
            };
            if row.build.is_some() {
                step(Step::Building(row));
            }
            let done = self.register(row, fetched).await;
            step(Step::Done(row, &done));
            results[i] = Some(done);
        }
        results.into_iter().flatten().collect()
    }

    /// The wasm `row` points at, fetched (and taken out of its archive)
    /// and checked against its pin; nothing is kept when the pin fails.
    pub async fn fetch_pinned(&self, row: &Row) -> Result<Vec<u8>, CatalogError> {
        let fetched = self.fetch(row).await?;
        pinned_wasm(row, &fetched)
    }

    /// Registers the wasm `row` names inside `fetched` (or builds from
    /// it), if it hashes to the pin.
    async fn register(&self, row: &Row, fetched: &[u8]) -> Result<Entry, CatalogError> {
        let wasm = match &row.build {
            None => pinned_wasm(row, fetched)?,
            Some(build) => {
                let wasm = self.built(row, build, fetched).await?;
                pinned(row, wasm)?
            }
        };
        if row.sysroot.is_some() {
            // Kept now, from the archive in hand: a build fetches nothing.
            self.keep_sysroot(row, fetched)
                .map_err(|error| CatalogError::Build {
                    name: row.name.clone(),
                    error,
                })?;
        }
        let mode = ArgMode::parse(&row.arg_mode).unwrap_or(ArgMode::Argv);
        // Installing a row is the operator's act, and its name holds only
        // its pin: whatever held the name before is replaced.
        Ok(self
            .engine
            .registry()
            .replace_with_prefix(&row.name, wasm, mode, Tier::Instance, row.prefix.clone())?
            .0)
    }

    /// Installs, in the background, every row not yet registered with
    /// its pinned bytes; the caller never waits on a fetch. Failures are
    /// logged, and a row that fails is tried again at the next start.
    pub fn seed(&self) -> tokio::task::JoinHandle<()> {
        let catalog = self.clone();
        tokio::spawn(async move {
            let rows: Vec<Row> = catalog
                .status(rows())
                .into_iter()
                .filter(|s| !s.pinned)
                .map(|s| s.row)
                .collect();
            catalog
                .install_all(&rows, |step| match step {
                    Step::Done(_, Ok(e)) => {
                        tracing::info!("catalog: {} registered (sha256:{})", e.name, e.sha256)
                    }
                    Step::Done(_, Err(e)) => tracing::warn!("{e}"),
                    Step::Fetching(_) | Step::Building(_) => {}
                })
                .await;
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
            shared: self.progress.clone(),
        };
        let got = self
            .engine
            .operator_http()
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

/// The wasm `row` names in `fetched` (itself, or an archive's entry), if
/// it hashes to the row's pin. An archive is read in place: rows sharing
/// one never copy it.
fn pinned_wasm(row: &Row, fetched: &[u8]) -> Result<Vec<u8>, CatalogError> {
    let bad = |why: String| CatalogError::Archive {
        name: row.name.clone(),
        why,
    };
    let wasm = match row.archive().map_err(bad)? {
        None => fetched.to_vec(),
        Some(kind) => {
            let path = row
                .wasm_path
                .as_deref()
                .ok_or_else(|| bad("the row names no wasm_path".into()))?;
            kind.extract(fetched, path, CATALOG_MAX_BYTES)
                .map_err(bad)?
        }
    };
    pinned(row, wasm)
}

/// `wasm`, if it hashes to `row`'s pin.
fn pinned(row: &Row, wasm: Vec<u8>) -> Result<Vec<u8>, CatalogError> {
    matches_pin(&wasm, &row.sha256).map_err(|got| CatalogError::Integrity {
        name: row.name.clone(),
        pinned: row.sha256.clone(),
        got,
    })?;
    Ok(wasm)
}

/// The sha256 (hex) of a file, read in pieces.
fn hash_file(path: &std::path::Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher)?;
    Ok(hex::encode(hasher.finalize()))
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
            sha256: "0".repeat(64),
            ..Row::default()
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
    fn the_built_in_rows_are_many_each_pinned_sourced_sized_and_proved() {
        let rows = rows();
        assert!(rows.len() >= 20, "{} rows", rows.len());
        let mut names = std::collections::BTreeSet::new();
        for r in rows {
            assert!(names.insert(r.name.as_str()), "{} twice", r.name);
            workbooks::commands::registry::validate_name(&r.name).unwrap();
            assert!(
                !workbooks::commands::builtin::is_reserved(&r.name),
                "{}",
                r.name
            );
            assert_eq!(r.sha256.len(), 64, "{}", r.name);
            assert!(r.url.starts_with("https://"), "{}", r.name);
            assert!(
                ["pypi", "npm", "debian"].contains(&r.registry.as_str()),
                "{}",
                r.name
            );
            assert!(!r.package.is_empty() && !r.version.is_empty(), "{}", r.name);
            assert!(r.size.is_some_and(|s| s as usize <= CATALOG_MAX_BYTES));
            assert!(r.archive().unwrap().is_some(), "{}", r.name);
            assert!(ArgMode::parse(&r.arg_mode).is_some());
            assert!(workbooks::Profile::parse(&r.profile).is_ok(), "{}", r.name);
            let proof = r
                .proof
                .as_ref()
                .unwrap_or_else(|| panic!("{} has no proof", r.name));
            assert!(
                proof.line.split_whitespace().next() == Some(r.name.as_str()),
                "{}: a proof runs its own row",
                r.name
            );
            assert!(
                proof.stdout.is_some()
                    || proof.contains.is_some()
                    || proof.stdout_sha256.is_some()
                    || proof.stderr_contains.is_some(),
                "{}: a proof that expects nothing cannot fail",
                r.name
            );
        }
    }
}
