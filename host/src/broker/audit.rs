//! The audit log of denials: counts per reason and the last entries, in
//! memory, and one JSON line per denial in `<home>/audit.jsonl` so the log
//! survives restarts and other processes (`wbx audit`) can read it.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// Entries kept in memory (and shown by `wbx audit`).
pub const AUDIT_RECENT: usize = 256;

/// One denial.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuditEntry {
    /// Milliseconds since the Unix epoch.
    pub at_ms: u64,
    /// The principal that was refused.
    pub principal: String,
    /// The broker that refused it (`exec`, `net`, ...).
    pub broker: String,
    /// Why (`revoked`, `rate_limited`, `denied`, a guard's name).
    pub reason: String,
    /// A short detail: a command name, a host. Never a payload.
    pub detail: String,
}

/// Counts per reason and the most recent entries.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct AuditSummary {
    /// Denials per reason.
    pub counts: BTreeMap<String, u64>,
    /// The most recent denials, oldest first.
    pub recent: Vec<AuditEntry>,
}

/// The audit log.
#[derive(Debug)]
pub struct Audit {
    file: Option<PathBuf>,
    state: Mutex<AuditSummary>,
    recent: Mutex<VecDeque<AuditEntry>>,
}

impl Audit {
    /// A log appending to `file` (memory only when `None`).
    pub fn new(file: Option<PathBuf>) -> Self {
        Self {
            file,
            state: Mutex::new(AuditSummary::default()),
            recent: Mutex::new(VecDeque::new()),
        }
    }

    /// Records one denial.
    pub fn record(&self, principal: &str, broker: &str, reason: &str, detail: &str) {
        let entry = AuditEntry {
            at_ms: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_millis() as u64)
                .unwrap_or(0),
            principal: principal.to_string(),
            broker: broker.to_string(),
            reason: reason.to_string(),
            detail: detail.chars().take(200).collect(),
        };
        tracing::info!(principal, broker, reason, detail, "broker denial");
        *self
            .state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .counts
            .entry(reason.to_string())
            .or_default() += 1;
        {
            let mut recent = self.recent.lock().unwrap_or_else(|p| p.into_inner());
            if recent.len() == AUDIT_RECENT {
                recent.pop_front();
            }
            recent.push_back(entry.clone());
        }
        if let Some(file) = &self.file
            && let Err(e) = append(file, &entry)
        {
            tracing::warn!(error = %e, "could not append to the audit log");
        }
    }

    /// What this engine has recorded since it started.
    pub fn summary(&self) -> AuditSummary {
        AuditSummary {
            counts: self
                .state
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .counts
                .clone(),
            recent: self
                .recent
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .cloned()
                .collect(),
        }
    }

    /// Everything recorded in `file`, by any process: counts over the whole
    /// log and the last [`AUDIT_RECENT`] entries.
    pub fn read_file(file: &std::path::Path) -> std::io::Result<AuditSummary> {
        let text = match std::fs::read_to_string(file) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
            Err(e) => return Err(e),
        };
        let mut summary = AuditSummary::default();
        let mut recent = VecDeque::new();
        for entry in text
            .lines()
            .filter_map(|l| serde_json::from_str::<AuditEntry>(l).ok())
        {
            *summary.counts.entry(entry.reason.clone()).or_default() += 1;
            if recent.len() == AUDIT_RECENT {
                recent.pop_front();
            }
            recent.push_back(entry);
        }
        summary.recent = recent.into();
        Ok(summary)
    }
}

fn append(file: &std::path::Path, entry: &AuditEntry) -> std::io::Result<()> {
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut line = serde_json::to_vec(entry).map_err(std::io::Error::other)?;
    line.push(b'\n');
    // One write of one line on an O_APPEND file: lines from concurrent
    // processes do not interleave.
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(file)?
        .write_all(&line)
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
        let from_disk = Audit::read_file(&file).unwrap();
        assert_eq!(from_disk, s);
    }
}
