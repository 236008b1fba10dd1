//! Revoked tenants. Checked on every host primitive call. Persisted in
//! `<home>/revoked.json` and re-read whenever that file changes, so a
//! revocation made by another process (`wbx revoke`) reaches a running
//! engine at its next call.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::RwLock;
use std::time::SystemTime;

#[derive(Debug, Default)]
struct State {
    set: BTreeSet<String>,
    stamp: Option<SystemTime>,
}

/// The set of revoked tenants.
#[derive(Debug)]
pub struct Revocations {
    file: Option<PathBuf>,
    state: RwLock<State>,
}

impl Revocations {
    /// Revocations persisted in `file` (in memory only when `None`).
    pub fn new(file: Option<PathBuf>) -> Self {
        let r = Self {
            file,
            state: RwLock::new(State::default()),
        };
        r.refresh();
        r
    }

    fn stamp(&self) -> Option<SystemTime> {
        let file = self.file.as_ref()?;
        std::fs::metadata(file).and_then(|m| m.modified()).ok()
    }

    /// Reads the file again if it changed since it was last read.
    pub(crate) fn refresh(&self) {
        let stamp = self.stamp();
        if self.state.read().unwrap_or_else(|p| p.into_inner()).stamp == stamp {
            return;
        }
        let set = self
            .file
            .as_ref()
            .and_then(|f| std::fs::read(f).ok())
            .and_then(|b| serde_json::from_slice::<BTreeSet<String>>(&b).ok())
            .unwrap_or_default();
        *self.state.write().unwrap_or_else(|p| p.into_inner()) = State { set, stamp };
    }

    /// Whether `tenant` is revoked.
    pub(crate) fn is_revoked(&self, tenant: &str) -> bool {
        self.refresh();
        self.is_revoked_as_read(tenant)
    }

    /// Whether `tenant` is revoked in the list as last read, without
    /// looking at the file again (after a [`Revocations::refresh`] that
    /// covers a whole batch of calls).
    pub(crate) fn is_revoked_as_read(&self, tenant: &str) -> bool {
        self.state
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .set
            .contains(tenant)
    }

    /// Revokes `tenant`; returns whether it was not revoked before.
    pub fn revoke(&self, tenant: &str) -> std::io::Result<bool> {
        self.update(|set| set.insert(tenant.to_string()))
    }

    /// Lifts the revocation of `tenant`; returns whether it was revoked.
    pub fn unrevoke(&self, tenant: &str) -> std::io::Result<bool> {
        self.update(|set| set.remove(tenant))
    }

    /// Every revoked tenant.
    pub fn list(&self) -> Vec<String> {
        self.refresh();
        self.state
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .set
            .iter()
            .cloned()
            .collect()
    }

    fn update(&self, change: impl FnOnce(&mut BTreeSet<String>) -> bool) -> std::io::Result<bool> {
        self.refresh();
        let mut state = self.state.write().unwrap_or_else(|p| p.into_inner());
        let changed = change(&mut state.set);
        if let Some(file) = &self.file {
            let bytes = serde_json::to_vec_pretty(&state.set).map_err(std::io::Error::other)?;
            crate::files::write_atomic(file, &bytes)?;
            state.stamp = std::fs::metadata(file).and_then(|m| m.modified()).ok();
        }
        Ok(changed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_revocation_written_by_another_handle_is_seen_at_the_next_check() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("revoked.json");
        let engine_side = Revocations::new(Some(file.clone()));
        assert!(!engine_side.is_revoked("acme"));
        let cli_side = Revocations::new(Some(file));
        assert!(cli_side.revoke("acme").unwrap());
        assert!(engine_side.is_revoked("acme"));
        assert!(cli_side.unrevoke("acme").unwrap());
        // Same-second rewrites can share an mtime; the writer's own view is
        // always current.
        assert!(!cli_side.is_revoked("acme"));
    }
}
