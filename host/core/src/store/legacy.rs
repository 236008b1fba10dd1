//! Volumes written before volumes were scoped by tenant.
//!
//! Such a volume lives in a tree named `vfs/<instance>`: it belonged to
//! whichever tenant ran an instance with that id, and the database cannot
//! say which. Handing it to any tenant that asks for the id would leak one
//! tenant's files to another, and deleting it would lose them, so an id with
//! an unscoped tree is refused ([`StorageError::LegacyVolumes`]) until the
//! operator either gives the tree to its tenant ([`Storage::adopt_legacy`],
//! `wbx vfs adopt`) or drops it ([`Storage::drop_legacy`]).

use super::{Storage, StorageError, validate_name, volume_tree};
use std::collections::BTreeSet;

/// The instance ids that still have an unscoped `vfs/<id>` tree.
pub(super) fn scan(db: &sled::Db) -> BTreeSet<String> {
    db.tree_names()
        .iter()
        .filter_map(|name| {
            let name = std::str::from_utf8(name).ok()?;
            let id = name.strip_prefix("vfs/")?;
            (!id.contains('/') && !id.is_empty()).then(|| id.to_string())
        })
        .collect()
}

impl Storage {
    /// The instance ids whose volumes predate tenant scoping.
    pub fn legacy_volumes(&self) -> Vec<String> {
        self.legacy().iter().cloned().collect()
    }

    /// Gives the unscoped volumes of instance `id` to `tenant`: every file
    /// moves to the tenant's volumes of that id in one batch, then the old
    /// tree is dropped. Refused if the tenant already has volumes for `id`.
    pub fn adopt_legacy(&self, id: &str, tenant: &str) -> Result<u64, StorageError> {
        validate_name("tenant", tenant)?;
        validate_name("instance", id)?;
        let _guard = self.vfs_lock();
        let old_name = format!("vfs/{id}");
        if !self.legacy().contains(id) {
            return Err(StorageError::Backend(format!(
                "instance `{id}` has no unscoped volumes"
            )));
        }
        let old = self.inner.db.open_tree(&old_name)?;
        let new = self.inner.db.open_tree(volume_tree(tenant, id))?;
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
        self.inner.db.drop_tree(old_name)?;
        self.flush()?;
        self.legacy().remove(id);
        Ok(moved)
    }

    /// Deletes the unscoped volumes of instance `id`; returns whether there
    /// were any.
    pub fn drop_legacy(&self, id: &str) -> Result<bool, StorageError> {
        validate_name("instance", id)?;
        let _guard = self.vfs_lock();
        let dropped = self.inner.db.drop_tree(format!("vfs/{id}"))?;
        self.flush()?;
        self.legacy().remove(id);
        Ok(dropped)
    }
}
