//! The audit log of denials: counts per reason and the last entries, in
//! memory, and JSON lines in `<home>/audit.jsonl` so the log survives
//! restarts and other processes (`wbx audit`) can read it.
//!
//! Threat: denials are caused by untrusted parties (a guest hammering a
//! refused address, an unauthenticated client over its rate limit), so the
//! log must not grow with them. Repeats are coalesced: per (tenant,
//! cap, reason), the first denial of a [`AUDIT_COALESCE_WINDOW`] is
//! written at once and the rest of that window become one line with a
//! `count` when the window is over (or the log is flushed). The file is
//! kept open, not reopened per line, and rotated to `audit.jsonl.1` past
//! [`AUDIT_MAX_FILE_BYTES`], so the log on disk stays under twice that.
//! [`Audit::read_file`] reads both generations line by line; it never loads
//! a whole file. In memory, counts are exact and the recent list is capped.

use crate::limits::{AUDIT_COALESCE_WINDOW, AUDIT_MAX_FILE_BYTES};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::io::{BufRead, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

/// Entries kept in memory (and shown by `wbx audit`).
pub const AUDIT_RECENT: usize = 256;
/// Coalescing windows kept open at once; past it, all are written out.
const AUDIT_MAX_WINDOWS: usize = 4096;
/// Longest detail kept, in characters.
const AUDIT_MAX_DETAIL_CHARS: usize = 200;

/// One denial, or a run of repeats of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// Milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// The tenant that was refused (written `principal` by earlier builds,
    /// whose lines still read).
    #[serde(alias = "principal")]
    pub tenant: String,
    /// The cap that refused it (`exec`, `net`, ...; `serve` and
    /// `serve-tcp` for the serving lanes), written `broker` by earlier
    /// builds, whose lines still read.
    #[serde(alias = "broker")]
    pub cap: String,
    /// Why (`revoked`, `rate_limited`, `denied`, a guard's name).
    pub reason: String,
    /// A short detail: a command name, a host (the last one, for a run of
    /// repeats). Never a payload.
    pub detail: String,
    /// How many denials this entry stands for.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub count: u64,
}

fn one() -> u64 {
    1
}

fn is_one(n: &u64) -> bool {
    *n == 1
}

/// Counts per reason and the most recent entries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AuditSummary {
    /// Denials per reason.
    pub counts: BTreeMap<String, u64>,
    /// The most recent entries, oldest first.
    pub recent: Vec<AuditEntry>,
}

impl AuditSummary {
    fn add(&mut self, recent: &mut VecDeque<AuditEntry>, entry: AuditEntry) {
        *self.counts.entry(entry.reason.clone()).or_default() += entry.count;
        if recent.len() == AUDIT_RECENT {
            recent.pop_front();
        }
        recent.push_back(entry);
    }
}

type Key = (String, String, String);

/// One open coalescing window.
struct Window {
    opened: Instant,
    suppressed: u64,
    last_detail: String,
}

/// The file side: the open handle and the coalescing windows.
#[derive(Default)]
struct Sink {
    file: Option<std::fs::File>,
    windows: HashMap<Key, Window>,
    next_sweep: Option<Instant>,
}

/// The audit log.
pub struct Audit {
    path: Option<PathBuf>,
    memory: Mutex<(AuditSummary, VecDeque<AuditEntry>)>,
    sink: Mutex<Sink>,
}

impl std::fmt::Debug for Audit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Audit").field("path", &self.path).finish()
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The rotated generation of `file`.
fn rotated(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_os_string();
    name.push(".1");
    PathBuf::from(name)
}

impl Audit {
    /// A log appending to `file` (memory only when `None`).
    pub fn new(file: Option<PathBuf>) -> Self {
        Self {
            path: file,
            memory: Mutex::new((AuditSummary::default(), VecDeque::new())),
            sink: Mutex::new(Sink::default()),
        }
    }

    /// Records one denial.
    pub fn record(&self, tenant: &str, cap: &str, reason: &str, detail: &str) {
        let entry = AuditEntry {
            at_ms: now_ms(),
            tenant: tenant.to_string(),
            cap: cap.to_string(),
            reason: reason.to_string(),
            detail: detail.chars().take(AUDIT_MAX_DETAIL_CHARS).collect(),
            count: 1,
        };
        tracing::info!(tenant, cap, reason, detail, "denial");
        {
            let mut memory = self.memory.lock().unwrap_or_else(|p| p.into_inner());
            let (summary, recent) = &mut *memory;
            summary.add(recent, entry.clone());
        }
        if self.path.is_some() {
            let mut sink = self.sink.lock().unwrap_or_else(|p| p.into_inner());
            self.coalesce(&mut sink, entry);
        }
    }

    /// Writes `entry` now, or counts it into its open window.
    fn coalesce(&self, sink: &mut Sink, entry: AuditEntry) {
        let now = Instant::now();
        if sink.next_sweep.is_none_or(|at| now >= at) || sink.windows.len() >= AUDIT_MAX_WINDOWS {
            self.sweep(sink, now);
        }
        let key = (
            entry.tenant.clone(),
            entry.cap.clone(),
            entry.reason.clone(),
        );
        if let Some(w) = sink.windows.get_mut(&key)
            && now.duration_since(w.opened) < AUDIT_COALESCE_WINDOW
        {
            w.suppressed += 1;
            w.last_detail = entry.detail;
            return;
        }
        if let Some(w) = sink.windows.remove(&key) {
            self.write_repeats(sink, &key, w);
        }
        self.write(sink, &entry);
        sink.windows.insert(
            key,
            Window {
                opened: now,
                suppressed: 0,
                last_detail: String::new(),
            },
        );
    }

    /// Closes the windows that are over (all of them when too many are
    /// open), writing their repeats.
    fn sweep(&self, sink: &mut Sink, now: Instant) {
        let everything = sink.windows.len() >= AUDIT_MAX_WINDOWS;
        let over: Vec<Key> = sink
            .windows
            .iter()
            .filter(|(_, w)| everything || now.duration_since(w.opened) >= AUDIT_COALESCE_WINDOW)
            .map(|(k, _)| k.clone())
            .collect();
        for key in over {
            if let Some(w) = sink.windows.remove(&key) {
                self.write_repeats(sink, &key, w);
            }
        }
        sink.next_sweep = Some(now + AUDIT_COALESCE_WINDOW);
    }

    fn write_repeats(&self, sink: &mut Sink, key: &Key, window: Window) {
        if window.suppressed == 0 {
            return;
        }
        let (tenant, cap, reason) = key.clone();
        let entry = AuditEntry {
            at_ms: now_ms(),
            tenant,
            cap,
            reason,
            detail: window.last_detail,
            count: window.suppressed,
        };
        self.write(sink, &entry);
    }

    /// Appends one line, reopening the file if another process rotated it
    /// and rotating it past the size cap.
    fn write(&self, sink: &mut Sink, entry: &AuditEntry) {
        let Some(path) = &self.path else {
            return;
        };
        if let Err(e) = append(sink, path, entry) {
            sink.file = None;
            tracing::warn!(error = %e, "could not append to the audit log");
        }
    }

    /// Writes out the repeats of the windows that are over; a long-running
    /// server calls it every window so counts reach the file without a new
    /// denial to trigger them.
    pub(crate) fn flush_expired(&self) {
        if self.path.is_some() {
            let mut sink = self.sink.lock().unwrap_or_else(|p| p.into_inner());
            self.sweep(&mut sink, Instant::now());
        }
    }

    /// Writes out every open window's repeats.
    pub fn flush(&self) {
        if self.path.is_some() {
            let mut sink = self.sink.lock().unwrap_or_else(|p| p.into_inner());
            let windows: Vec<(Key, Window)> = sink.windows.drain().collect();
            for (key, w) in windows {
                self.write_repeats(&mut sink, &key, w);
            }
        }
    }

    /// What this engine has recorded since it started.
    pub fn summary(&self) -> AuditSummary {
        let memory = self.memory.lock().unwrap_or_else(|p| p.into_inner());
        AuditSummary {
            counts: memory.0.counts.clone(),
            recent: memory.1.iter().cloned().collect(),
        }
    }

    /// Everything recorded in `file` and its rotated generation, by any
    /// process: counts over both and the last [`AUDIT_RECENT`] entries,
    /// read line by line.
    pub fn read_file(file: &Path) -> std::io::Result<AuditSummary> {
        let mut summary = AuditSummary::default();
        let mut recent = VecDeque::new();
        for path in [rotated(file), file.to_path_buf()] {
            let f = match std::fs::File::open(&path) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            };
            for line in std::io::BufReader::new(f).split(b'\n') {
                if let Ok(entry) = serde_json::from_slice::<AuditEntry>(&line?) {
                    summary.add(&mut recent, entry);
                }
            }
        }
        summary.recent = recent.into();
        Ok(summary)
    }
}

impl Drop for Audit {
    fn drop(&mut self) {
        self.flush();
    }
}

fn append(sink: &mut Sink, path: &Path, entry: &AuditEntry) -> std::io::Result<()> {
    let current = std::fs::metadata(path).ok().map(|m| m.ino());
    let held = sink
        .file
        .as_ref()
        .and_then(|f| f.metadata().ok())
        .map(|m| m.ino());
    if current.is_none() || current != held {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        sink.file = Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)?,
        );
    }
    let Some(file) = sink.file.as_mut() else {
        return Ok(());
    };
    let mut line = serde_json::to_vec(entry).map_err(std::io::Error::other)?;
    line.push(b'\n');
    // One write of one line on an O_APPEND file: lines from concurrent
    // processes do not interleave.
    file.write_all(&line)?;
    if file.metadata()?.len() > AUDIT_MAX_FILE_BYTES {
        // Processes sharing the log rotate it under a lock on the file, and
        // only if the path still names the file they wrote: a second
        // rotation would put a fresh, short log over the full one.
        file.lock()?;
        let ours = file.metadata()?.ino();
        if std::fs::metadata(path).is_ok_and(|m| m.ino() == ours) {
            std::fs::rename(path, rotated(path))?;
        }
        file.unlock()?;
        sink.file = None;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denials_are_counted_kept_and_persisted() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("audit.jsonl");
        let audit = Audit::new(Some(file.clone()));
        audit.record("acme", "exec", "unknown_command", "nope");
        audit.record("acme", "exec", "unknown_command", "nada");
        audit.record("acme", "exec", "revoked", "");
        let s = audit.summary();
        assert_eq!(s.counts["unknown_command"], 2);
        assert_eq!(s.recent.len(), 3);
        audit.flush();
        let from_disk = Audit::read_file(&file).unwrap();
        assert_eq!(from_disk.counts, s.counts);
        // The repeat inside the window is written when the window is
        // flushed, after the denials that came later.
        let last = from_disk.recent.last().unwrap();
        assert_eq!(
            (last.reason.as_str(), last.detail.as_str()),
            ("unknown_command", "nada")
        );
    }

    #[test]
    fn a_line_written_before_principal_and_broker_were_renamed_still_reads() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("audit.jsonl");
        let old =
            r#"{"at_ms":1,"principal":"acme","broker":"exec","reason":"revoked","detail":""}"#;
        let new = r#"{"at_ms":2,"tenant":"beta","cap":"kv","reason":"denied","detail":"k"}"#;
        std::fs::write(&file, format!("{old}\n{new}\n")).unwrap();
        let read = Audit::read_file(&file).unwrap();
        let tenants: Vec<_> = read.recent.iter().map(|e| e.tenant.as_str()).collect();
        assert_eq!(tenants, ["acme", "beta"]);
        let caps: Vec<_> = read.recent.iter().map(|e| e.cap.as_str()).collect();
        assert_eq!(caps, ["exec", "kv"]);
        assert_eq!(read.counts["revoked"], 1);
    }

    #[test]
    fn a_flood_of_one_denial_writes_two_lines_and_keeps_the_exact_count() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("audit.jsonl");
        let audit = Audit::new(Some(file.clone()));
        for i in 0..100_000 {
            audit.record(
                "mallory",
                "serve",
                "rate_limited",
                &format!("10.0.0.{}", i % 250),
            );
        }
        audit.flush();
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert_eq!(
            Audit::read_file(&file).unwrap().counts["rate_limited"],
            100_000
        );
    }

    #[test]
    fn too_many_open_windows_are_written_out_and_no_count_is_lost() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("audit.jsonl");
        let audit = Audit::new(Some(file.clone()));
        // Twice as many tenants as windows may be open, three denials
        // each: the windows are closed as they overflow.
        let tenants = 2 * AUDIT_MAX_WINDOWS;
        for round in 0..3 {
            for p in 0..tenants {
                audit.record(&format!("p{p}"), "net", "denied", &format!("r{round}"));
            }
        }
        assert!(audit.sink.lock().unwrap().windows.len() <= AUDIT_MAX_WINDOWS);
        audit.flush();
        let counts = Audit::read_file(&file).unwrap().counts;
        assert_eq!(counts["denied"], 3 * tenants as u64);
    }

    #[test]
    fn the_file_rotates_past_its_cap_and_both_generations_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("audit.jsonl");
        let audit = Audit::new(Some(file.clone()));
        // Distinct tenants are never coalesced: one line each.
        let detail = "d".repeat(AUDIT_MAX_DETAIL_CHARS);
        let mut n = 0u64;
        while !rotated(&file).exists() {
            audit.record(&format!("p{n}"), "net", "denied", &detail);
            n += 1;
        }
        assert!(std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0) < AUDIT_MAX_FILE_BYTES);
        audit.record("last", "net", "denied", "x");
        assert_eq!(Audit::read_file(&file).unwrap().counts["denied"], n + 1);
    }
}
