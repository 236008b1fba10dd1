//! `git` (exec only): one fixed operation, commit-and-push. The model
//! supplies the commit message and nothing else; the host commits the
//! workdir's files onto the tenant's branch and pushes it to the tenant's
//! remote (libgit2: a path or `file://` URL of a bare repository, or plain
//! `http://`; this build has no https or ssh transport).
//!
//! The commit is made in a scratch repository outside the workdir, so
//! nothing the model writes (a planted `.git/config`, hooks, a remote) is
//! ever read: the workdir's own `.git` folders, links and the host's run
//! files are left out. The push is a fast-forward; a remote that moved on
//! refuses it and the model reads that it did.

use super::tree::{Exported, files_under, read_walked};
use super::{AgentServices, GitRemote, for_tenant};
use crate::limits::AGENT_GIT_MESSAGE_BYTES;
use git2::{Oid, Repository};
use std::collections::BTreeMap;
use std::path::Path;

/// Commits `workdir` with `message` and pushes it for `tenant`; the text
/// the model reads, or the error.
pub(crate) async fn commit_and_push(
    services: &AgentServices,
    tenant: &str,
    workdir: &Path,
    message: &str,
) -> Result<String, String> {
    let remote = services.git.clone().ok_or_else(|| {
        "git error: no remote is configured (the operator sets WB_AGENT_GIT_REMOTE)".to_string()
    })?;
    if message.trim().is_empty() {
        return Err("git error: the commit message is empty".into());
    }
    if message.len() > AGENT_GIT_MESSAGE_BYTES || message.contains('\0') {
        return Err(format!(
            "git error: the commit message must be text of at most {AGENT_GIT_MESSAGE_BYTES} bytes"
        ));
    }
    let (tenant, workdir, message) = (
        tenant.to_string(),
        workdir.to_path_buf(),
        message.to_string(),
    );
    tokio::task::spawn_blocking(move || push_blocking(&remote, &tenant, &workdir, &message))
        .await
        .map_err(|e| format!("git error: {e}"))?
}

fn push_blocking(
    remote: &GitRemote,
    tenant: &str,
    workdir: &Path,
    message: &str,
) -> Result<String, String> {
    let url = for_tenant(&remote.url, tenant);
    let scratch = tempfile::tempdir().map_err(|e| format!("git error: scratch: {e}"))?;
    // Errors may name the remote or the scratch; neither is the model's.
    let said = |e: git2::Error| {
        let text = e
            .message()
            .replace(&url, "<remote>")
            .replace(&scratch.path().display().to_string(), "<scratch>");
        format!("git error: {text}")
    };
    let repo = Repository::init_bare(scratch.path()).map_err(said)?;
    let mut origin = repo.remote_anonymous(&url).map_err(said)?;
    let branch = &remote.branch;
    let local = format!("refs/heads/{branch}");
    let tracking = format!("refs/remotes/origin/{branch}");
    // A remote without the branch yet fetches nothing: the first commit.
    origin
        .fetch(&[format!("+{local}:{tracking}")], None, None)
        .map_err(said)?;
    let parent = repo
        .find_reference(&tracking)
        .ok()
        .and_then(|r| r.peel_to_commit().ok());
    let files =
        files_under(workdir, &crate::workdir::RUN_FILES).map_err(|e| format!("git error: {e}"))?;
    let tree_id = write_tree(&repo, &files)?;
    if parent.as_ref().is_some_and(|p| p.tree_id() == tree_id) {
        return Ok(format!(
            "nothing to commit: {branch} already holds your working dir"
        ));
    }
    let tree = repo.find_tree(tree_id).map_err(said)?;
    let email = format!("agent@{tenant}.workbooks.invalid");
    let sig = git2::Signature::now("workbooks agent", &email).map_err(said)?;
    let parents: Vec<&git2::Commit> = parent.iter().collect();
    let commit = repo
        .commit(Some(&local), &sig, &sig, message, &tree, &parents)
        .map_err(said)?;
    let mut refused: Option<String> = None;
    let mut callbacks = git2::RemoteCallbacks::new();
    callbacks.push_update_reference(|_, status| {
        refused = status.map(str::to_string);
        Ok(())
    });
    let mut options = git2::PushOptions::new();
    options.remote_callbacks(callbacks);
    let pushed = origin.push(&[format!("{local}:{local}")], Some(&mut options));
    drop(options);
    pushed.map_err(said)?;
    if let Some(why) = refused {
        return Err(format!("git error: the remote refused the push: {why}"));
    }
    let id = commit.to_string();
    Ok(format!(
        "committed {} ({}) and pushed it to {branch}",
        &id[..7],
        super::files(files.len())
    ))
}

/// A folder of the tree being built.
#[derive(Default)]
struct Folder {
    files: BTreeMap<String, (Oid, i32)>,
    folders: BTreeMap<String, Folder>,
}

/// Writes `files` as blobs and trees; the root tree's id.
fn write_tree(repo: &Repository, files: &[Exported]) -> Result<Oid, String> {
    let mut root = Folder::default();
    for file in files {
        let bytes = read_walked(file).map_err(|e| format!("git error: {e}"))?;
        let blob = repo
            .blob(&bytes)
            .map_err(|e| format!("git error: {}", e.message()))?;
        let mode = if file.executable { 0o100755 } else { 0o100644 };
        let mut parts: Vec<&str> = file.rel.split('/').collect();
        let name = parts.pop().unwrap_or_default();
        let mut at = &mut root;
        for part in parts {
            at = at.folders.entry(part.to_string()).or_default();
        }
        at.files.insert(name.to_string(), (blob, mode));
    }
    write_folder(repo, &root).map_err(|e| format!("git error: {}", e.message()))
}

fn write_folder(repo: &Repository, folder: &Folder) -> Result<Oid, git2::Error> {
    let mut builder = repo.treebuilder(None)?;
    for (name, (oid, mode)) in &folder.files {
        builder.insert(name, *oid, *mode)?;
    }
    for (name, sub) in &folder.folders {
        let oid = write_folder(repo, sub)?;
        builder.insert(name, oid, 0o040000)?;
    }
    builder.write()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_empty_an_oversized_or_a_nul_message_is_refused_before_any_git_work() {
        let work = tempfile::tempdir().unwrap();
        let services = AgentServices {
            git: Some(GitRemote {
                // Never reached: every message below is refused first.
                url: "/nonexistent/{tenant}.git".into(),
                branch: "main".into(),
            }),
            ..AgentServices::default()
        };
        let push = |m: String| {
            let (s, w) = (services.clone(), work.path().to_path_buf());
            async move { commit_and_push(&s, "t", &w, &m).await }
        };
        assert_eq!(
            push("  ".into()).await,
            Err("git error: the commit message is empty".into())
        );
        let capped = format!(
            "git error: the commit message must be text of at most {AGENT_GIT_MESSAGE_BYTES} bytes"
        );
        assert_eq!(
            push("x".repeat(AGENT_GIT_MESSAGE_BYTES + 1)).await,
            Err(capped.clone())
        );
        assert_eq!(push("a\0b".into()).await, Err(capped));
        let none = commit_and_push(&AgentServices::default(), "t", work.path(), "m").await;
        assert!(none.unwrap_err().contains("no remote is configured"));
    }
}
