//! What a run records so it can be replayed (see [`replay`](crate::replay)):
//! its options (`_run.json`), the model's answers (`_model.jsonl`, a
//! [`Tape`]) and the whole output of every tool that reaches outside the
//! sandbox (`_world.jsonl`), and reading them back.

use crate::tools::Ran;
use crate::workdir::{MODEL_FILE, RUN_FILE, WORLD_FILE};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use workbooks::llm::tape::{Take, Tape};

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
    /// The stored grant the run acted under, and the caps it gave (a
    /// replay judges each call by what its step line saw of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant: Option<String>,
    /// The grant's caps as cap words (`None`: it named none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_caps: Option<String>,
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
    /// Each step's recorded view of the run's grant.
    pub(crate) grants: Vec<Option<crate::grant::GrantSeen>>,
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
        let _ = workbooks::files::append_line(path, &line);
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
    let grants = steps.into_iter().map(|e| e.grant).collect();
    (
        Tape::Replay(takes.into()),
        Playback {
            world: world.into(),
            clock,
            grants,
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
    workbooks::files::write_atomic(&workdir.join(MODEL_FILE), text.as_bytes())
}

/// The recorded options of the run in `workdir`.
pub fn run_file(workdir: &Path) -> std::io::Result<RunFile> {
    let bytes = std::fs::read(workdir.join(RUN_FILE))?;
    serde_json::from_slice(&bytes).map_err(std::io::Error::other)
}
