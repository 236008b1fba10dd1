//! Supervised runs: started, then left to run whatever the caller does.
//! Each run is kept in `<home>/runs/<tenant>/<id>/`: `record.json` (its
//! status, rewritten when it ends), `review.json` (its review queue) and
//! `workdir/` (the trace and ledger). A run that was live when its host
//! stopped is marked `interrupted` when the runs are next opened.
//!
//! Identity: a run is found by (tenant, id); the id alone never reaches
//! another tenant's run.

use super::Agents;
use super::{RUNS_DIR, WORKDIR};
use crate::host::LoopStatus;
use crate::limits::{AGENT_MAX_LIVE_RUNS, AGENT_REVIEW_ITEM_BYTES, AGENT_REVIEW_QUEUE_ITEMS};
use crate::run::{AgentOptions, AgentRecord, StepObserver, unix_now};
use crate::trace::StepEvent;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;

/// Where a supervised run stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SessionStatus {
    /// Still running.
    Running,
    /// The model answered without calling a tool.
    Finished,
    /// The model called `done`.
    Done,
    /// The step budget ran out.
    Stopped,
    /// The model could not be asked, or the run could not start.
    Failed,
    /// Cancelled by a caller.
    Cancelled,
    /// Its host stopped while it ran.
    Interrupted,
}

impl From<LoopStatus> for SessionStatus {
    fn from(s: LoopStatus) -> Self {
        match s {
            LoopStatus::Finished => Self::Finished,
            LoopStatus::Done => Self::Done,
            LoopStatus::Stopped => Self::Stopped,
            LoopStatus::Failed => Self::Failed,
        }
    }
}

/// A supervised run as kept in `record.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionRecord {
    /// The run's id.
    pub id: String,
    /// The tenant it acts as.
    pub tenant: String,
    /// The agent's name.
    pub agent: String,
    /// The task it was given.
    pub task: String,
    /// Where it stands.
    pub status: SessionStatus,
    /// Model turns that called tools (0 while running).
    pub steps: u32,
    /// The result once it has ended.
    pub result: Option<String>,
    /// The tools the run had.
    pub tools: Vec<String>,
    /// Its working dir (trace, ledger, files).
    pub workdir: PathBuf,
    /// Unix seconds.
    pub started: u64,
    /// Unix seconds, once it has ended.
    pub ended: Option<u64>,
    /// The run as an org document, as the host rendered it when the run
    /// ended (never read back from the workdir, which its tools can write).
    #[serde(default)]
    pub events_org: Option<String>,
    /// Tokens it spent on the model, once it has ended.
    #[serde(default)]
    pub tokens: u64,
    /// Every model turn with the tokens it spent, once it has ended.
    #[serde(default)]
    pub turns: Vec<super::TurnEvent>,
}

/// What a subscriber to a run gets at once, and after.
#[derive(Debug)]
pub struct Subscription {
    /// The run as it stands.
    pub record: SessionRecord,
    /// Its steps so far; for a run ended before this host started, the
    /// steps of its trace once its ledger holds, or why not.
    pub steps: Result<Vec<StepEvent>, String>,
    /// What follows, while the run is live.
    pub live: Option<broadcast::Receiver<LiveEvent>>,
}

/// What a subscriber to a run receives.
#[derive(Debug, Clone)]
pub enum LiveEvent {
    /// A tool call, as it ends.
    Step(StepEvent),
    /// The run ended.
    Done(SessionRecord),
}

/// Why a supervised run could not be started or reached.
#[derive(Debug, thiserror::Error)]
pub enum LiveRunError {
    /// No such run for this tenant.
    #[error("no run {0}")]
    NotFound(String),
    /// Too many live runs.
    #[error("too many live runs (at most {AGENT_MAX_LIVE_RUNS})")]
    TooMany,
    /// The run could not start.
    #[error(transparent)]
    Start(#[from] super::AgentError),
    /// A run's files could not be read or written.
    #[error("run {id}: {error}")]
    Io {
        /// The run.
        id: String,
        /// Why.
        error: std::io::Error,
    },
    /// The review queue refused an item.
    #[error("review queue: {0}")]
    Review(String),
}

struct Live {
    record: SessionRecord,
    events: Vec<StepEvent>,
    tx: broadcast::Sender<LiveEvent>,
    abort: Option<tokio::task::AbortHandle>,
}

type LiveRuns = Arc<Mutex<HashMap<(String, String), Live>>>;

/// The supervised runs of an engine's home.
#[derive(Clone)]
pub struct Sessions {
    agents: Agents,
    live: LiveRuns,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn run_dir(home: &Path, tenant: &str, id: &str) -> PathBuf {
    home.join(RUNS_DIR).join(tenant).join(id)
}

/// Writes `value` as JSON to `path` whole, never through a planted link.
fn write_json(path: &Path, value: &impl Serialize) -> std::io::Result<()> {
    let bytes = serde_json::to_vec_pretty(value).map_err(std::io::Error::other)?;
    workbooks::files::write_atomic(path, &bytes)
}

fn read_record(path: &Path) -> Option<SessionRecord> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

impl Sessions {
    /// The runs of the home of `agents`' engine. Any record still
    /// `running` is from a host that stopped: it is marked `interrupted`,
    /// and says so.
    pub fn open(agents: Agents) -> Sessions {
        let runs = agents.engine().home().join(RUNS_DIR);
        for tenant in std::fs::read_dir(&runs).into_iter().flatten().flatten() {
            for run in std::fs::read_dir(tenant.path())
                .into_iter()
                .flatten()
                .flatten()
            {
                let path = run.path().join("record.json");
                if let Some(mut r) = read_record(&path)
                    && r.status == SessionStatus::Running
                {
                    r.status = SessionStatus::Interrupted;
                    r.result = Some("interrupted: the host stopped while the run was live".into());
                    r.ended = Some(unix_now());
                    let _ = write_json(&path, &r);
                }
            }
        }
        Sessions {
            agents,
            live: Arc::default(),
        }
    }

    /// The engine the runs run on.
    pub(crate) fn engine(&self) -> &workbooks::Engine {
        self.agents.engine()
    }

    /// Starts `opts` as a supervised run (on the current tokio runtime) and
    /// returns its record, `running`.
    pub fn start(&self, mut opts: AgentOptions) -> Result<SessionRecord, LiveRunError> {
        workbooks::storage::validate_name("tenant", &opts.tenant)
            .map_err(super::AgentError::from)?;
        let id = opts.id.clone().unwrap_or_else(crate::run::fresh_id);
        workbooks::storage::validate_name("run", &id).map_err(super::AgentError::from)?;
        // A grant that does not serve the run refuses it here, not after
        // it was announced as running.
        if let Some(g) = &opts.grant {
            crate::grant::RunGrant::live(self.agents.engine(), g, &opts.tenant, &opts.agent)
                .map_err(super::AgentError::from)?;
        }
        let dir = run_dir(self.agents.engine().home(), &opts.tenant, &id);
        let io = |error| LiveRunError::Io {
            id: id.clone(),
            error,
        };
        let mut live = lock(&self.live);
        let running = live
            .values()
            .filter(|l| l.record.status == SessionStatus::Running)
            .count();
        if running >= AGENT_MAX_LIVE_RUNS {
            return Err(LiveRunError::TooMany);
        }
        std::fs::create_dir_all(dir.join(WORKDIR)).map_err(io)?;
        let record = SessionRecord {
            id: id.clone(),
            tenant: opts.tenant.clone(),
            agent: opts.agent.clone(),
            task: opts.task.clone(),
            status: SessionStatus::Running,
            steps: 0,
            result: None,
            tools: crate::tools::tool_names(opts.exec),
            workdir: dir.join(WORKDIR),
            started: unix_now(),
            ended: None,
            events_org: None,
            tokens: 0,
            turns: Vec::new(),
        };
        write_json(&dir.join("record.json"), &record).map_err(io)?;
        let key = (opts.tenant.clone(), id.clone());
        let (tx, _) = broadcast::channel(256);
        let observer = {
            let (live, key, tx) = (self.live.clone(), key.clone(), tx.clone());
            // Kept and sent under one lock: a subscriber, which snapshots
            // and subscribes under it too, gets each step exactly once.
            StepObserver(Arc::new(move |e: &StepEvent| {
                let mut live = lock(&live);
                if let Some(l) = live.get_mut(&key) {
                    l.events.push(e.clone());
                }
                let _ = tx.send(LiveEvent::Step(e.clone()));
            }))
        };
        opts.id = Some(id);
        opts.workdir = None;
        opts.on_step = Some(observer);
        let agents = self.agents.clone();
        let sessions = self.clone();
        let task_key = key.clone();
        let handle = tokio::spawn(async move {
            let got = agents.run(opts).await;
            sessions.finish(&task_key, got);
        });
        live.insert(
            key,
            Live {
                record: record.clone(),
                events: Vec::new(),
                tx,
                abort: Some(handle.abort_handle()),
            },
        );
        Ok(record)
    }

    /// Ends the live run `key` with what it returned.
    fn finish(&self, key: &(String, String), got: Result<AgentRecord, super::AgentError>) {
        let mut live = lock(&self.live);
        let Some(l) = live.get_mut(key) else { return };
        if l.record.status != SessionStatus::Running {
            return;
        }
        match got {
            Ok(r) => {
                l.record.status = r.status.into();
                l.record.steps = r.steps;
                l.record.result = Some(r.result);
                l.record.events_org = Some(r.events_org);
                l.record.tokens = r.tokens;
                l.record.turns = r.turns;
            }
            Err(e) => {
                l.record.status = SessionStatus::Failed;
                l.record.result = Some(format!("error: {e}"));
            }
        }
        self.close(l);
    }

    /// Stamps the end of `l`, writes its record and tells subscribers.
    fn close(&self, l: &mut Live) {
        l.record.ended = Some(unix_now());
        l.abort = None;
        let dir = run_dir(self.agents.engine().home(), &l.record.tenant, &l.record.id);
        let _ = write_json(&dir.join("record.json"), &l.record);
        let _ = l.tx.send(LiveEvent::Done(l.record.clone()));
    }

    /// The run `id` of `tenant`.
    pub fn get(&self, tenant: &str, id: &str) -> Option<SessionRecord> {
        if let Some(l) = lock(&self.live).get(&(tenant.to_string(), id.to_string())) {
            return Some(l.record.clone());
        }
        workbooks::storage::validate_name("run", id).ok()?;
        workbooks::storage::validate_name("tenant", tenant).ok()?;
        read_record(&run_dir(self.agents.engine().home(), tenant, id).join("record.json"))
    }

    /// Every run of `tenant`, newest first.
    pub fn list(&self, tenant: &str) -> Vec<SessionRecord> {
        if workbooks::storage::validate_name("tenant", tenant).is_err() {
            return Vec::new();
        }
        let dir = self.agents.engine().home().join(RUNS_DIR).join(tenant);
        let mut all: Vec<SessionRecord> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| e.file_name().to_str().and_then(|id| self.get(tenant, id)))
            .collect();
        all.sort_by(|a, b| b.started.cmp(&a.started).then(b.id.cmp(&a.id)));
        all
    }

    /// Cancels the live run `id` of `tenant` (its tools are killed with
    /// it); an ended run is returned as it is.
    pub fn cancel(&self, tenant: &str, id: &str) -> Result<SessionRecord, LiveRunError> {
        let mut live = lock(&self.live);
        let Some(l) = live.get_mut(&(tenant.to_string(), id.to_string())) else {
            drop(live);
            return self
                .get(tenant, id)
                .ok_or_else(|| LiveRunError::NotFound(id.to_string()));
        };
        if l.record.status == SessionStatus::Running {
            if let Some(abort) = l.abort.take() {
                abort.abort();
            }
            l.record.status = SessionStatus::Cancelled;
            l.record.result = Some("cancelled".into());
            self.close(l);
        }
        Ok(l.record.clone())
    }

    /// The steps so far and, while the run is live, what follows. A run
    /// this host did not see end is read from its trace, and only when its
    /// signed ledger holds: its tools could write to the workdir.
    pub fn subscribe(&self, tenant: &str, id: &str) -> Option<Subscription> {
        if let Some(l) = lock(&self.live).get(&(tenant.to_string(), id.to_string())) {
            let live = (l.record.status == SessionStatus::Running).then(|| l.tx.subscribe());
            return Some(Subscription {
                record: l.record.clone(),
                steps: Ok(l.events.clone()),
                live,
            });
        }
        let record = self.get(tenant, id)?;
        let steps = crate::ledger::checked(self.agents.engine().keyring(), &record.workdir, None)
            .map(|c| {
                crate::ledger::lines(&c.steps)
                    .into_iter()
                    .filter_map(|l| serde_json::from_slice(l).ok())
                    .collect()
            })
            .map_err(|e| format!("the run's steps are not shown: {e}"));
        Some(Subscription {
            record,
            steps,
            live: None,
        })
    }

    fn review_path(&self, tenant: &str, id: &str) -> Result<PathBuf, LiveRunError> {
        self.get(tenant, id)
            .ok_or_else(|| LiveRunError::NotFound(id.to_string()))?;
        Ok(run_dir(self.agents.engine().home(), tenant, id).join("review.json"))
    }

    /// Puts `item` at the back of the run's review queue.
    pub fn review_put(&self, tenant: &str, id: &str, item: Value) -> Result<usize, LiveRunError> {
        let path = self.review_path(tenant, id)?;
        let size = item.to_string().len();
        if size > AGENT_REVIEW_ITEM_BYTES {
            return Err(LiveRunError::Review(format!(
                "an item is {size} bytes, over {AGENT_REVIEW_ITEM_BYTES}"
            )));
        }
        let _guard = lock(&self.live);
        let mut queue = read_queue(&path);
        if queue.len() >= AGENT_REVIEW_QUEUE_ITEMS {
            return Err(LiveRunError::Review(format!(
                "full ({AGENT_REVIEW_QUEUE_ITEMS} items)"
            )));
        }
        queue.push(item);
        write_json(&path, &queue).map_err(|error| LiveRunError::Io {
            id: id.to_string(),
            error,
        })?;
        Ok(queue.len())
    }

    /// Takes the front of the run's review queue, if any.
    pub fn review_take(&self, tenant: &str, id: &str) -> Result<Option<Value>, LiveRunError> {
        let path = self.review_path(tenant, id)?;
        let _guard = lock(&self.live);
        let mut queue = read_queue(&path);
        if queue.is_empty() {
            return Ok(None);
        }
        let item = queue.remove(0);
        write_json(&path, &queue).map_err(|error| LiveRunError::Io {
            id: id.to_string(),
            error,
        })?;
        Ok(Some(item))
    }
}

fn read_queue(path: &Path) -> Vec<Value> {
    std::fs::read(path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}
