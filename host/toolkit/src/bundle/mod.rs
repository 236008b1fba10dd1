//! Bundles: one instance's VFS volumes, its HTML page and a signed
//! manifest packed into one portable `.wbundle` zip, and restored from it.
//!
//! Layout: `manifest.json` (the [`BundleManifest`] and an Ed25519
//! signature over its canonical JSON by the shipping tenant's did:key),
//! `page.html` when a page is shipped, `volumes/<volume>/<path>` for
//! every file, and `commands/<name>.wasm` for each registered command
//! shipped with it. Any zip tool opens it.
//!
//! Invariants. A restore writes nothing until the whole bundle checked
//! out: the signature verifies from the signer's DID alone (and is the
//! pinned signer's, when one is pinned), every entry is listed in the
//! manifest with its size and sha256 and no entry is missing, added or
//! named twice, and every path is a volume path the VFS accepts. It
//! restores only into an instance whose volumes are empty, so nothing is
//! overwritten and a failure part-way is undone by clearing them. Sizes
//! are capped ([`BUNDLE_MAX_BYTES`], [`BUNDLE_MAX_ENTRIES`]) on both sides,
//! every entry's header is checked before any is inflated, and entries
//! that share bytes of the archive are refused, so a zip bomb stops before
//! it starts. Its commands are registered only when asked ([`Install`])
//! and only from a signer the operator pinned; installing them never
//! widens anything: a command carries no cap (the profile it runs under
//! decides), each is validated and refused under a reserved, catalog or
//! invalid name, or a name that holds another command (a bundle never
//! replaces one), before anything is written, and one signed by anyone
//! but the restoring tenant is registered one tier stronger (`os_process`).

use crate::limits::{BUNDLE_MAX_BYTES, BUNDLE_MAX_ENTRIES};
use serde::{Deserialize, Serialize};
use std::io::{Read, Seek, Write};
use workbooks::artifact::Artifact;
use workbooks::commands::{ArgMode, Entry, Registry, Tier};
use workbooks::identity::{Identity, IdentityError};
use workbooks::vfs::{VfsError, Volume, Volumes};

mod restore;
pub use restore::{peek, restore};

/// The manifest's `format`.
pub const FORMAT: &str = "workbooks-bundle/1";
pub(crate) const MANIFEST_NAME: &str = "manifest.json";
pub(crate) const PAGE: &str = "page.html";
pub(crate) const VOLUMES: &str = "volumes/";
pub(crate) const COMMANDS: &str = "commands/";

/// Why a bundle could not be shipped or restored.
#[derive(Debug, thiserror::Error)]
pub enum BundleError {
    /// The zip could not be read or written.
    #[error("bundle: the archive: {0}")]
    Zip(String),
    /// The manifest is missing or not a bundle manifest.
    #[error("bundle: manifest.json: {0}")]
    Manifest(String),
    /// The signature does not verify, or is not the pinned signer's.
    #[error("bundle: refused, the signature: {0}")]
    Signature(String),
    /// An entry differs from what the manifest lists.
    #[error("bundle: refused, tampered: {0}")]
    Tampered(String),
    /// Past a cap.
    #[error("bundle: {0}")]
    TooLarge(String),
    /// The target instance already holds files.
    #[error(
        "bundle: instance `{0}` already holds files; restore into a new instance id (nothing was written)"
    )]
    NotEmpty(String),
    /// The volumes refused a read or write.
    #[error("bundle: the volumes: {0}")]
    Vfs(#[from] VfsError),
    /// A shipped command cannot be installed here.
    #[error("bundle: refused, command `{name}`: {why}")]
    Command {
        /// The command.
        name: String,
        /// Why.
        why: String,
    },
    /// Signing failed.
    #[error(transparent)]
    Identity(#[from] IdentityError),
}

/// One file of a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleEntry {
    /// Its name in the zip.
    pub path: String,
    /// Its length.
    pub size: u64,
    /// The sha256 (hex) of its bytes.
    pub sha256: String,
}

/// What the shipping tenant signs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BundleManifest {
    /// [`FORMAT`].
    pub format: String,
    /// The tenant that shipped it.
    pub tenant: String,
    /// The instance whose volumes it holds.
    pub instance: String,
    /// The signer's did:key.
    pub signer: String,
    /// When it was shipped (Unix seconds).
    pub created_at: u64,
    /// Every file but the manifest, by zip name.
    pub entries: Vec<BundleEntry>,
    /// The registered commands shipped with it (`commands/<name>.wasm`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub commands: Vec<ShippedCommand>,
}

/// A registered command shipped in a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShippedCommand {
    /// Its name.
    pub name: String,
    /// The sha256 of its bytes.
    pub sha256: String,
    /// How it takes its argument.
    pub arg_mode: ArgMode,
    /// The tier it was registered at.
    pub tier: Tier,
    /// Its packaged arguments.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub prefix: Vec<String>,
}

impl ShippedCommand {
    /// The registration a restore makes of it: at its tier when the bundle
    /// is the restoring tenant's own, else one tier stronger.
    pub(crate) fn registered(&self, own: bool) -> Entry {
        Entry {
            name: self.name.clone(),
            sha256: self.sha256.clone(),
            arg_mode: self.arg_mode,
            tier: if own { self.tier } else { Tier::OsProcess },
            size: 0,
            registered_ms: 0,
            prefix: self.prefix.clone(),
            stubs: Vec::new(),
            origin: None,
            profile: None,
            caps: None,
        }
    }
}

/// Where a restore installs the shipped commands.
#[derive(Debug, Clone, Copy)]
pub struct Install<'a> {
    /// The registry.
    pub registry: &'a Registry,
    /// The bundle is the restoring tenant's own (signed by its did:key):
    /// its commands keep their tier.
    pub own: bool,
}

#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Signed {
    pub(crate) manifest: BundleManifest,
    pub(crate) signature: String,
}

/// What a restore wrote.
#[derive(Debug, Clone, Serialize)]
pub struct Restored {
    /// The manifest, checked.
    pub manifest: BundleManifest,
    /// The instance restored into.
    pub target: String,
    /// Files written to the volumes.
    pub files: usize,
    /// Commands registered.
    pub commands: Vec<Entry>,
    /// The shipped page, if any.
    #[serde(skip)]
    pub page: Option<Vec<u8>>,
}

pub use workbooks::identity::sha256_hex;

pub(crate) fn zip_err(e: impl std::fmt::Display) -> BundleError {
    BundleError::Zip(e.to_string())
}

/// Packs `volumes` (every file of every volume) and `page` into `out`,
/// signed by `identity`.
pub fn ship<W: Write + Seek>(
    volumes: &Volumes,
    page: Option<&[u8]>,
    commands: &[(Entry, Artifact)],
    identity: &Identity,
    (tenant, instance): (&str, &str),
    now: u64,
    out: W,
) -> Result<BundleManifest, BundleError> {
    let options = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    let mut zip = zip::ZipWriter::new(out);
    let mut entries = Vec::new();
    let mut total = 0u64;
    let mut add = |zip: &mut zip::ZipWriter<W>, name: String, bytes: &[u8]| {
        total += bytes.len() as u64;
        if total > BUNDLE_MAX_BYTES || entries.len() >= BUNDLE_MAX_ENTRIES {
            return Err(BundleError::TooLarge(format!(
                "past {BUNDLE_MAX_BYTES} bytes or {BUNDLE_MAX_ENTRIES} files"
            )));
        }
        zip.start_file(name.as_str(), options).map_err(zip_err)?;
        zip.write_all(bytes).map_err(zip_err)?;
        entries.push(BundleEntry {
            path: name,
            size: bytes.len() as u64,
            sha256: sha256_hex(bytes),
        });
        Ok(())
    };
    if let Some(page) = page {
        add(&mut zip, PAGE.into(), page)?;
    }
    for volume in Volume::ALL {
        for file in volumes.files(volume) {
            let (path, bytes) = file?;
            add(
                &mut zip,
                format!("{VOLUMES}{}/{path}", volume.name()),
                &bytes,
            )?;
        }
    }
    let mut shipped = Vec::new();
    for (entry, artifact) in commands {
        add(
            &mut zip,
            format!("{COMMANDS}{}.wasm", entry.name),
            artifact.bytes(),
        )?;
        shipped.push(ShippedCommand {
            name: entry.name.clone(),
            sha256: artifact.sha256_hex(),
            arg_mode: entry.arg_mode,
            tier: entry.tier,
            prefix: entry.prefix.clone(),
        });
    }
    let manifest = BundleManifest {
        format: FORMAT.into(),
        tenant: tenant.into(),
        instance: instance.into(),
        signer: identity.did.clone(),
        created_at: now,
        entries,
        commands: shipped,
    };
    let signed = Signed {
        signature: identity.sign(&workbooks::identity::canonical_json(&manifest))?,
        manifest,
    };
    zip.start_file(MANIFEST_NAME, options).map_err(zip_err)?;
    let json = serde_json::to_vec_pretty(&signed).map_err(zip_err)?;
    zip.write_all(&json).map_err(zip_err)?;
    zip.finish().map_err(zip_err)?;
    Ok(signed.manifest)
}

/// Reads one entry whole, at most `cap` bytes.
pub(crate) fn read_entry<R: Read + Seek>(
    zip: &mut zip::ZipArchive<R>,
    index: usize,
    cap: u64,
) -> Result<(String, Vec<u8>), BundleError> {
    let entry = zip.by_index(index).map_err(zip_err)?;
    let name = entry.name().map_err(zip_err)?.into_owned();
    let mut bytes = Vec::new();
    entry
        .take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(zip_err)?;
    if bytes.len() as u64 > cap {
        return Err(BundleError::TooLarge(format!("{name} is past the cap")));
    }
    Ok((name, bytes))
}
