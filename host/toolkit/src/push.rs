//! `toolkit push`: a toolkit folder shipped onto this engine, into its
//! toolkits root under its id.
//!
//! Invariants. Nothing lands that does not verify: the folder is copied
//! (regular files only, capped as an import is) into a staging folder
//! beside the root, verified there, and only then renamed into place, so a
//! failed push leaves the root as it was. The folder's `#+TOOLKIT` must be
//! the id it is pushed as, and an existing toolkit is replaced only when
//! asked.

use super::{ToolkitError, Toolkits};
use crate::tree::io;
use crate::tree::{copy_beneath, files_under};
use std::path::Path;
use workbooks::commands::Registry;

/// What a push did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Pushed {
    /// The toolkit.
    pub id: String,
    /// Files copied.
    pub files: usize,
    /// Bytes copied.
    pub bytes: u64,
    /// Whether an earlier version was replaced.
    pub replaced: bool,
}

/// Copies the files of `from` (as [`files_under`] lists them) into `to`,
/// never following a link (see [`crate::tree`]), within the import cap.
fn copy_tree(id: &str, from: &Path, to: &Path) -> Result<(usize, u64), ToolkitError> {
    let (files, _) = files_under(id, from)?;
    let mut copied = 0u64;
    for rel in &files {
        let budget = crate::import::IMPORT_MAX_BYTES - copied;
        copied += copy_beneath(id, from, rel, &to.join(rel), budget)?;
    }
    Ok((files.len(), copied))
}

/// Pushes the toolkit folder `dir` into `kits`' root as `id`.
pub fn push(
    kits: &Toolkits,
    registry: &Registry,
    id: &str,
    dir: &Path,
    replace: bool,
) -> Result<Pushed, ToolkitError> {
    let root = kits
        .root()
        .ok_or_else(|| io(id, "no toolkits root (set --root or WB_TOOLKITS_ROOT)"))?;
    if !crate::discover::is_slug(id) {
        return Err(ToolkitError::Unknown(id.to_string()));
    }
    let dest = root.join(id);
    let existed = dest.exists();
    if existed && !replace {
        return Err(io(
            id,
            "already in the root; pass --replace to ship a new version",
        ));
    }
    let staging = root.join(format!(".push-{id}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    let mut n = (0, 0);
    let checked = copy_tree(id, dir, &staging.join(id)).and_then(|copied| {
        n = copied;
        let tk = Toolkits::new(Some(staging.clone())).get(id)?;
        let report = crate::verify(&tk, registry);
        let failed: Vec<String> = report
            .checks
            .iter()
            .filter(|c| !c.ok)
            .map(|c| c.what.clone())
            .collect();
        if failed.is_empty() {
            Ok(())
        } else {
            Err(io(id, format!("does not verify: {}", failed.join("; "))))
        }
    });
    let landed = checked.and_then(|()| {
        let old = staging.join(".old");
        if existed {
            std::fs::rename(&dest, &old).map_err(|e| io(id, e))?;
        }
        std::fs::rename(staging.join(id), &dest).map_err(|e| {
            // Put the old version back: a failed push leaves the root as it was.
            if existed {
                let _ = std::fs::rename(&old, &dest);
            }
            io(id, e)
        })
    });
    let _ = std::fs::remove_dir_all(&staging);
    landed.map(|()| Pushed {
        id: id.to_string(),
        files: n.0,
        bytes: n.1,
        replaced: existed,
    })
}
