//! A row's proof: a line run through the engine's own shell under the
//! row's profile, with its files written into a fresh directory preopened
//! at `/work`, and the output it must give. A row is only as good as its
//! proof: `wbx catalog prove` runs them, and CI runs every one.

use super::{Catalog, Row};
use crate::limits::CATALOG_PROOF_TIMEOUT;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use workbooks::{LineOptions, Preopen, Stdin};

/// What a row's program must do.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Proof {
    /// The line (the row's name is its first word).
    pub line: String,
    /// Its stdin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdin: Option<String>,
    /// Files written into the directory preopened at `/work` first
    /// (name → text; a name is one path component).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
    /// The exact stdout it must print,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout: Option<String>,
    /// or text its stdout must hold (when the rest carries a build date),
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contains: Option<String>,
    /// or the sha256 (hex) its stdout must hash to (binary output).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stdout_sha256: Option<String>,
    /// Text its stderr must hold (a tool that reports there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr_contains: Option<String>,
    /// The exit code it must end with (0 unless said: a solver answers
    /// `sat` with 10).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub exit: i32,
    /// Fuel for the line's stage, in place of the default (a compiler's
    /// proof may need more).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuel: Option<u64>,
}

fn is_zero(n: &i32) -> bool {
    *n == 0
}

/// How a proof went.
#[derive(Debug, Clone, Serialize)]
pub struct Proved {
    /// The row.
    pub name: String,
    /// Whether the output was the expected one (and the exit 0).
    pub ok: bool,
    /// The line's exit code (absent when it did not run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit: Option<i32>,
    /// Wall-clock time of the line, compiling included.
    pub ms: u64,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
}

impl Catalog {
    /// Runs `row`'s proof.
    pub async fn prove(&self, row: &Row) -> Proved {
        let started = Instant::now();
        let outcome = self.run_proof(row).await;
        let ms = started.elapsed().as_millis() as u64;
        let (exit, why) = match outcome {
            Ok((exit, why)) => (Some(exit), why),
            Err(why) => (None, Some(why)),
        };
        Proved {
            name: row.name.clone(),
            ok: why.is_none(),
            exit,
            ms,
            why,
        }
    }

    /// The exit code, and why the output is not the expected one.
    async fn run_proof(&self, row: &Row) -> Result<(i32, Option<String>), String> {
        let proof = row
            .proof
            .as_ref()
            .ok_or_else(|| format!("catalog {}: the row has no proof", row.name))?;
        if self
            .engine
            .registry()
            .get(&row.name)
            .ok()
            .flatten()
            .is_none()
        {
            return Err(format!(
                "catalog {}: not installed (wbx catalog install {})",
                row.name, row.name
            ));
        }
        let work = tempfile::tempdir().map_err(|e| e.to_string())?;
        for (name, text) in &proof.files {
            if !super::archive::is_file_name(name) {
                return Err(format!("proof file `{name}` is not one path component"));
            }
            std::fs::write(work.path().join(name), text).map_err(|e| e.to_string())?;
        }
        let options = LineOptions {
            profile: row.profile.clone(),
            dirs: vec![Preopen {
                host: work.path().to_path_buf(),
                guest: "/work".into(),
                read_only: false,
            }],
            stdin: proof
                .stdin
                .clone()
                .map(|s| Stdin::Bytes(s.into()))
                .unwrap_or_default(),
            stage_timeout: Some(CATALOG_PROOF_TIMEOUT),
            stage_fuel: proof.fuel,
            stage_memory: row.memory_mib.map(|m| m << 20),
            ..LineOptions::default()
        };
        let out = tokio::time::timeout(
            CATALOG_PROOF_TIMEOUT + Duration::from_secs(5),
            self.engine.commands().run_line(&proof.line, options),
        )
        .await
        .map_err(|_| format!("the line ran past {CATALOG_PROOF_TIMEOUT:?}"))?
        .map_err(|e| e.to_string())?;
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let wrong = if out.exit != proof.exit {
            Some(format!("exit {}, expected {}", out.exit, proof.exit))
        } else if let Some(want) = &proof.stdout
            && *want != stdout
        {
            Some(format!("stdout {stdout:?}, expected {want:?}"))
        } else if let Some(want) = &proof.contains
            && !stdout.contains(want.as_str())
        {
            Some(format!("stdout {stdout:?} does not hold {want:?}"))
        } else if let Some(want) = &proof.stdout_sha256
            && let Err(got) = super::matches_pin(&out.stdout, want)
        {
            Some(format!(
                "stdout ({} bytes) hashes to {got}, expected {want}",
                out.stdout.len()
            ))
        } else if let Some(want) = &proof.stderr_contains
            && !stderr.contains(want.as_str())
        {
            Some(format!("stderr does not hold {want:?}"))
        } else {
            None
        };
        Ok((
            out.exit,
            wrong.map(|w| format!("{w}; stderr: {}", super::stderr_tail(&out.stderr))),
        ))
    }
}
