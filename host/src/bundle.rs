//! Bundles: one instance's VFS volumes, its HTML page and a signed
//! manifest packed into one portable `.wbundle` zip, and restored from it.
//!
//! Layout: `manifest.json` (the [`BundleManifest`] and an Ed25519
//! signature over its canonical JSON by the shipping tenant's did:key),
//! `page.html` when a page is shipped, and `volumes/<volume>/<path>` for
//! every file. Any zip tool opens it.
//!
//! Invariants. A restore writes nothing until the whole bundle checked
//! out: the signature verifies from the signer's DID alone (and is the
//! pinned signer's, when one is pinned), every entry is listed in the
//! manifest with its size and sha256 and no entry is missing, added or
//! named twice, and every path is a volume path the VFS accepts. It
//! restores only into an instance whose volumes are empty, so nothing is
//! overwritten and a failure part-way is undone by clearing them. Sizes
//! are capped ([`BUNDLE_MAX_BYTES`], [`BUNDLE_MAX_ENTRIES`]) on both sides
//! and read with `take`, so a zip bomb stops at the cap.

use crate::identity::{self, Identity, IdentityError};
use crate::limits::{BUNDLE_MAX_BYTES, BUNDLE_MAX_ENTRIES};
use crate::store::{VfsError, Volume, Volumes};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::{Read, Seek, Write};

/// The manifest's `format`.
pub const FORMAT: &str = "workbooks-bundle/1";
const MANIFEST: &str = "manifest.json";
const PAGE: &str = "page.html";
const VOLUMES: &str = "volumes/";

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
}

#[derive(Debug, Serialize, Deserialize)]
struct Signed {
    manifest: BundleManifest,
    signature: String,
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
    /// The shipped page, if any.
    #[serde(skip)]
    pub page: Option<Vec<u8>>,
}

/// The sha256 (hex) of `bytes`: a bundle file's pin.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

fn canonical(m: &BundleManifest) -> Vec<u8> {
    // `serde_json::Value` keeps object keys sorted.
    serde_json::to_value(m)
        .map(|v| v.to_string().into_bytes())
        .unwrap_or_default()
}

fn zip_err(e: impl std::fmt::Display) -> BundleError {
    BundleError::Zip(e.to_string())
}

/// Packs `volumes` (every file of every volume) and `page` into `out`,
/// signed by `identity`.
pub fn ship<W: Write + Seek>(
    volumes: &Volumes,
    page: Option<&[u8]>,
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
    let manifest = BundleManifest {
        format: FORMAT.into(),
        tenant: tenant.into(),
        instance: instance.into(),
        signer: identity.did.clone(),
        created_at: now,
        entries,
    };
    let signed = Signed {
        signature: identity.sign(&canonical(&manifest))?,
        manifest,
    };
    zip.start_file(MANIFEST, options).map_err(zip_err)?;
    let json = serde_json::to_vec_pretty(&signed).map_err(zip_err)?;
    zip.write_all(&json).map_err(zip_err)?;
    zip.finish().map_err(zip_err)?;
    Ok(signed.manifest)
}

/// Reads one entry whole, at most `cap` bytes.
fn read_entry<R: Read + Seek>(
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

/// Checks the bundle in `input` whole, then writes its files into
/// `volumes` (which must be empty). `signer`, when given, is the only
/// did:key accepted.
pub fn restore<R: Read + Seek>(
    input: R,
    volumes: &Volumes,
    target: &str,
    signer: Option<&str>,
) -> Result<Restored, BundleError> {
    let mut zip = zip::ZipArchive::new(input).map_err(zip_err)?;
    if zip.len() > BUNDLE_MAX_ENTRIES + 1 {
        return Err(BundleError::TooLarge(format!(
            "{} entries, past {BUNDLE_MAX_ENTRIES}",
            zip.len()
        )));
    }
    let manifest = checked_manifest(&mut zip, signer)?;
    let listed: BTreeMap<&str, &BundleEntry> = manifest
        .entries
        .iter()
        .map(|e| (e.path.as_str(), e))
        .collect();
    if listed.len() != manifest.entries.len() {
        return Err(BundleError::Tampered(
            "the manifest lists a file twice".into(),
        ));
    }
    for e in &manifest.entries {
        if e.path != PAGE && target_of(&e.path).is_none() {
            return Err(BundleError::Tampered(format!(
                "`{}` is not a volume path",
                e.path
            )));
        }
    }
    // First pass: every entry is listed, once, with its size and hash.
    let mut seen = std::collections::BTreeSet::new();
    for i in 0..zip.len() {
        let (name, bytes) = read_entry(&mut zip, i, BUNDLE_MAX_BYTES)?;
        if name == MANIFEST {
            continue;
        }
        let entry = listed
            .get(name.as_str())
            .ok_or_else(|| BundleError::Tampered(format!("`{name}` is not in the manifest")))?;
        if !seen.insert(name.clone()) {
            return Err(BundleError::Tampered(format!("`{name}` appears twice")));
        }
        if entry.size != bytes.len() as u64 || entry.sha256 != sha256_hex(&bytes) {
            return Err(BundleError::Tampered(format!(
                "`{name}` does not match its sha256 in the manifest"
            )));
        }
    }
    if let Some(missing) = listed.keys().find(|p| !seen.contains(**p)) {
        return Err(BundleError::Tampered(format!("`{missing}` is missing")));
    }
    if Volume::ALL.iter().any(|v| {
        volumes
            .usage(*v)
            .map(|(_, files)| files > 0)
            .unwrap_or(true)
    }) {
        return Err(BundleError::NotEmpty(target.to_string()));
    }
    // Second pass: write, checking again what is written.
    match write_files(&mut zip, &listed, volumes) {
        Ok((files, page)) => Ok(Restored {
            manifest,
            target: target.to_string(),
            files,
            page,
        }),
        Err(e) => {
            for v in Volume::ALL {
                let _ = volumes.clear(v);
            }
            Err(e)
        }
    }
}

/// The manifest of the bundle in `input`, its signature checked (by any
/// signer); nothing is written.
pub fn peek<R: Read + Seek>(input: R) -> Result<BundleManifest, BundleError> {
    let mut zip = zip::ZipArchive::new(input).map_err(zip_err)?;
    checked_manifest(&mut zip, None)
}

type Written = (usize, Option<Vec<u8>>);

fn write_files<R: Read + Seek>(
    zip: &mut zip::ZipArchive<R>,
    listed: &BTreeMap<&str, &BundleEntry>,
    volumes: &Volumes,
) -> Result<Written, BundleError> {
    let mut files = 0;
    let mut page = None;
    for i in 0..zip.len() {
        let (name, bytes) = read_entry(zip, i, BUNDLE_MAX_BYTES)?;
        if name == MANIFEST {
            continue;
        }
        let entry = listed
            .get(name.as_str())
            .ok_or_else(|| BundleError::Tampered(format!("`{name}` changed while restoring")))?;
        if entry.sha256 != sha256_hex(&bytes) {
            return Err(BundleError::Tampered(format!(
                "`{name}` changed while restoring"
            )));
        }
        if name == PAGE {
            page = Some(bytes);
        } else if let Some((volume, path)) = target_of(&name) {
            volumes.write(volume, path, &bytes)?;
            files += 1;
        }
    }
    Ok((files, page))
}

/// `volumes/<volume>/<path>` → the volume and path.
fn target_of(name: &str) -> Option<(Volume, &str)> {
    let rest = name.strip_prefix(VOLUMES)?;
    let (volume, path) = rest.split_once('/')?;
    Some((Volume::parse(volume)?, path))
}

fn checked_manifest<R: Read + Seek>(
    zip: &mut zip::ZipArchive<R>,
    signer: Option<&str>,
) -> Result<BundleManifest, BundleError> {
    let index = zip
        .index_for_name(MANIFEST)
        .ok_or_else(|| BundleError::Manifest("missing".into()))?;
    let (_, bytes) = read_entry(zip, index, 16 << 20)?;
    let signed: Signed =
        serde_json::from_slice(&bytes).map_err(|e| BundleError::Manifest(e.to_string()))?;
    let m = signed.manifest;
    if m.format != FORMAT {
        return Err(BundleError::Manifest(format!(
            "format `{}` is not {FORMAT}",
            m.format
        )));
    }
    identity::verify(&m.signer, &canonical(&m), &signed.signature)
        .map_err(|e| BundleError::Signature(e.to_string()))?;
    if let Some(want) = signer
        && want != m.signer
    {
        return Err(BundleError::Signature(format!(
            "signed by {}, not the pinned {want}",
            m.signer
        )));
    }
    Ok(m)
}
