//! What a run records so it can be re-run with no network, and the
//! re-run. Beside its trace a run keeps `_run.json` (its options),
//! `_model.jsonl` (every model answer, with the hash of the request it
//! answered) and `_world.jsonl` (the whole output of every tool that
//! reaches outside the sandbox: `fetch`, `web_search`, `git`, `publish`,
//! `image`, with the bytes of an image it wrote). A replay gives the loop the
//! recorded answers and outside outputs (nothing is fetched, pushed or
//! published again; a recorded image is written back), runs every other
//! tool again in a fresh workdir, and stamps each step with its recorded time, so a
//! faithful replay writes the same `_steps.jsonl`, and so the same ledger
//! root.

use crate::run::{AgentOptions, StepObserver};
use serde::Serialize;
use std::path::{Path, PathBuf};

pub use crate::workdir::{MODEL_FILE, RUN_FILE, WORLD_FILE};
pub use crate::world::{RunFile, run_file};

impl RunFile {
    /// The options that run this again.
    pub fn options(&self) -> AgentOptions {
        AgentOptions {
            system: self.system.clone(),
            task: self.task.clone(),
            model: self.model_used.clone().or_else(|| self.model.clone()),
            max_steps: self.max_steps,
            temperature: self.temperature,
            agent: self.agent.clone(),
            tenant: self.tenant.clone(),
            id: Some(self.id.clone()),
            exec: self.exec,
            token_budget: self.token_budget,
            on_step: None::<StepObserver>,
            ..AgentOptions::default()
        }
    }
}

/// What a replay did, against the run it replayed.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayReport {
    /// The replay's own record (its workdir is a fresh one).
    pub record: super::AgentRecord,
    /// Whether it wrote the same step lines and the same ledger root.
    pub same: bool,
    /// The first step line (from 1) that differs, if any.
    pub first_different_line: Option<usize>,
    /// The replay's ledger root.
    pub root: String,
    /// The original's ledger root.
    pub original_root: String,
}

/// Why a run could not be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The directory holds no recorded run.
    #[error("{path} is not a run's workdir ({RUN_FILE}: {error})")]
    NotARun {
        /// The directory.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The run began with files in its workdir, which a replay cannot have.
    #[error("the run began in a workdir that held files; a replay starts from an empty one")]
    NotEmptyAtStart,
    /// The original run's ledger does not hold.
    #[error("the original run's ledger: {0}")]
    Ledger(#[from] crate::ledger::LedgerError),
    /// The replay could not start.
    #[error(transparent)]
    Start(#[from] super::AgentError),
}

impl super::Agents {
    /// Re-runs the finished run recorded in `workdir` from its record, in
    /// a fresh workdir beside it (`<home>/runs/<tenant>/<id>-replay-…`),
    /// with no model and no network; compares its step lines and ledger
    /// root with the original's, whose ledger must hold.
    pub async fn replay(&self, workdir: &Path) -> Result<ReplayReport, ReplayError> {
        let not_a_run = |error| ReplayError::NotARun {
            path: workdir.to_path_buf(),
            error,
        };
        let recorded = run_file(workdir).map_err(not_a_run)?;
        if !recorded.started_empty {
            return Err(ReplayError::NotEmptyAtStart);
        }
        let original = workdir.canonicalize().map_err(not_a_run)?;
        let checked = crate::ledger::checked(self.engine().keyring(), &original, None)?;
        let fresh = self
            .engine()
            .home()
            .join(super::RUNS_DIR)
            .join(&recorded.tenant)
            .join(format!("{}-replay-{}", recorded.id, crate::run::fresh_id()))
            .join(super::WORKDIR);
        let mut opts = recorded.options();
        opts.workdir = Some(fresh);
        opts.replay_of = Some(original);
        let record = self.run(opts).await?;
        let was = crate::ledger::lines(&checked.steps);
        let now: Vec<String> = record.events.iter().map(crate::trace::jsonl_line).collect();
        let first_different_line = (0..was.len().max(now.len()))
            .find(|&i| was.get(i).copied() != now.get(i).map(String::as_bytes))
            .map(|i| i + 1);
        let root = record
            .ledger
            .as_ref()
            .map(|l| l.root.clone())
            .unwrap_or_default();
        let original_root = checked.sealed.root;
        Ok(ReplayReport {
            same: first_different_line.is_none() && root == original_root,
            first_different_line,
            root,
            original_root,
            record,
        })
    }
}
