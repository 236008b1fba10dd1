//! One agent run: dock the loop, give it its tools, call it, write the
//! trace.

use super::Agents;
use crate::grant::{RunGrant, RunGrantError};
use crate::host::{
    LoopCall, LoopError, LoopOptions, LoopRun, LoopStatus, Outcome, ToolCall, ToolDef,
};
use crate::limits::{
    AGENT_MAX_CALLS_PER_TURN, AGENT_MAX_STEPS, AGENT_TOKEN_BUDGET, AGENT_TOOL_OUTPUT_CHARS,
    AGENT_TOOL_TIMEOUT,
};
use crate::tools::{Ran, Toolbox};
use crate::trace::{self, StepEvent, StepLog, TurnEvent};
use crate::workdir::{MODEL_FILE, RUN_FILE, WORLD_FILE};
use crate::world::{self, RunFile, WORLD_TOOLS, World};
use serde::Serialize;
use serde_json::Value;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use workbooks::files::write_atomic;
use workbooks::llm::tape::{self, Tape};
use workbooks::storage::{StorageError, validate_name};

/// What to run.
#[derive(Debug, Clone)]
pub struct AgentOptions {
    /// The system prompt ([`DEFAULT_SYSTEM`] by default).
    pub system: String,
    /// The task.
    pub task: String,
    /// The model; the endpoint's default when `None`.
    pub model: Option<String>,
    /// Model turns at most (12 by default).
    pub max_steps: u32,
    /// The sampling temperature (0.4 by default).
    pub temperature: Option<f32>,
    /// The agent's name, stamped on every step event.
    pub agent: String,
    /// The tenant the run and its tools act as.
    pub tenant: String,
    /// The run's id; a fresh one when `None`.
    pub id: Option<String>,
    /// The working dir; `<home>/runs/<tenant>/<id>/workdir` when `None`.
    pub workdir: Option<PathBuf>,
    /// The bound of one tool call (150 s by default).
    pub tool_timeout: Duration,
    /// Called with each step event as the host writes it (a live view).
    pub on_step: Option<StepObserver>,
    /// Replay the run recorded in this workdir: its model answers and
    /// outside outputs, with no network (see [`replay`](crate::replay)).
    pub replay_of: Option<PathBuf>,
    /// The exec grant: the run gets `git`, `publish` and `image`, fixed
    /// operations on places the operator configured
    /// ([`AgentServices`](super::AgentServices)). Only the host sets it;
    /// off by default.
    pub exec: bool,
    /// The toolkits the agent may use (its definition's `:TOOLKITS:`): the
    /// system prompt gets one line for each that exists and up to 8 of its
    /// skill names; unknown names are dropped.
    pub toolkits: Vec<String>,
    /// Tokens the run may spend on the model in all, summed from each
    /// reply's usage ([`AGENT_TOKEN_BUDGET`] by default; `None`: no
    /// limit of its own). Past it the run ends `stopped: token budget …`.
    pub token_budget: Option<u64>,
    /// A window its tenant's runs share (the agent API's), drawn on too.
    pub tenant_meter: Option<std::sync::Arc<workbooks::llm::TokenMeter>>,
    /// The stored grant the run acts under (see [`crate::grant`]): every
    /// tool call and model request is judged by it as it is then, and
    /// what each call saw of it is in the ledger. `None`: each tool's own
    /// profile alone.
    pub grant: Option<String>,
}

/// A callback for step events, as they happen.
#[derive(Clone)]
pub struct StepObserver(pub std::sync::Arc<dyn Fn(&StepEvent) + Send + Sync>);

impl std::fmt::Debug for StepObserver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StepObserver")
    }
}

/// The system prompt of a run that names none.
pub const DEFAULT_SYSTEM: &str =
    "You are a careful agent. Use your tools; call done with the result when finished.";

impl Default for AgentOptions {
    fn default() -> Self {
        Self {
            system: DEFAULT_SYSTEM.into(),
            task: String::new(),
            model: None,
            max_steps: AGENT_MAX_STEPS,
            temperature: Some(0.4),
            agent: "agent".into(),
            tenant: "default".into(),
            id: None,
            workdir: None,
            tool_timeout: AGENT_TOOL_TIMEOUT,
            on_step: None,
            replay_of: None,
            exec: false,
            toolkits: Vec::new(),
            token_budget: Some(AGENT_TOKEN_BUDGET),
            tenant_meter: None,
            grant: None,
        }
    }
}

/// What a run did.
#[derive(Debug, Clone, Serialize)]
pub struct AgentRecord {
    /// The run's id.
    pub id: String,
    /// How it ended.
    pub status: LoopStatus,
    /// Model turns that called tools.
    pub steps: u32,
    /// The result: the model's text, `done`'s argument, or the
    /// `stopped: …` / `error: …` line.
    pub result: String,
    /// The working dir (holding `_steps.jsonl` and `events.org`).
    pub workdir: PathBuf,
    /// The tools the run had.
    pub tools: Vec<String>,
    /// Every tool call, in order.
    pub events: Vec<StepEvent>,
    /// Every model turn, in order, with the tokens each spent.
    pub turns: Vec<TurnEvent>,
    /// Tokens the run spent on the model in all.
    pub tokens: u64,
    /// The run as an org document (what `events.org` holds).
    pub events_org: String,
    /// The signed ledger over `_steps.jsonl`, when it could be written.
    pub ledger: Option<crate::ledger::Sealed>,
    /// The first trace write that failed, if any (the run went on).
    pub trace_error: Option<String>,
}

/// Why a run could not start.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// The tenant or run id is not a valid name.
    #[error(transparent)]
    Name(#[from] StorageError),
    /// The loop could not start: its grant, its dock or its store.
    #[error(transparent)]
    Loop(#[from] LoopError),
    /// The stored grant the run names does not serve it.
    #[error(transparent)]
    Grant(#[from] RunGrantError),
    /// The working dir could not be made.
    #[error("agent workdir {path}: {error}")]
    Workdir {
        /// The directory.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
}

/// The run a store serves: its tools and the trace so far.
pub(crate) struct RunCtx {
    pub(crate) toolbox: Toolbox,
    pub(crate) agent: String,
    pub(crate) events: Vec<StepEvent>,
    pub(crate) turns: Vec<TurnEvent>,
    pub(crate) log: StepLog,
    pub(crate) on_step: Option<StepObserver>,
    /// Where outside calls are recorded, or replayed from.
    pub(crate) world: World,
    /// What the run spends on the model.
    pub(crate) budget: std::sync::Arc<workbooks::llm::TokenBudget>,
    /// Calls made in the current step: (step, count).
    calls: (u32, usize),
    /// The stored grant the run acts under.
    grant: Option<RunGrant>,
}

pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// A fresh run id: the time and 48 random bits.
pub(crate) fn fresh_id() -> String {
    let mut bytes = [0u8; 6];
    let _ = getrandom::fill(&mut bytes);
    format!("{}-{}", unix_now(), hex::encode(bytes))
}

/// How a bound is written to the model: whole seconds when it is one.
fn written(d: Duration) -> String {
    if d.subsec_nanos() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

impl RunCtx {
    /// Runs one call of `step` within its bound and records it.
    pub(crate) async fn call(&mut self, step: u32, call: ToolCall) -> Ran {
        if self.calls.0 != step {
            self.calls = (step, 0);
        }
        self.calls.1 += 1;
        let parsed: Option<Value> = serde_json::from_str(&call.arguments).ok();
        let args = parsed
            .clone()
            .unwrap_or_else(|| Value::String(call.arguments.clone()));
        let start = Instant::now();
        let (seen, granted) = match self.grant.as_mut() {
            Some(g) => {
                let (seen, verdict) = g.judge(&call.name);
                (seen, Some(verdict))
            }
            None => (None, None),
        };
        let outside = WORLD_TOOLS.contains(&call.name.as_str());
        let replayed = if outside {
            self.world.replayed(&call.name, &args)
        } else {
            None
        };
        let ran = if let Some(ran) = replayed {
            if let Some(wrote) = &ran.wrote
                && let (path, bytes) = &**wrote
                && let Err(e) = crate::outside::write_image(&self.toolbox.workdir, path, bytes)
            {
                Ran::failed(format!("replay could not put back {path}: {e}"))
            } else {
                ran
            }
        } else if self.calls.1 > AGENT_MAX_CALLS_PER_TURN {
            Ran::failed(format!(
                "tool error: more than {AGENT_MAX_CALLS_PER_TURN} tool calls in one turn; {} was not run",
                call.name
            ))
        } else if let Some(Err(why)) = &granted {
            Ran::failed(format!("tool error: {} not run: {why}", call.name))
        } else {
            self.toolbox.scope = granted.and_then(Result::ok);
            let bound = self.toolbox.tool_timeout;
            let work = self
                .toolbox
                .run(&call.name, parsed.as_ref().unwrap_or(&Value::Null));
            match tokio::time::timeout(bound, work).await {
                Ok(ran) => ran,
                Err(_) => Ran::failed(format!(
                    "tool error: {} timed out after {} (killed)",
                    call.name,
                    written(bound)
                )),
            }
        };
        if outside {
            self.world.record(&call.name, &args, &ran);
        }
        let (dur_ms, ts) = self
            .world
            .clock()
            .unwrap_or_else(|| (start.elapsed().as_millis() as u64, unix_now()));
        let event = StepEvent {
            step,
            agent: self.agent.clone(),
            tool: call.name,
            args,
            output: trace::clip(&ran.output, AGENT_TOOL_OUTPUT_CHARS as usize),
            exit_code: ran.exit_code,
            error: ran.error.clone(),
            dur_ms,
            ts,
            // The turn that asked for this call was reported before it.
            tokens: self
                .turns
                .last()
                .filter(|t| t.step == step)
                .and_then(|t| t.tokens),
            grant: seen,
        };
        self.log.append(&event);
        if let Some(observer) = &self.on_step {
            (observer.0)(&event);
        }
        self.events.push(event);
        ran
    }
}

impl Agents {
    /// Runs the agent loop for `opts`. Every way a run can end is a
    /// record (a failed model turn is `status: failed` with an `error: …`
    /// result); only a run that cannot start is an error.
    pub async fn run(&self, opts: AgentOptions) -> Result<AgentRecord, AgentError> {
        validate_name("tenant", &opts.tenant)?;
        let id = opts.id.clone().unwrap_or_else(fresh_id);
        validate_name("run", &id)?;
        let workdir = opts.workdir.clone().unwrap_or_else(|| {
            self.engine()
                .home()
                .join(super::RUNS_DIR)
                .join(&opts.tenant)
                .join(&id)
                .join(super::WORKDIR)
        });
        let made = std::fs::create_dir_all(&workdir).and_then(|()| workdir.canonicalize());
        let started_empty = std::fs::read_dir(&workdir).is_ok_and(|mut d| d.next().is_none());
        let workdir = made.map_err(|error| AgentError::Workdir {
            path: workdir.clone(),
            error,
        })?;
        let (tape, world, grant) = match &opts.replay_of {
            Some(recorded) => {
                let (tape, mut playback) = world::load(recorded);
                let grant = match world::run_file(recorded) {
                    Ok(RunFile {
                        grant: Some(id),
                        grant_caps,
                        ..
                    }) => {
                        let caps = grant_caps
                            .as_deref()
                            .map(workbooks::CapSet::parse)
                            .transpose()
                            .map_err(|error| RunGrantError::Caps {
                                id: id.clone(),
                                error,
                            })?;
                        let seen = std::mem::take(&mut playback.grants);
                        Some(RunGrant::replayed(&id, caps, seen))
                    }
                    _ => None,
                };
                (tape, World::Replay(playback), grant)
            }
            None => {
                let grant = opts
                    .grant
                    .as_deref()
                    .map(|g| RunGrant::live(self.engine(), g, &opts.tenant, &opts.agent))
                    .transpose()?;
                (
                    Tape::Record(Vec::new()),
                    World::Record(workdir.join(WORLD_FILE)),
                    grant,
                )
            }
        };
        let tape = std::sync::Arc::new(std::sync::Mutex::new(tape));
        let mut budget = workbooks::llm::TokenBudget::new(opts.token_budget);
        if let Some(meter) = &opts.tenant_meter {
            budget = budget.drawing_on(meter.clone(), &opts.tenant);
        }
        let budget = std::sync::Arc::new(budget);
        // What the model is told: the prompt, then its toolkits. A replay
        // is given the recorded prompt whole, so it names none.
        let injected = self.toolkits().injection_text(&opts.toolkits);
        let system = if injected.is_empty() {
            opts.system.clone()
        } else {
            format!("{}\n\n{injected}", opts.system)
        };
        let run_file = RunFile {
            id: id.clone(),
            tenant: opts.tenant.clone(),
            agent: opts.agent.clone(),
            system: system.clone(),
            task: opts.task.clone(),
            model: opts.model.clone(),
            model_used: opts
                .model
                .clone()
                .or_else(|| self.engine().llm_default_model()),
            max_steps: opts.max_steps,
            temperature: opts.temperature,
            started_empty,
            exec: opts.exec,
            token_budget: opts.token_budget,
            grant: grant.as_ref().map(|g| g.id().to_string()),
            grant_caps: grant
                .as_ref()
                .and_then(RunGrant::caps)
                .map(|c| c.words().join(",")),
        };
        let mut trace_error = None;
        let written = serde_json::to_vec_pretty(&run_file)
            .map_err(std::io::Error::other)
            .and_then(|b| write_atomic(&workdir.join(RUN_FILE), &b));
        if let Err(e) = written {
            trace_error = Some(format!("{}: {e}", RUN_FILE));
        }
        let loop_scope = grant.as_ref().and_then(RunGrant::loop_scope);
        let ctx = RunCtx {
            toolbox: Toolbox {
                agents: self.clone(),
                tenant: opts.tenant.clone(),
                run_id: id.clone(),
                workdir: workdir.clone(),
                tool_timeout: opts.tool_timeout,
                exec: opts.exec,
                images: crate::outside::ImageBudget::default(),
                scope: None,
            },
            agent: opts.agent.clone(),
            events: Vec::new(),
            turns: Vec::new(),
            log: StepLog::new(&workdir),
            on_step: opts.on_step.clone(),
            world,
            budget: budget.clone(),
            calls: (0, 0),
            grant,
        };
        let call = LoopCall {
            id: id.clone(),
            tenant: opts.tenant.clone(),
            system,
            task: opts.task.clone(),
            options: LoopOptions {
                model: opts.model.clone(),
                max_steps: opts.max_steps,
                temperature: opts.temperature,
                max_tool_output: AGENT_TOOL_OUTPUT_CHARS,
            },
            tape: tape.clone(),
            budget: budget.clone(),
            scope: loop_scope,
        };
        let (answer, run) = crate::host::run_loop(self.engine(), call, ctx).await?;
        let (status, steps, result) = match answer {
            Ok(r) => match (r.status, budget.stop_line()) {
                // The model was refused its next turn: the budget ended it.
                (LoopStatus::Failed, Some(line)) => (LoopStatus::Stopped, r.steps, line),
                (status, _) => (status, r.steps, r.result),
            },
            Err(why) => {
                let steps = run.as_ref().map_or(0, |r| r.turns.len() as u32);
                (LoopStatus::Failed, steps, format!("error: agent: {why}"))
            }
        };
        let (events, turns, lines) = match run {
            Some(r) => {
                if let Some(e) = r.log.failure {
                    trace_error.get_or_insert(e);
                }
                (r.events, r.turns, r.log.lines)
            }
            None => (Vec::new(), Vec::new(), Vec::new()),
        };
        if let Tape::Record(takes) = &*tape::lock(&tape)
            && let Err(e) = world::write_takes(&workdir, takes)
        {
            trace_error.get_or_insert(format!("{}: {e}", MODEL_FILE));
        }
        let events_org = trace::events_org(&opts.agent, &events, &result);
        if let Err(e) = write_atomic(&workdir.join(trace::EVENTS_ORG), events_org.as_bytes()) {
            trace_error.get_or_insert(format!("{}: {e}", trace::EVENTS_ORG));
        }
        let ledger =
            crate::ledger::seal(self.engine().keyring(), &opts.tenant, &id, &workdir, &lines);
        let ledger = ledger
            .map_err(|e| {
                trace_error.get_or_insert(e.to_string());
            })
            .ok();
        Ok(AgentRecord {
            id,
            status,
            steps,
            result,
            workdir,
            tools: crate::tools::tool_names(opts.exec),
            events,
            turns,
            tokens: budget.spent(),
            events_org,
            ledger,
            trace_error,
        })
    }
}

impl LoopRun for RunCtx {
    fn definitions(&self) -> Vec<ToolDef> {
        crate::tools::definitions(self.toolbox.exec)
            .into_iter()
            .map(|t| ToolDef {
                name: t.name.to_string(),
                description: t.description.to_string(),
                parameters: t.parameters.to_string(),
            })
            .collect()
    }

    fn call(
        &mut self,
        step: u32,
        call: ToolCall,
    ) -> Pin<Box<dyn Future<Output = Outcome> + Send + '_>> {
        Box::pin(async move {
            let ran = RunCtx::call(self, step, call).await;
            match ran.finished {
                Some(result) => Outcome::Finished(result),
                None => Outcome::Output(ran.output),
            }
        })
    }

    fn turn(&mut self, step: u32, finish_reason: String, tool_calls: u32) {
        let turn = TurnEvent {
            step,
            finish_reason,
            tool_calls,
            tokens: self.budget.take_last(),
        };
        self.turns.push(turn);
    }
}
