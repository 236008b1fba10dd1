//! Volumes written before volumes were scoped by tenant.
//!
//! Such a volume lives in a tree named `vfs/<instance>`: it belonged to
//! whichever tenant ran an instance with that id, and the database cannot
//! say which. Handing it to any tenant that asks for the id would leak one
//! tenant's files to another, and deleting it would lose them, so an id with
//! an unscoped tree is refused ([`StorageError::LegacyVolumes`]) until the
//! operator either gives the tree to its tenant ([`Storage::adopt_legacy`],
//! `wbx vfs adopt`) or drops it ([`Storage::drop_legacy`]).

use super::storage::volume_tree;
use crate::storage::{Storage, StorageError, validate_name};
use std::collections::BTreeSet;

/// The instance ids that still have an unscoped `vfs/<id>` tree, among
/// the tree names `names`.
pub(super) fn scan(names: impl Iterator<Item = String>) -> BTreeSet<String> {
    names
        .filter_map(|name| {
            let id = name.strip_prefix("vfs/")?;
            (!id.contains('/') && !id.is_empty()).then(|| id.to_string())
        })
        .collect()
}

impl Storage {
    /// The instance ids whose volumes predate tenant scoping.
    pub fn legacy_volumes(&self) -> Vec<String> {
        self.vfs().legacy(self).iter().cloned().collect()
    }

    /// Gives the unscoped volumes of instance `id` to `tenant`: every file
    /// moves to the tenant's volumes of that id in one batch, then the old
    /// tree is dropped. Refused if the tenant already has volumes for `id`.
    pub fn adopt_legacy(&self, id: &str, tenant: &str) -> Result<u64, StorageError> {
        validate_name("tenant", tenant)?;
        validate_name("instance", id)?;
        let vfs = self.vfs();
        let _guard = vfs.writes();
        let old_name = format!("vfs/{id}");
        if !vfs.legacy(self).contains(id) {
            return Err(StorageError::Backend(format!(
                "instance `{id}` has no unscoped volumes"
            )));
        }
        let old = self.tree(&old_name)?;
        let new = self.tree(&volume_tree(tenant, id))?;
        if !new.is_empty() {
            return Err(StorageError::AdoptConflict {
                tenant: tenant.to_string(),
                id: id.to_string(),
            });
        }
        let mut batch = sled::Batch::default();
        let mut moved = 0u64;
        for item in old.iter() {
            let (k, v) = item?;
            batch.insert(k, v);
            moved += 1;
        }
        new.apply_batch(batch)?;
        self.flush()?;
        self.drop_tree(&old_name)?;
        self.flush()?;
        vfs.legacy(self).remove(id);
        Ok(moved)
    }

    /// Deletes the unscoped volumes of instance `id`; returns whether there
    /// were any.
    pub fn drop_legacy(&self, id: &str) -> Result<bool, StorageError> {
        validate_name("instance", id)?;
        let vfs = self.vfs();
        let _guard = vfs.writes();
        let dropped = self.drop_tree(&format!("vfs/{id}"))?;
        self.flush()?;
        vfs.legacy(self).remove(id);
        Ok(dropped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_unscoped_volume_tree_names_a_legacy_id() {
        let names = [
            "vfs/run",
            "vfs/alice/run",
            "vfs/",
            "kv/alice",
            "queue/run",
            "vfs/a.b",
        ];
        let ids = scan(names.into_iter().map(String::from));
        assert_eq!(ids, BTreeSet::from(["a.b".to_string(), "run".to_string()]));
    }

    #[test]
    fn an_id_adopted_by_one_handle_is_free_for_every_handle_of_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let storage = Storage::open(dir.path()).unwrap();
        storage
            .tree("vfs/run")
            .unwrap()
            .insert(b"\x01a", &[0u8; 8])
            .unwrap();
        let other = storage.clone();
        assert!(matches!(
            other.volumes("alice", "run"),
            Err(StorageError::LegacyVolumes { .. })
        ));
        assert_eq!(storage.adopt_legacy("run", "alice").unwrap(), 1);
        assert!(other.volumes("alice", "run").is_ok());
        assert!(other.legacy_volumes().is_empty());
    }
}
