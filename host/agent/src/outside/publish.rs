//! `publish` (exec only): copies the workdir's `content/**` and `blog/**`
//! into the tenant's web root, keeping their paths. The model names
//! nothing: the folders are fixed and the root is the operator's, with the
//! tenant put in. Links are never followed, on either side: a `content`
//! that is a link is refused, a link inside is left out, and a destination
//! path through a link is refused. Files already in the root stay.

use super::tree::{Exported, files_under, read_walked};
use super::{AgentServices, web_root};
use crate::limits::{AGENT_EXPORT_MAX_BYTES, AGENT_EXPORT_MAX_FILES};
use crate::workdir::confine;
use std::path::{Path, PathBuf};

/// The folders `publish` copies.
pub(crate) const PUBLISHED: [&str; 2] = ["content", "blog"];

/// Publishes `workdir` for `tenant`; the text the model reads, or the
/// error.
pub(crate) async fn publish(
    services: &AgentServices,
    tenant: &str,
    workdir: &Path,
) -> Result<String, String> {
    let root = web_root(services, tenant).ok_or_else(|| {
        "publish error: no web root is configured (the operator sets WB_AGENT_WEB_ROOT)".to_string()
    })?;
    let workdir = workdir.to_path_buf();
    tokio::task::spawn_blocking(move || copy_published(&workdir, &root))
        .await
        .map_err(|e| format!("publish error: {e}"))?
        .map_err(|e| format!("publish error: {e}"))
}

fn copy_published(workdir: &Path, root: &Path) -> Result<String, String> {
    let mut plan: Vec<(&str, Vec<Exported>)> = Vec::new();
    for folder in PUBLISHED {
        let at = workdir.join(folder);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                return Err(format!(
                    "{folder}/ is a link; only a real folder is published"
                ));
            }
            Ok(m) if m.is_dir() => plan.push((folder, files_under(&at, &[])?)),
            _ => {}
        }
    }
    if plan.is_empty() {
        return Err("nothing to publish: your working dir has no content/ or blog/".into());
    }
    let count: usize = plan.iter().map(|(_, f)| f.len()).sum();
    let bytes: u64 = plan.iter().flat_map(|(_, f)| f).map(|f| f.size).sum();
    if count > AGENT_EXPORT_MAX_FILES {
        return Err(format!("more than {AGENT_EXPORT_MAX_FILES} files"));
    }
    if bytes > AGENT_EXPORT_MAX_BYTES {
        return Err(format!("more than {AGENT_EXPORT_MAX_BYTES} bytes"));
    }
    std::fs::create_dir_all(root).map_err(|e| format!("the web root cannot be made: {e}"))?;
    let mut counts = Vec::new();
    for (folder, files) in &plan {
        for file in files {
            let rel = format!("{folder}/{}", file.rel);
            copy_one(root, &rel, file)?;
        }
        counts.push(format!("{folder}/: {}", files.len()));
    }
    Ok(format!(
        "published {} to the web root ({})",
        super::files(count),
        counts.join(", ")
    ))
}

/// Writes one file under `root` at `rel`, through no link.
fn copy_one(root: &Path, rel: &str, file: &Exported) -> Result<(), String> {
    let through_link = || format!("{rel}: the web root has a link on this path");
    let dest: PathBuf = confine(root, rel).ok_or_else(through_link)?;
    if let Some(dir) = dest.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{rel}: {e}"))?;
    }
    // Created folders were checked too: none may be a link.
    confine(root, rel).ok_or_else(through_link)?;
    let bytes = read_walked(file)?;
    workbooks::files::write_atomic(&dest, &bytes).map_err(|e| format!("{rel}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn without_a_web_root_or_anything_to_publish_nothing_is_written() {
        let work = tempfile::tempdir().unwrap();
        std::fs::write(work.path().join("notes.txt"), "n").unwrap();
        let none = publish(&AgentServices::default(), "t", work.path()).await;
        assert!(none.unwrap_err().contains("no web root is configured"));
        let www = tempfile::tempdir().unwrap();
        let services = AgentServices {
            web_root: Some(format!("{}/{{tenant}}", www.path().display())),
            ..AgentServices::default()
        };
        assert_eq!(
            publish(&services, "t", work.path()).await,
            Err(
                "publish error: nothing to publish: your working dir has no content/ or blog/"
                    .into()
            )
        );
        assert!(!www.path().join("t").exists());
    }
}
