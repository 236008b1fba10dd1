//! Durable state: one sled database under `<home>/db`, and the names
//! that may key it.
//!
//! Each cap that keeps state owns its trees and the layout in them, in its
//! own folder: `vfs/<tenant>/<instance>` (`cap/vfs/storage.rs`: an
//! instance's volumes, scoped by the tenant that runs it), `kv/<tenant>`
//! (`cap/kv/storage.rs`) and `queue/<tenant>` (`cap/queue/storage.rs`).
//! Each opens them through [`Storage::tree`], with what it shares across
//! stores ([`Storage::shared`]: its write lock, its waiters).
//!
//! Invariant: tree names come only from names [`validate_name`] passed,
//! which the host chooses; a guest never supplies one. Every acknowledged
//! write is flushed to disk before it is acknowledged. Writes that must
//! keep a count consistent (kv key count, vfs volume usage) update data and
//! count in one atomic batch, serialised per cap.
//!
//! sled holds an exclusive lock on the database, so one engine process owns
//! a home at a time; a second gets [`StorageError::Locked`].

use crate::limits::MAX_NAME_BYTES;
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The engine's sled database.
#[derive(Clone)]
pub struct Storage {
    inner: Arc<Inner>,
}

struct Inner {
    db: sled::Db,
    path: PathBuf,
    /// What the caps above share across every store of this database
    /// (a cap's write lock, its waiters), one of each type.
    shared: Mutex<HashMap<TypeId, Arc<dyn Any + Send + Sync>>>,
}

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Storage")
            .field("path", &self.inner.path)
            .finish()
    }
}

/// A storage failure the embedder sees.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// Another process holds the database.
    #[error("storage at {path} is in use by another process")]
    Locked {
        /// The database directory.
        path: PathBuf,
    },
    /// The database could not be opened.
    #[error("cannot open storage at {path}: {message}")]
    Open {
        /// The database directory.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A tenant or instance name was refused.
    #[error("invalid {kind} name `{name}`: {why}")]
    InvalidName {
        /// `tenant` or `instance`.
        kind: &'static str,
        /// The name as given (truncated if very long).
        name: String,
        /// Why it was refused.
        why: &'static str,
    },
    /// The instance id still has volumes from before they were scoped by
    /// tenant; nobody may use the id until the operator settles them
    /// (`cap/vfs/legacy.rs`).
    #[error(
        "instance `{id}` has volumes from before volumes were scoped by tenant (tree vfs/{id}); \
         give them to their tenant with `wbx vfs adopt {id} --tenant TENANT`, \
         or delete them with `wbx vfs drop-legacy {id}`"
    )]
    LegacyVolumes {
        /// The instance id.
        id: String,
    },
    /// `adopt` would overwrite volumes the tenant already has.
    #[error(
        "tenant `{tenant}` already has volumes for instance `{id}`; adopting would overwrite them \
         (if an earlier adopt was cut short, they are already there: `wbx vfs drop-legacy {id}`)"
    )]
    AdoptConflict {
        /// The tenant.
        tenant: String,
        /// The instance id.
        id: String,
    },
    /// The backend failed.
    #[error("storage backend failed: {0}")]
    Backend(String),
}

impl From<sled::Error> for StorageError {
    fn from(e: sled::Error) -> Self {
        StorageError::Backend(e.to_string())
    }
}

impl Storage {
    /// Opens (creating if needed) the database in `dir`.
    pub fn open(dir: &Path) -> Result<Storage, StorageError> {
        std::fs::create_dir_all(dir).map_err(|e| StorageError::Open {
            path: dir.to_path_buf(),
            message: e.to_string(),
        })?;
        let db = sled::Config::new().path(dir).open().map_err(|e| {
            let message = e.to_string();
            if message.contains("could not acquire lock") {
                StorageError::Locked {
                    path: dir.to_path_buf(),
                }
            } else {
                StorageError::Open {
                    path: dir.to_path_buf(),
                    message,
                }
            }
        })?;
        Ok(Storage {
            inner: Arc::new(Inner {
                db,
                path: dir.to_path_buf(),
                shared: Mutex::default(),
            }),
        })
    }

    /// The directory holding the database.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The tree `name`, opened (made if new). A cap above names its own
    /// trees from validated names only.
    pub(crate) fn tree(&self, name: &str) -> Result<sled::Tree, StorageError> {
        Ok(self.inner.db.open_tree(name)?)
    }

    /// The names of every tree, made by any cap.
    pub(crate) fn tree_names(&self) -> impl Iterator<Item = String> {
        self.inner
            .db
            .tree_names()
            .into_iter()
            .filter_map(|name| String::from_utf8(name.to_vec()).ok())
    }

    /// Drops the tree `name`; returns whether it existed.
    pub(crate) fn drop_tree(&self, name: &str) -> Result<bool, StorageError> {
        Ok(self.inner.db.drop_tree(name)?)
    }

    /// The one `T` every store of this database shares, made on first use.
    pub(crate) fn shared<T: Default + Send + Sync + 'static>(&self) -> Arc<T> {
        let mut shared = self.inner.shared.lock().unwrap_or_else(|p| p.into_inner());
        let entry = shared
            .entry(TypeId::of::<T>())
            .or_insert_with(|| Arc::new(T::default()));
        match entry.clone().downcast::<T>() {
            Ok(t) => t,
            Err(_) => unreachable!("keyed by its own type"),
        }
    }

    /// Flushes every write so far to disk.
    pub(crate) fn flush(&self) -> Result<(), StorageError> {
        self.inner.db.flush()?;
        Ok(())
    }
}

/// The database, opened on first use and shared by the engine and every
/// store it builds, so sessions whose guests never touch storage never open
/// it (nor contend for its lock).
#[derive(Debug)]
pub(crate) struct StorageSlot {
    dir: PathBuf,
    storage: Mutex<Option<Storage>>,
}

impl StorageSlot {
    /// A slot for the database in `dir`, not yet opened.
    pub fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            storage: Mutex::new(None),
        }
    }

    /// The database, opening it if this is the first use.
    pub fn get(&self) -> Result<Storage, StorageError> {
        let mut slot = self.storage.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(s) = slot.as_ref() {
            return Ok(s.clone());
        }
        // The database's lock outlives a closed handle by a moment (sled
        // finishes background writes first), so an engine reopening a home
        // in the same process waits that moment out; a home another
        // process holds is still reported as locked.
        let mut waited = Duration::ZERO;
        let s = loop {
            match Storage::open(&self.dir) {
                Err(StorageError::Locked { .. }) if waited < LOCK_RELEASE_WAIT => {
                    std::thread::sleep(LOCK_RETRY);
                    waited += LOCK_RETRY;
                }
                other => break other?,
            }
        };
        *slot = Some(s.clone());
        Ok(s)
    }
}

/// How long opening waits for a just-closed database's lock to go.
const LOCK_RELEASE_WAIT: Duration = Duration::from_secs(1);
/// The pause between attempts.
const LOCK_RETRY: Duration = Duration::from_millis(25);

/// Checks a tenant or instance name: 1 to [`MAX_NAME_BYTES`] of
/// `A-Z a-z 0-9 _ . -`, not `.` or `..`. These names become tree and path
/// components, so nothing else is allowed.
pub fn validate_name(kind: &'static str, name: &str) -> Result<(), StorageError> {
    let fault = name_fault(name).or((name == "." || name == "..").then_some("reserved"));
    match fault {
        None => Ok(()),
        Some(why) => Err(StorageError::InvalidName {
            kind,
            name: name.chars().take(64).collect(),
            why,
        }),
    }
}

/// What is wrong with a stored name, if anything: it must be 1 to
/// [`MAX_NAME_BYTES`] of `A-Z a-z 0-9 _ . -`.
pub(crate) fn name_fault(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        Some("empty")
    } else if name.len() > MAX_NAME_BYTES {
        Some("longer than 128 bytes")
    } else if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
    {
        Some("only A-Z a-z 0-9 _ . - are allowed")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_could_escape_a_tree_are_refused() {
        for bad in ["", ".", "..", "a/b", "a\0b", "a b", "ü", &"x".repeat(129)] {
            assert!(validate_name("tenant", bad).is_err(), "{bad:?}");
        }
        for good in ["default", "acme-1", "a.b_c", &"x".repeat(128)] {
            assert!(validate_name("tenant", good).is_ok(), "{good:?}");
        }
    }

    #[test]
    fn a_home_another_holder_keeps_is_still_reported_as_locked_after_the_wait() {
        let dir = tempfile::tempdir().unwrap();
        let _holder = Storage::open(dir.path()).unwrap();
        let slot = StorageSlot::new(dir.path().to_path_buf());
        assert!(matches!(slot.get(), Err(StorageError::Locked { .. })));
    }

    #[test]
    fn a_second_open_of_the_same_home_is_reported_as_locked() {
        let dir = tempfile::tempdir().unwrap();
        let _first = Storage::open(dir.path()).unwrap();
        let second = Storage::open(dir.path()).unwrap_err();
        assert!(matches!(second, StorageError::Locked { .. }), "{second}");
    }
}
