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

use super::run::{AgentOptions, StepObserver};
use super::tools::Ran;
use crate::cap::llm::tape::{Take, Tape};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

/// The options of a run as `_run.json` keeps them.
pub const RUN_FILE: &str = "_run.json";
/// The model's answers.
pub const MODEL_FILE: &str = "_model.jsonl";
/// The outputs of the tools that reach outside.
pub const WORLD_FILE: &str = "_world.jsonl";

/// Tools whose output depends on the world outside the sandbox.
pub(crate) const WORLD_TOOLS: [&str; 5] = ["fetch", "web_search", "git", "publish", "image"];

/// A run's options, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunFile {
    /// The run's id.
    pub id: String,
    /// Its tenant.
    pub tenant: String,
    /// The agent's name.
    pub agent: String,
    /// The system prompt.
    pub system: String,
    /// The task.
    pub task: String,
    /// The model asked for.
    pub model: Option<String>,
    /// The model the requests named (the endpoint's default when the run
    /// asked for none), so a replay sends the same requests.
    pub model_used: Option<String>,
    /// The step budget.
    pub max_steps: u32,
    /// The temperature.
    pub temperature: Option<f32>,
    /// Whether the workdir was empty when the run began (a replay can only
    /// start from what the run started from).
    pub started_empty: bool,
    /// Whether the host granted the run exec.
    #[serde(default)]
    pub exec: bool,
    /// The run's token budget (a replay spends the same tokens, and stops
    /// where the run stopped).
    #[serde(default)]
    pub token_budget: Option<u64>,
}

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

/// One call of a tool that reaches outside, as recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct WorldCall {
    pub(crate) tool: String,
    pub(crate) args: Value,
    pub(crate) output: String,
    pub(crate) exit_code: i32,
    pub(crate) error: Option<String>,
    /// A file the call wrote: its workdir path and its bytes in base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) wrote: Option<(String, String)>,
}

/// What a run reads back from, when it replays.
pub(crate) struct Playback {
    pub(crate) world: VecDeque<WorldCall>,
    /// Each step's recorded (dur_ms, ts).
    pub(crate) clock: VecDeque<(u64, u64)>,
}

/// Where a run's outside calls go: recorded, or played back.
pub(crate) enum World {
    Record(PathBuf),
    Replay(Playback),
}

impl World {
    /// The recorded output of an outside call in replay; `None` when
    /// recording (the tool runs).
    pub(crate) fn replayed(&mut self, tool: &str, args: &Value) -> Option<Ran> {
        let World::Replay(p) = self else { return None };
        Some(match p.world.pop_front() {
            Some(w) if w.tool == tool && w.args == *args => Ran {
                output: w.output,
                exit_code: w.exit_code,
                error: w.error,
                finished: None,
                wrote: w
                    .wrote
                    .and_then(|(path, b64)| Some(Box::new((path, BASE64.decode(b64).ok()?)))),
            },
            _ => Ran::failed(format!(
                "replay diverged: {tool} was not the next outside call recorded"
            )),
        })
    }

    /// Records an outside call's whole output.
    pub(crate) fn record(&mut self, tool: &str, args: &Value, ran: &Ran) {
        let World::Record(path) = self else { return };
        let call = WorldCall {
            tool: tool.to_string(),
            args: args.clone(),
            output: ran.output.clone(),
            exit_code: ran.exit_code,
            error: ran.error.clone(),
            wrote: ran
                .wrote
                .as_ref()
                .map(|w| (w.0.clone(), BASE64.encode(&w.1))),
        };
        let line = serde_json::to_string(&call).unwrap_or_default();
        let _ = crate::files::append_line(path, &line);
    }

    /// The recorded time of the next step, in replay.
    pub(crate) fn clock(&mut self) -> Option<(u64, u64)> {
        match self {
            World::Replay(p) => p.clock.pop_front(),
            World::Record(_) => None,
        }
    }
}

fn jsonl<T: for<'de> Deserialize<'de>>(path: &Path) -> Vec<T> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The tape and playback of the run recorded in `workdir`.
pub(crate) fn load(workdir: &Path) -> (Tape, Playback) {
    let takes: Vec<Take> = jsonl(&workdir.join(MODEL_FILE));
    let world: Vec<WorldCall> = jsonl(&workdir.join(WORLD_FILE));
    let steps: Vec<super::StepEvent> = jsonl(&workdir.join(crate::ledger::STEPS));
    let clock = steps.iter().map(|e| (e.dur_ms, e.ts)).collect();
    (
        Tape::Replay(takes.into()),
        Playback {
            world: world.into(),
            clock,
        },
    )
}

/// Writes the model answers of a recorded run.
pub(crate) fn write_takes(workdir: &Path, takes: &[Take]) -> std::io::Result<()> {
    let mut text = String::new();
    for t in takes {
        text.push_str(&serde_json::to_string(t).map_err(std::io::Error::other)?);
        text.push('\n');
    }
    crate::files::write_atomic(&workdir.join(MODEL_FILE), text.as_bytes())
}

/// The recorded options of the run in `workdir`.
pub fn run_file(workdir: &Path) -> std::io::Result<RunFile> {
    let bytes = std::fs::read(workdir.join(RUN_FILE))?;
    serde_json::from_slice(&bytes).map_err(std::io::Error::other)
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
            .join(format!("{}-replay-{}", recorded.id, super::run::fresh_id()))
            .join(super::WORKDIR);
        let mut opts = recorded.options();
        opts.workdir = Some(fresh);
        opts.replay_of = Some(original);
        let record = self.run(opts).await?;
        let was = crate::ledger::lines(&checked.steps);
        let now: Vec<String> = record.events.iter().map(super::trace::jsonl_line).collect();
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
