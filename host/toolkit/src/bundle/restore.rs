//! Restoring a bundle: the whole of it checked before anything is
//! written, then written into an instance that holds no files (see the
//! module above for the invariants).

use super::{
    BundleEntry, BundleError, BundleManifest, COMMANDS, FORMAT, Install, PAGE, Restored,
    ShippedCommand, Signed, VOLUMES, read_entry, sha256_hex, zip_err,
};
use crate::limits::{BUNDLE_MAX_BYTES, BUNDLE_MAX_ENTRIES};
use std::collections::BTreeMap;
use std::io::{Read, Seek};
use workbooks::artifact::Artifact;
use workbooks::commands::builtin;
use workbooks::commands::registry::validate_name;
use workbooks::identity;
use workbooks::vfs::{Volume, Volumes};

const MANIFEST: &str = super::MANIFEST_NAME;

/// Checks the bundle in `input` whole, then writes its files into
/// `volumes` (which must be empty). `signer`, when given, is the only
/// did:key accepted.
pub fn restore<R: Read + Seek>(
    input: R,
    volumes: &Volumes,
    target: &str,
    signer: Option<&str>,
    install: Option<Install<'_>>,
) -> Result<Restored, BundleError> {
    let mut zip = zip::ZipArchive::new(input).map_err(zip_err)?;
    if zip.len() > BUNDLE_MAX_ENTRIES + 1 {
        return Err(BundleError::TooLarge(format!(
            "{} entries, past {BUNDLE_MAX_ENTRIES}",
            zip.len()
        )));
    }
    let manifest = checked_manifest(&mut zip, signer)?;
    // Commands are registered only from a signer the operator pinned, and
    // never over a name that holds anything else.
    if let (Some(_), None, Some(first)) = (install, signer, manifest.commands.first()) {
        return Err(BundleError::Command {
            name: first.name.clone(),
            why: "registering a bundle's commands needs a pinned signer (--signer DID); nothing was written".into(),
        });
    }
    if let Some(Install { registry, own }) = install {
        let mut new_names = 0;
        for c in &manifest.commands {
            let unreadable = |e: workbooks::commands::RegistryError| BundleError::Command {
                name: c.name.clone(),
                why: e.to_string(),
            };
            let wanted = c.registered(own);
            new_names += usize::from(registry.get(&c.name).map_err(unreadable)?.is_none());
            if let Some(held) = registry.conflict(&wanted).map_err(unreadable)? {
                return Err(BundleError::Command {
                    name: c.name.clone(),
                    why: format!(
                        "is registered already (sha256 {}, tier {}; the bundle's would be sha256 {}, tier {}); a bundle never replaces a command (nothing was written)",
                        held.sha256,
                        held.tier.name(),
                        wanted.sha256,
                        wanted.tier.name()
                    ),
                });
            }
            if let Some(pin) = workbooks::commands::builtin::pinned(&c.name)
                && pin != c.sha256
            {
                return Err(BundleError::Command {
                    name: c.name.clone(),
                    why: format!("is the catalog's, pinned to sha256 {pin} (nothing was written)"),
                });
            }
        }
        let room = registry.room().map_err(|e| BundleError::Command {
            name: String::new(),
            why: e.to_string(),
        })?;
        if new_names > room {
            return Err(BundleError::Command {
                name: manifest.commands[0].name.clone(),
                why: format!(
                    "the bundle registers {new_names} new names; the registry has room for {room} (nothing was written)"
                ),
            });
        }
    }
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
    let shipped: BTreeMap<String, &ShippedCommand> = manifest
        .commands
        .iter()
        .map(|c| (format!("{COMMANDS}{}.wasm", c.name), c))
        .collect();
    for c in &manifest.commands {
        let part = listed.get(format!("{COMMANDS}{}.wasm", c.name).as_str());
        if part.is_none_or(|p| p.sha256 != c.sha256) {
            return Err(BundleError::Tampered(format!(
                "command `{}` has no part matching its sha256",
                c.name
            )));
        }
    }
    for e in &manifest.entries {
        if e.path != PAGE && target_of(&e.path).is_none() && !shipped.contains_key(&e.path) {
            return Err(BundleError::Tampered(format!(
                "`{}` is not a volume path",
                e.path
            )));
        }
    }
    checked_layout(&mut zip, &listed)?;
    // First pass: every entry is listed, once, with its size and hash.
    let mut seen = std::collections::BTreeSet::new();
    for i in 0..zip.len() {
        let name = entry_name(&mut zip, i)?;
        if name == MANIFEST {
            continue;
        }
        let entry = listed
            .get(name.as_str())
            .ok_or_else(|| BundleError::Tampered(format!("`{name}` is not in the manifest")))?;
        let (_, bytes) = read_entry(&mut zip, i, entry.size)?;
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
    // The commands are checked whole before anything is written.
    let commands = match install {
        Some(_) => checked_commands(&mut zip, &manifest.commands)?,
        None => Vec::new(),
    };
    // Second pass: write, checking again what is written.
    let (files, page) = match write_files(&mut zip, &listed, volumes) {
        Ok(written) => written,
        Err(e) => {
            for v in Volume::ALL {
                let _ = volumes.clear(v);
            }
            return Err(e);
        }
    };
    let mut registered = Vec::new();
    if let Some(Install { registry, own }) = install {
        // What was checked above may have changed since (another process
        // registered meanwhile): a failure undoes the whole restore.
        let mut added = Vec::new();
        for (c, artifact) in commands {
            let wanted = c.registered(own);
            let was_free = matches!(registry.get(&c.name), Ok(None));
            let done = registry.register_with_prefix(
                &c.name,
                artifact.bytes().to_vec(),
                c.arg_mode,
                wanted.tier,
                c.prefix.clone(),
            );
            match done {
                Ok(entry) => {
                    if was_free {
                        added.push(entry.name.clone());
                    }
                    registered.push(entry);
                }
                Err(e) => {
                    for name in &added {
                        let _ = registry.remove(name);
                    }
                    for v in Volume::ALL {
                        let _ = volumes.clear(v);
                    }
                    return Err(BundleError::Command {
                        name: c.name.clone(),
                        why: format!("{e} (nothing was kept)"),
                    });
                }
            }
        }
    }
    Ok(Restored {
        manifest,
        target: target.to_string(),
        files,
        commands: registered,
        page,
    })
}

/// Each shipped command's bytes, hashed and validated, under a name the
/// registry would take.
fn checked_commands<R: Read + Seek>(
    zip: &mut zip::ZipArchive<R>,
    commands: &[ShippedCommand],
) -> Result<Vec<(ShippedCommand, Artifact)>, BundleError> {
    let mut out = Vec::new();
    for c in commands {
        let refuse = |why: String| BundleError::Command {
            name: c.name.clone(),
            why,
        };
        validate_name(&c.name).map_err(|e| refuse(e.to_string()))?;
        if builtin::is_reserved(&c.name) {
            return Err(refuse("is a reserved built-in name".into()));
        }
        let index = zip
            .index_for_name(&format!("{COMMANDS}{}.wasm", c.name))
            .ok_or_else(|| refuse("its part is missing".into()))?;
        let size = zip.by_index_raw(index).map_err(zip_err)?.size();
        let (_, bytes) = read_entry(zip, index, size.min(BUNDLE_MAX_BYTES))?;
        if sha256_hex(&bytes) != c.sha256 {
            return Err(BundleError::Tampered(format!(
                "command `{}` changed",
                c.name
            )));
        }
        let artifact = Artifact::from_bytes(bytes).map_err(|e| refuse(e.to_string()))?;
        out.push((c.clone(), artifact));
    }
    Ok(out)
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
        let name = entry_name(zip, i)?;
        if name == MANIFEST {
            continue;
        }
        let entry = listed
            .get(name.as_str())
            .ok_or_else(|| BundleError::Tampered(format!("`{name}` changed while restoring")))?;
        let (_, bytes) = read_entry(zip, i, entry.size)?;
        if entry.sha256 != sha256_hex(&bytes) {
            return Err(BundleError::Tampered(format!(
                "`{name}` changed while restoring"
            )));
        }
        if name == PAGE {
            page = Some(bytes);
        } else if name.starts_with(COMMANDS) {
            // Registered after the volumes, from the checked copy.
        } else if let Some((volume, path)) = target_of(&name) {
            volumes.write(volume, path, &bytes)?;
            files += 1;
        }
    }
    Ok((files, page))
}

/// The name of entry `index`, read from its header alone.
fn entry_name<R: Read + Seek>(
    zip: &mut zip::ZipArchive<R>,
    index: usize,
) -> Result<String, BundleError> {
    let entry = zip.by_index_raw(index).map_err(zip_err)?;
    Ok(entry.name().map_err(zip_err)?.into_owned())
}

/// Every entry's header, checked before any byte of any entry is
/// inflated: a plain file, stored or deflated and not encrypted, whose
/// declared size is the size the signed manifest lists; all of them
/// together within [`BUNDLE_MAX_BYTES`]; and no two sharing a byte of the
/// archive, nor any reaching into the central directory.
///
/// Threat: a small archive whose directory names one compressed stream
/// many times (each entry inflating to the cap) would have a restore
/// inflate without bound before a single hash could fail; so would
/// entries that declare less than they inflate to. Here the work a
/// restore will do is bounded by the manifest's sizes before it starts.
fn checked_layout<R: Read + Seek>(
    zip: &mut zip::ZipArchive<R>,
    listed: &BTreeMap<&str, &BundleEntry>,
) -> Result<(), BundleError> {
    let mut spans = Vec::with_capacity(zip.len());
    let mut total = 0u64;
    for i in 0..zip.len() {
        let entry = zip.by_index_raw(i).map_err(zip_err)?;
        let name = entry.name().map_err(zip_err)?.into_owned();
        let refused = |why: String| Err(BundleError::Tampered(format!("`{name}` {why}")));
        if entry.encrypted() {
            return refused("is encrypted".into());
        }
        if !entry.is_file() || entry.is_symlink() {
            return refused("is not a plain file".into());
        }
        match entry.compression() {
            zip::CompressionMethod::Stored | zip::CompressionMethod::Deflated => {}
            other => return refused(format!("is compressed with {other}, not stored or deflate")),
        }
        if name != MANIFEST {
            let listed_size = match listed.get(name.as_str()) {
                Some(e) => e.size,
                None => return refused("is not in the manifest".into()),
            };
            if entry.size() != listed_size {
                return refused(format!(
                    "declares {} bytes; the manifest lists {listed_size}",
                    entry.size()
                ));
            }
            total = total.saturating_add(listed_size);
            if total > BUNDLE_MAX_BYTES {
                return Err(BundleError::TooLarge(format!(
                    "the entries hold more than {BUNDLE_MAX_BYTES} bytes in all"
                )));
            }
        }
        let start = entry.header_start();
        let end = entry
            .data_start()
            .and_then(|d| d.checked_add(entry.compressed_size()))
            .ok_or_else(|| BundleError::Tampered(format!("`{name}` has no readable data")))?;
        spans.push((start, end, name));
    }
    spans.sort();
    for pair in spans.windows(2) {
        let ((_, end, a), (start, _, b)) = (&pair[0], &pair[1]);
        if start < end {
            return Err(BundleError::Tampered(format!(
                "`{a}` and `{b}` share bytes of the archive"
            )));
        }
    }
    if let Some((_, end, name)) = spans.last()
        && *end > zip.central_directory_start()
    {
        return Err(BundleError::Tampered(format!(
            "`{name}` reaches into the archive's directory"
        )));
    }
    Ok(())
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
    identity::verify(&m.signer, &identity::canonical_json(&m), &signed.signature)
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
