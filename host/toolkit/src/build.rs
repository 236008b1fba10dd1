//! `toolkit build`: the toolkit's declared artifact, registered under its
//! `#+CLI_BIN`. Untrusted source never runs natively: this build takes
//! only what needs no compiler on the host, a prebuilt component in the
//! toolkit (`path:<dir>`) or one fetched by URL (`wasm:<url>`,
//! `archive:<url>` with `#+WASM_PATH`) through the capped HTTP transport
//! and refused unless `#+SHA256` matches, one pulled from an OCI registry
//! by digest (`oci:HOST/REPO@sha256:…`, optionally `#+OCI_SIGNER`), or WAT text (`#+BUILD_LANG:
//! wat`) or a script (`#+BUILD_LANG: js`) in `path:<dir>`, taken by the
//! sandboxed lanes ([`crate::lanes`]), or a `#+COMPOSE` file composing
//! built toolkits ([`crate::compose`]). A source that needs a compiler lane
//! not shipped answers `lane_unavailable: <the compiler component
//! missing>`; `script:` is removed.
//!
//! Checked before anything is read or fetched: the `#+CLI_BIN` is set and
//! not a reserved built-in name, and a third-party manifest's signature
//! holds. An artifact of a toolkit the operator did not vouch for as
//! first-party ([`crate::standing`]) is registered one tier stronger
//! (`os_process`); a name registered already is replaced only when asked.

use super::Toolkit;
use crate::broker::{LaneError, build_in_sandbox};
use crate::catalog::{Archive, Catalog, CatalogError, Row};
use crate::discover::is_slug;
use crate::tree::{compose_source, inside};
use crate::verify::needs_pin;
use workbooks::commands::{ArgMode, Entry, RegistryError, Tier, builtin};
use workbooks::engine::Engine;

/// Why a toolkit could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// No `#+CLI_BIN` to register the artifact under.
    #[error("toolkit build: #+CLI_BIN must name the command to register")]
    NoCliBin,
    /// The name is a built-in's.
    #[error("toolkit build: CLI_BIN `{0}` is a reserved built-in name; nothing was built")]
    Reserved(String),
    /// No `#+BUILD_SRC`.
    #[error("toolkit build: no #+BUILD_SRC (a discovery-only toolkit has nothing to build)")]
    NoSource,
    /// The source needs a compiler lane this engine does not ship.
    #[error("lane_unavailable: {0}")]
    LaneUnavailable(String),
    /// `script:` sources are gone.
    #[error("toolkit build: script: is removed: native build scripts are banned")]
    ScriptRemoved,
    /// Not a source spec.
    #[error("toolkit build: `{0}` is not a known #+BUILD_SRC")]
    UnknownSource(String),
    /// A fetched source without a pin.
    #[error("toolkit build: {0} needs #+SHA256 (64 hex digits)")]
    Unpinned(String),
    /// The third-party manifest's trust checks failed.
    #[error("toolkit build: refused, the manifest is not trusted: {0}")]
    Untrusted(String),
    /// A `path:` that leaves the toolkit, or holds no single component.
    #[error("toolkit build: path:{dir}: {why}")]
    Path {
        /// The folder as written.
        dir: String,
        /// Why.
        why: String,
    },
    /// The fetch, archive or pin failed.
    #[error(transparent)]
    Fetch(#[from] CatalogError),
    /// The `#+COMPOSE` file could not be composed.
    #[error(transparent)]
    Compose(#[from] crate::compose::ComposeError),
    /// A third-party source does not hash to the `#+SHA256` its signed
    /// manifest pins.
    #[error(
        "artifact_integrity: {file} hashes to {got}, not the #+SHA256 the signed manifest pins"
    )]
    Integrity {
        /// The source file.
        file: String,
        /// What it hashes to.
        got: String,
    },
    /// A build lane refused the source.
    #[error("toolkit build: the {lane} lane: {why}")]
    Lane {
        /// The lane.
        lane: &'static str,
        /// What it said.
        why: String,
    },
    /// An `oci:` source could not be pulled.
    #[error("toolkit build: {0}")]
    Oci(String),
    /// The registry refused the artifact.
    #[error("toolkit build: {0}")]
    Register(#[from] RegistryError),
}

/// What each compiler-needing source lacks.
fn lane_for(src: &str, lang: Option<&str>) -> Option<&'static str> {
    let by_src = [
        (
            "crate:",
            "the rust compiler component (mrustc + clang in the sandbox) is not shipped",
        ),
        ("git+", "git sources are not fetched; use path: or wasm:"),
        ("gobuild:", "the go compiler component is not shipped"),
        ("zigbuild:", "the zig compiler component is not shipped"),
    ];
    if let Some((_, why)) = by_src.iter().find(|(p, _)| src.starts_with(p)) {
        return Some(why);
    }
    match lang {
        Some("rust") => Some("the rust compiler component is not shipped"),
        Some("zig") => Some("the zig compiler component is not shipped"),
        Some("go" | "tinygo") => Some("the go compiler component is not shipped"),
        Some("ts") => Some("the typescript compiler component is not shipped"),
        Some("svelte") => Some("the svelte compiler component is not shipped"),
        _ => None,
    }
}

impl From<LaneError> for BuildError {
    fn from(e: LaneError) -> Self {
        match e {
            LaneError::Unavailable(what) => BuildError::LaneUnavailable(what),
            LaneError::Refused { lane, why } => BuildError::Lane { lane, why },
        }
    }
}

/// Builds toolkits into `engine`'s registry: every lane runs in the
/// sandbox ([`crate::broker`]), never on the host.
#[derive(Clone)]
pub struct Builds {
    pub(crate) engine: Engine,
}

impl Builds {
    /// Builds into `engine`.
    pub fn new(engine: Engine) -> Builds {
        Builds { engine }
    }

    /// Builds `tk`'s artifact and registers it under its `#+CLI_BIN`; over
    /// another command of that name only when `replace`.
    pub async fn toolkit(&self, tk: &Toolkit, replace: bool) -> Result<Entry, BuildError> {
        let m = &tk.manifest;
        let bin = m.cli_bin().ok_or(BuildError::NoCliBin)?;
        if builtin::is_reserved(bin) {
            return Err(BuildError::Reserved(bin.to_string()));
        }
        let standing = super::Standing::of(tk);
        let distrust: Vec<String> = crate::verify::trust_checks(m, &standing)
            .into_iter()
            .filter(|c| !c.ok)
            .map(|c| c.what)
            .collect();
        if !distrust.is_empty() {
            return Err(BuildError::Untrusted(distrust.join("; ")));
        }
        if let Some(file) = m.kw("COMPOSE") {
            return self.build_composed(tk, bin, file, replace);
        }
        let src = m.kw("BUILD_SRC").ok_or(BuildError::NoSource)?;
        if src.starts_with("script:") {
            return Err(BuildError::ScriptRemoved);
        }
        let lang = m.kw("BUILD_LANG");
        let wasm = if let Some(url) = src.strip_prefix("wasm:") {
            self.catalog()
                .fetch_pinned(&pinned_row(tk, bin, url, None)?)
                .await?
        } else if let Some(url) = src.strip_prefix("archive:") {
            let path = m.kw("WASM_PATH").unwrap_or("module.wasm");
            self.catalog()
                .fetch_pinned(&pinned_row(tk, bin, url, Some(path))?)
                .await?
        } else if let Some(reference) = src.strip_prefix("oci:") {
            self.oci_source(tk, reference).await?
        } else if let Some(dir) = src.strip_prefix("path:") {
            if let Some(why) = lane_for(src, lang) {
                return Err(BuildError::LaneUnavailable(why.into()));
            }
            if lang == Some("js") {
                return self.js_lane(tk, bin, dir, replace).await;
            }
            if lang == Some("c") {
                self.c_lane(tk, bin, dir).await?
            } else if lang == Some("wat") {
                let text = prebuilt(tk, dir, "wat")?;
                signed_pin(tk, dir, &text)?;
                build_in_sandbox(&self.engine, "wat", text).await?
            } else {
                let wasm = prebuilt(tk, dir, "wasm")?;
                signed_pin(tk, dir, &wasm)?;
                wasm
            }
        } else if let Some(why) = lane_for(src, lang) {
            return Err(BuildError::LaneUnavailable(why.into()));
        } else {
            return Err(BuildError::UnknownSource(src.to_string()));
        };
        let mode = m
            .kw("ARG_MODE")
            .and_then(ArgMode::parse)
            .unwrap_or(ArgMode::Argv);
        let tier = standing.tier();
        let entry = self.registered(bin, wasm, mode, tier, Vec::new(), replace)?;
        let stubs = crate::verify::declared_stubs(m);
        if stubs.is_empty() {
            return Ok(entry);
        }
        Ok(self.engine.registry().set_stubs(bin, stubs)?)
    }
}

impl Builds {
    fn catalog(&self) -> Catalog {
        Catalog::new(self.engine.clone())
    }

    /// `#+BUILD_SRC: oci:HOST/REPO@sha256:…`: the component a registry
    /// holds under that manifest digest (the manifest's pin, covered by its
    /// signature), signed by `#+OCI_SIGNER` (comma-separated dids) when
    /// given and by the home's required signers, through the egress floor.
    async fn oci_source(&self, tk: &Toolkit, reference: &str) -> Result<Vec<u8>, BuildError> {
        let reference = format!(
            "{}{}",
            workbooks_oci::SCHEME,
            reference.trim_start_matches(workbooks_oci::SCHEME)
        );
        let oci = |e: workbooks_oci::OciError| BuildError::Oci(e.to_string());
        let parsed = workbooks_oci::OciRef::parse(&reference).map_err(oci)?;
        if parsed.digest().is_none() {
            return Err(BuildError::Oci(format!(
                "#+BUILD_SRC {reference}: an oci: source names its manifest digest (@sha256:…), not a tag"
            )));
        }
        let signers: Vec<String> = tk
            .manifest
            .kw("OCI_SIGNER")
            .map(|s| {
                s.split(',')
                    .map(|d| d.trim().to_string())
                    .filter(|d| !d.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        let home = self.engine.home();
        let trust = workbooks_oci::Trust::of_home(home, &signers).map_err(oci)?;
        let transport = workbooks_oci::Transport::of_engine(
            &self.engine,
            workbooks_oci::Credentials::from_env().map_err(oci)?,
        );
        let pulled = workbooks_oci::pull(&transport, home, &reference, &trust)
            .await
            .map_err(oci)?;
        std::fs::read(&pulled.path)
            .map_err(|e| BuildError::Oci(format!("{}: {e}", pulled.path.display())))
    }

    /// Composes the toolkit's `#+COMPOSE` file (strictly inside its
    /// folder) from built toolkits, named `toolkit:<id>`, and registers
    /// the result under `bin`. The result runs one tier stronger when the
    /// toolkit or any of its parts is third-party.
    fn build_composed(
        &self,
        tk: &Toolkit,
        bin: &str,
        file: &str,
        replace: bool,
    ) -> Result<Entry, BuildError> {
        let source = compose_source(tk, file).map_err(|why| BuildError::Path {
            dir: file.to_string(),
            why,
        })?;
        let mut third_party = super::Standing::of(tk).tier() == Tier::OsProcess;
        // The parts are the toolkits beside this one.
        let beside = super::Toolkits::new(tk.dir.parent().map(std::path::Path::to_path_buf));
        let composed = crate::compose::compose(&source, file, |package| {
            let (kit, tier) = self.built_toolkit(&beside, package)?;
            third_party |= tier == Tier::OsProcess;
            Ok(kit)
        })?;
        let tier = if third_party {
            Tier::OsProcess
        } else {
            Tier::Instance
        };
        let mode = tk
            .manifest
            .kw("ARG_MODE")
            .and_then(ArgMode::parse)
            .unwrap_or(ArgMode::Argv);
        let bytes = composed.artifact.bytes().to_vec();
        self.registered(bin, bytes, mode, tier, Vec::new(), replace)
    }

    /// Registers a toolkit's command; over another registration of `bin`
    /// only when `replace`.
    pub(super) fn registered(
        &self,
        bin: &str,
        bytes: Vec<u8>,
        mode: ArgMode,
        tier: Tier,
        prefix: Vec<String>,
        replace: bool,
    ) -> Result<Entry, BuildError> {
        let registry = self.engine.registry();
        Ok(match replace {
            true => {
                registry
                    .replace_with_prefix(bin, bytes, mode, tier, prefix)?
                    .0
            }
            false => registry.register_with_prefix(bin, bytes, mode, tier, prefix)?,
        })
    }

    /// The registered component of the toolkit in `kits` a
    /// `toolkit:<id>` package names, and the tier it was registered at.
    pub fn built_toolkit(
        &self,
        kits: &super::Toolkits,
        package: &str,
    ) -> Result<(workbooks::artifact::Artifact, Tier), String> {
        let id = package
            .strip_prefix("toolkit:")
            .ok_or("only built toolkits compose: name them toolkit:<id>")?;
        let kit = kits.get(id).map_err(|e| e.to_string())?;
        let bin = kit.manifest.cli_bin().ok_or_else(|| {
            format!("toolkit `{id}` declares no #+CLI_BIN, so nothing of it is built")
        })?;
        let entry = self
            .engine
            .registry()
            .get(bin)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("toolkit `{id}` is not built yet (wbx toolkit build {id})"))?;
        let artifact = self
            .engine
            .registry()
            .load(&entry)
            .map_err(|e| e.to_string())?;
        Ok((artifact, entry.tier))
    }
}

/// The catalog row of a fetched source, which must carry its pin.
fn pinned_row(tk: &Toolkit, bin: &str, url: &str, path: Option<&str>) -> Result<Row, BuildError> {
    let sha = tk
        .manifest
        .kw("SHA256")
        .filter(|h| h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()))
        .ok_or_else(|| BuildError::Unpinned(url.to_string()))?;
    Ok(Row {
        name: bin.to_string(),
        about: format!("toolkit {}", tk.id),
        url: url.to_string(),
        // The archive kind is the manifest's `#+ARCHIVE:`, else the URL's
        // file name's (`.whl`, `.zip`, `.tgz`, `.tar.gz`, `.deb`), else zip.
        archive: path.and(
            tk.manifest
                .kw("ARCHIVE")
                .map(str::to_string)
                .or_else(|| Archive::of_url(url).is_none().then(|| "zip".into())),
        ),
        wasm_path: path.map(str::to_string),
        sha256: sha.to_string(),
        arg_mode: "argv".into(),
        ..Row::default()
    })
}

/// A signed toolkit's `path:` source must hash to its `#+SHA256` (see
/// [`needs_pin`]). An unsigned source needs no pin: it is first-party
/// only under a root the operator vouches for, else it runs at
/// `os_process`.
pub(super) fn signed_pin(tk: &Toolkit, dir: &str, bytes: &[u8]) -> Result<(), BuildError> {
    if !needs_pin(&tk.manifest) {
        return Ok(());
    }
    let pin = tk
        .manifest
        .kw("SHA256")
        .ok_or_else(|| BuildError::Unpinned(format!("the signed toolkit's source path:{dir}")))?;
    let got = workbooks::identity::sha256_hex(bytes);
    if !got.eq_ignore_ascii_case(pin) {
        return Err(BuildError::Integrity {
            file: format!("path:{dir}"),
            got,
        });
    }
    Ok(())
}

/// The one `.<ext>` file in `path:<dir>` (or `#+WASM_PATH` there), read
/// from strictly inside the toolkit's folder.
pub(super) fn prebuilt(tk: &Toolkit, dir: &str, ext: &str) -> Result<Vec<u8>, BuildError> {
    let bad = |why: &str| BuildError::Path {
        dir: dir.to_string(),
        why: why.to_string(),
    };
    let folder = inside(tk, dir, "folder").map_err(|why| bad(&why))?;
    let root = tk.dir.canonicalize().map_err(|e| bad(&e.to_string()))?;
    let file = match tk.manifest.kw("WASM_PATH") {
        Some(name) if is_slug(name) => folder.join(name),
        Some(_) => return Err(bad("#+WASM_PATH must be a file name in the folder")),
        None => {
            let wasm: Vec<_> = std::fs::read_dir(&folder)
                .map_err(|e| bad(&e.to_string()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == ext))
                .collect();
            match wasm.as_slice() {
                [one] => one.clone(),
                [] => return Err(bad(&format!("holds no .{ext}"))),
                _ => {
                    return Err(bad(&format!(
                        "holds more than one .{ext}; name one with #+WASM_PATH"
                    )));
                }
            }
        }
    };
    let resolved = file.canonicalize().map_err(|e| bad(&e.to_string()))?;
    if !resolved.starts_with(&root) {
        return Err(bad("its file is a link out of the toolkit's folder"));
    }
    let bytes = std::fs::read(&resolved).map_err(|e| bad(&e.to_string()))?;
    if bytes.len() > crate::limits::CATALOG_MAX_BYTES {
        return Err(bad("its file is past the 64 MiB cap"));
    }
    Ok(bytes)
}
