//! The grants of a home, in `<home>/grants.json`: written whole and
//! atomically under an exclusive lock (`grants.json.lock`), so two
//! operators changing grants at once lose neither change; re-read when the
//! file's modification time moves, checked at most once per
//! [`GRANT_REFRESH_INTERVAL`], so a running engine sees a change made by
//! another process within that interval and a call pays one clock read
//! otherwise.

use super::Lists;
use super::record::Expiry;
use super::{GrantRecord, ScopeRefusal, Scoped};
use crate::limits::{GRANT_REFRESH_INTERVAL, GRANTS_MAX};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Instant, SystemTime};

/// What tells a changed file: its modification time, and its inode and
/// length (an atomic write is a new inode; two writes may share a time).
type Stamp = (SystemTime, u64, u64);

fn stamp_of(file: &std::path::Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(file).ok()?;
    Some((m.modified().ok()?, m.ino(), m.len()))
}

/// The grants' file in an engine home.
pub const GRANTS_FILE: &str = "grants.json";

/// A change to the book that cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BookError {
    /// No grant has this id.
    #[error("no grant {0}")]
    Unknown(String),
    /// A destination does not read.
    #[error("a destination does not read: {0}")]
    Scope(String),
    /// A narrowing would widen.
    #[error("grant {id} cannot be narrowed that way: {why}")]
    NotNarrower {
        /// The grant.
        id: String,
        /// What would widen.
        why: String,
    },
    /// A widening would narrow.
    #[error("grant {id} cannot be widened that way: {why}")]
    NotWider {
        /// The grant.
        id: String,
        /// What would narrow.
        why: String,
    },
    /// The book holds [`GRANTS_MAX`] grants.
    #[error("the home holds {0} grants already (revoke one first)")]
    Full(usize),
    /// The file cannot be read, parsed or written.
    #[error("{file}: {why}")]
    Io {
        /// The file.
        file: String,
        /// Why.
        why: String,
    },
}

/// One record and its scopes as read (or why they do not read).
#[derive(Debug)]
struct Entry {
    record: GrantRecord,
    scoped: Result<Arc<Scoped>, String>,
}

#[derive(Debug, Default)]
struct State {
    entries: BTreeMap<String, Arc<Entry>>,
    stamp: Option<Stamp>,
    /// Why the file as last read does not parse: every grant is refused.
    unreadable: Option<String>,
}

/// The grants of one home.
#[derive(Debug)]
pub struct GrantBook {
    file: Option<PathBuf>,
    state: RwLock<State>,
    /// When the file was last looked at, in milliseconds since `born`.
    looked_ms: AtomicU64,
    born: Instant,
}

impl GrantBook {
    /// The grants kept in `file` (in memory only when `None`).
    pub fn new(file: Option<PathBuf>) -> Self {
        let book = GrantBook {
            file,
            state: RwLock::new(State::default()),
            looked_ms: AtomicU64::new(0),
            born: Instant::now(),
        };
        book.refresh();
        book
    }

    fn stamp(&self) -> Option<Stamp> {
        let file = self.file.as_ref()?;
        stamp_of(file)
    }

    /// Reads the file again if it changed since it was last read.
    pub fn refresh(&self) {
        let stamp = self.stamp();
        self.looked_ms
            .store(self.born.elapsed().as_millis() as u64, Ordering::Relaxed);
        if self.state.read().unwrap_or_else(|p| p.into_inner()).stamp == stamp {
            return;
        }
        self.reload(stamp);
    }

    /// Reads the file, whatever its stamp.
    fn reload(&self, stamp: Option<Stamp>) {
        let read = self.read_file();
        let mut state = self.state.write().unwrap_or_else(|p| p.into_inner());
        *state = match read {
            Ok(records) => State {
                entries: entries(records),
                stamp,
                unreadable: None,
            },
            Err(why) => State {
                entries: BTreeMap::new(),
                stamp,
                unreadable: Some(why),
            },
        };
    }

    fn read_file(&self) -> Result<Vec<GrantRecord>, String> {
        let Some(file) = &self.file else {
            return Ok(Vec::new());
        };
        match std::fs::read(file) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| e.to_string()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(e.to_string()),
        }
    }

    /// The scopes of grant `id` as they are now, reading the file again
    /// when [`GRANT_REFRESH_INTERVAL`] has passed since it was last looked
    /// at. An id it does not hold sends it to the file at once: a grant added
    /// by another process a moment ago is not taken for a revoked one.
    pub fn current(&self, id: &str) -> Result<Arc<Scoped>, ScopeRefusal> {
        let now = self.born.elapsed().as_millis() as u64;
        let stale = now.saturating_sub(self.looked_ms.load(Ordering::Relaxed))
            >= GRANT_REFRESH_INTERVAL.as_millis() as u64;
        if !stale && let Some(answer) = self.held(id) {
            return answer;
        }
        self.refresh();
        self.held(id)
            .unwrap_or_else(|| Err(ScopeRefusal::Revoked { id: id.to_string() }))
    }

    /// The scopes of grant `id` as last read, or why they cannot be had;
    /// `None` when the book does not hold `id`.
    fn held(&self, id: &str) -> Option<Result<Arc<Scoped>, ScopeRefusal>> {
        let state = self.state.read().unwrap_or_else(|p| p.into_inner());
        if let Some(why) = &state.unreadable {
            return Some(Err(ScopeRefusal::Unreadable {
                id: id.to_string(),
                why: why.clone(),
            }));
        }
        let entry = state.entries.get(id)?;
        Some(
            entry
                .scoped
                .clone()
                .map_err(|why| ScopeRefusal::Unreadable {
                    id: id.to_string(),
                    why,
                }),
        )
    }

    /// Grant `id` as stored.
    pub fn get(&self, id: &str) -> Option<GrantRecord> {
        self.refresh();
        let state = self.state.read().unwrap_or_else(|p| p.into_inner());
        state.entries.get(id).map(|e| e.record.clone())
    }

    /// Every grant, by id; or why the file does not read.
    pub fn list(&self) -> Result<Vec<GrantRecord>, BookError> {
        self.refresh();
        let state = self.state.read().unwrap_or_else(|p| p.into_inner());
        if let Some(why) = &state.unreadable {
            return Err(self.io_error(why.clone()));
        }
        Ok(state.entries.values().map(|e| e.record.clone()).collect())
    }

    /// Stores `record` under a new id; returns it as stored.
    pub fn add(&self, mut record: GrantRecord) -> Result<GrantRecord, BookError> {
        record.validate()?;
        self.update(|records| {
            if records.len() >= GRANTS_MAX {
                return Err(BookError::Full(GRANTS_MAX));
            }
            record.id = loop {
                let id = new_id();
                if !records.iter().any(|r| r.id == id) {
                    break id;
                }
            };
            records.push(record.clone());
            Ok(record.clone())
        })
    }

    /// Narrows grant `id` (see [`GrantRecord::narrow`]); returns it as
    /// stored.
    pub fn narrow(
        &self,
        id: &str,
        only: &Lists,
        drop: &Lists,
        expiry: Expiry,
        by: &str,
    ) -> Result<GrantRecord, BookError> {
        self.change(id, |r| r.narrow(only, drop, expiry, by))
    }

    /// Widens grant `id` (see [`GrantRecord::widen`]); returns it as
    /// stored.
    pub fn widen(
        &self,
        id: &str,
        add: &Lists,
        expiry: Expiry,
        by: &str,
    ) -> Result<GrantRecord, BookError> {
        self.change(id, |r| r.widen(add, expiry, by))
    }

    /// Counts `tokens` spent on the model under grant `id` against its
    /// allowance (written only when it has one; no history entry: a spend
    /// is not a change of reach). An unknown grant counts nothing.
    pub fn spend_llm(&self, id: &str, tokens: u64) -> Result<(), BookError> {
        let held = self.get(id).is_some_and(|r| r.llm_tokens.is_some());
        if !held || tokens == 0 {
            return Ok(());
        }
        self.update(|records| {
            if let Some(r) = records.iter_mut().find(|r| r.id == id) {
                r.llm_spent = r.llm_spent.saturating_add(tokens);
            }
            Ok(())
        })
    }

    /// Removes grant `id`: every call under it is refused from the next.
    pub fn revoke(&self, id: &str) -> Result<GrantRecord, BookError> {
        self.update(|records| {
            let at = records
                .iter()
                .position(|r| r.id == id)
                .ok_or_else(|| BookError::Unknown(id.to_string()))?;
            Ok(records.remove(at))
        })
    }

    fn change(
        &self,
        id: &str,
        edit: impl FnOnce(&mut GrantRecord) -> Result<(), BookError>,
    ) -> Result<GrantRecord, BookError> {
        self.update(|records| {
            let record = records
                .iter_mut()
                .find(|r| r.id == id)
                .ok_or_else(|| BookError::Unknown(id.to_string()))?;
            edit(record)?;
            Ok(record.clone())
        })
    }

    /// Runs `edit` on the records as stored now, under the lock, and
    /// writes them back when it succeeds.
    fn update<R>(
        &self,
        edit: impl FnOnce(&mut Vec<GrantRecord>) -> Result<R, BookError>,
    ) -> Result<R, BookError> {
        let _lock = self.lock()?;
        // Under the lock the file is read whatever its stamp says (two
        // writes may share a modification time); a book in memory is its
        // own truth.
        if self.file.is_some() {
            self.reload(self.stamp());
        }
        let mut state = self.state.write().unwrap_or_else(|p| p.into_inner());
        if let Some(why) = &state.unreadable {
            return Err(self.io_error(why.clone()));
        }
        let mut records: Vec<GrantRecord> =
            state.entries.values().map(|e| e.record.clone()).collect();
        let out = edit(&mut records)?;
        if let Some(file) = &self.file {
            let bytes =
                serde_json::to_vec_pretty(&records).map_err(|e| self.io_error(e.to_string()))?;
            crate::files::write_atomic(file, &bytes).map_err(|e| self.io_error(e.to_string()))?;
            state.stamp = stamp_of(file);
        }
        state.entries = entries(records);
        Ok(out)
    }

    /// An exclusive lock on the book's lock file, held until dropped.
    fn lock(&self) -> Result<Option<std::fs::File>, BookError> {
        let Some(file) = &self.file else {
            return Ok(None);
        };
        let lock_file = file.with_extension("json.lock");
        if let Some(dir) = file.parent() {
            std::fs::create_dir_all(dir).map_err(|e| self.io_error(e.to_string()))?;
        }
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_file)
            .map_err(|e| self.io_error(e.to_string()))?;
        rustix::fs::flock(&f, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| self.io_error(e.to_string()))?;
        Ok(Some(f))
    }

    fn io_error(&self, why: String) -> BookError {
        BookError::Io {
            file: self
                .file
                .as_ref()
                .map_or("(memory)".into(), |f| f.display().to_string()),
            why,
        }
    }
}

fn entries(records: Vec<GrantRecord>) -> BTreeMap<String, Arc<Entry>> {
    records
        .into_iter()
        .map(|record| {
            let scoped = Scoped::of(&record).map(Arc::new).map_err(|e| e.to_string());
            (record.id.clone(), Arc::new(Entry { record, scoped }))
        })
        .collect()
}

/// `g-` and eight random hex digits.
fn new_id() -> String {
    let mut bytes = [0u8; 4];
    getrandom::fill(&mut bytes).expect("the system's random source");
    format!("g-{}", hex::encode(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scoped_record(net: &[&str]) -> GrantRecord {
        let mut r = GrantRecord::new("t", "op");
        r.net = Some(net.iter().map(|s| s.to_string()).collect());
        r
    }

    #[test]
    fn a_narrowing_written_by_another_handle_is_seen_within_the_refresh_interval() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(GRANTS_FILE);
        let engine_side = GrantBook::new(Some(file.clone()));
        let cli_side = GrantBook::new(Some(file));
        let id = cli_side
            .add(scoped_record(&["https://a.example", "https://b.example"]))
            .unwrap()
            .id;
        std::thread::sleep(GRANT_REFRESH_INTERVAL * 2);
        let before = engine_side.current(&id).unwrap();
        assert!(before.net().unwrap().allows("https", "b.example", 443));
        let drop = Lists {
            net: vec!["https://b.example".into()],
            ..Lists::default()
        };
        cli_side
            .narrow(&id, &Lists::default(), &drop, Expiry::Keep, "op")
            .unwrap();
        std::thread::sleep(GRANT_REFRESH_INTERVAL * 2);
        let after = engine_side.current(&id).unwrap();
        assert!(!after.net().unwrap().allows("https", "b.example", 443));
        assert!(after.net().unwrap().allows("https", "a.example", 443));
        cli_side.revoke(&id).unwrap();
        std::thread::sleep(GRANT_REFRESH_INTERVAL * 2);
        assert_eq!(
            engine_side.current(&id).unwrap_err().reason(),
            "grant_revoked"
        );
    }

    #[test]
    fn a_book_that_does_not_read_refuses_every_grant_and_every_change() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(GRANTS_FILE);
        let book = GrantBook::new(Some(file.clone()));
        let id = book.add(scoped_record(&["https://a.example"])).unwrap().id;
        std::fs::write(&file, b"{ not json").unwrap();
        book.refresh();
        assert_eq!(book.current(&id).unwrap_err().reason(), "grant_unreadable");
        assert!(matches!(
            book.add(GrantRecord::new("t", "op")),
            Err(BookError::Io { .. })
        ));
        // The bad file is left for the operator to read, not overwritten.
        assert_eq!(std::fs::read(&file).unwrap(), b"{ not json");
    }

    #[test]
    fn two_handles_adding_at_once_lose_neither_grant() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(GRANTS_FILE);
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let file = file.clone();
                std::thread::spawn(move || {
                    let book = GrantBook::new(Some(file));
                    for _ in 0..10 {
                        book.add(GrantRecord::new("t", "op")).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(GrantBook::new(Some(file)).list().unwrap().len(), 40);
    }

    #[test]
    fn a_grant_another_handle_just_added_is_current_at_once_not_taken_for_revoked() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(GRANTS_FILE);
        let engine_side = GrantBook::new(Some(file.clone()));
        let first = engine_side.add(GrantRecord::new("t", "op")).unwrap().id;
        // Looked at just now: the next refresh would wait out the interval.
        assert!(engine_side.current(&first).is_ok());
        let added = GrantBook::new(Some(file))
            .add(GrantRecord::new("t", "op"))
            .unwrap()
            .id;
        assert!(engine_side.current(&added).is_ok());
        assert!(matches!(
            engine_side.current("g-00000000"),
            Err(ScopeRefusal::Revoked { .. })
        ));
    }

    #[test]
    fn a_book_holds_no_more_grants_than_its_bound() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(GRANTS_FILE);
        let full: Vec<GrantRecord> = (0..GRANTS_MAX)
            .map(|i| GrantRecord {
                id: format!("g-{i:08x}"),
                ..GrantRecord::new("t", "op")
            })
            .collect();
        std::fs::write(&file, serde_json::to_vec(&full).unwrap()).unwrap();
        let book = GrantBook::new(Some(file));
        assert_eq!(
            book.add(GrantRecord::new("t", "op")).unwrap_err(),
            BookError::Full(GRANTS_MAX)
        );
    }
}
