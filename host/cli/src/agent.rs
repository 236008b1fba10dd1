//! `wbx agent run`: one agent run against the operator's model endpoint
//! (`WB_LLM_BASE_URL`, `WB_LLM_API_KEY` or `OPENROUTER_API_KEY`,
//! `WB_LLM_MODEL`), its tools run in the sandbox, its trace and signed
//! ledger in the workdir. `--exec` grants the run `git`, `publish` and
//! `image` (see `options::agent_services` for where they go).

use crate::options::{agents, engine, runtime};
use crate::{exit, fail};
use std::path::PathBuf;
use std::sync::Arc;
use workbooks_agent::{AgentDef, DEFAULT_SYSTEM, StepEvent, parse_org, replay};
use workbooks_agent::{AgentOptions, LoopStatus};

#[derive(Debug, clap::Subcommand)]
pub(crate) enum AgentCommand {
    /// Run the agent loop on a task and print its result.
    Run(RunArgs),
    /// Re-run a finished run against its recorded model answers, with no
    /// network, in a fresh workdir; exit 0 when it writes the same
    /// _steps.jsonl and ledger root, 1 naming the first line that differs.
    Replay(ReplayArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct ReplayArgs {
    /// The finished run's workdir.
    workdir: PathBuf,
}

#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// The task.
    #[arg(long)]
    task: String,
    /// An org file defining the agent: its first `:agent:` node (ID,
    /// MODEL, system prompt).
    #[arg(long, value_name = "FILE.org")]
    def: Option<PathBuf>,
    /// The system prompt (default: the definition's, else a generic one).
    #[arg(long)]
    system: Option<String>,
    /// The model (default: the definition's, else WB_LLM_MODEL).
    #[arg(long)]
    model: Option<String>,
    /// Model turns at most.
    #[arg(long, default_value_t = workbooks_agent::limits::AGENT_MAX_STEPS)]
    max_steps: u32,
    /// Tokens the run may spend on the model in all, summed from each
    /// reply's usage; past it the run ends `stopped: token budget …`.
    #[arg(long, default_value_t = workbooks_agent::limits::AGENT_TOKEN_BUDGET, value_name = "N")]
    token_budget: u64,
    /// The working dir (default: a fresh one under <home>/runs/<tenant>/).
    #[arg(long)]
    workdir: Option<PathBuf>,
    /// The tenant the run acts as.
    #[arg(long, default_value = "default")]
    tenant: String,
    /// The agent's name in the trace (default: the definition's ID, else
    /// `agent`).
    #[arg(long)]
    agent: Option<String>,
    /// Grant the run exec: the `git`, `publish` and `image` tools, on the
    /// places the operator set (WB_AGENT_GIT_REMOTE, WB_AGENT_WEB_ROOT,
    /// WB_IMAGE_BASE_URL).
    #[arg(long)]
    exec: bool,
    /// Run under this stored grant (`wbx grant add --subject agent:NAME`,
    /// or one with no subject): every tool call and model request is
    /// judged by it as it is then, so `wbx grant narrow|revoke` reaches
    /// the run at its next call, and each change it saw is in its ledger.
    #[arg(long, value_name = "ID")]
    grant: Option<String>,
}

/// One line of live progress on stderr.
fn progress(e: &StepEvent) {
    let args = e.args.to_string();
    let args: String = args.chars().take(80).collect();
    let verdict = match &e.error {
        Some(err) => format!("error: {}", err.chars().take(80).collect::<String>()),
        None => format!("exit {}", e.exit_code),
    };
    eprintln!(
        "step {}: {} {args} ({verdict}, {} ms)",
        e.step, e.tool, e.dur_ms
    );
}

/// The definition in `path`, or the exit code of a usage error.
fn definition(path: &PathBuf) -> Result<AgentDef, u8> {
    let usage =
        |e: &dyn std::fmt::Display| fail("usage", format!("{}: {e}", path.display()), exit::USAGE);
    let text = std::fs::read_to_string(path).map_err(|e| usage(&e))?;
    parse_org(&text).map_err(|e| usage(&e))
}

pub(crate) fn run(cmd: AgentCommand, home: PathBuf) -> u8 {
    let args = match cmd {
        AgentCommand::Run(args) => args,
        AgentCommand::Replay(args) => return replay(args, home),
    };
    let body = || -> Result<u8, u8> {
        let def = match &args.def {
            Some(path) => definition(path)?,
            None => AgentDef::default(),
        };
        let engine = engine(home)?;
        let opts = AgentOptions {
            system: args
                .system
                .or(Some(def.system).filter(|s| !s.is_empty()))
                .unwrap_or_else(|| DEFAULT_SYSTEM.into()),
            task: args.task,
            model: args.model.or(def.model),
            max_steps: args.max_steps,
            token_budget: Some(args.token_budget),
            agent: args.agent.or(def.id).unwrap_or_else(|| "agent".into()),
            tenant: args.tenant,
            workdir: args.workdir,
            exec: args.exec,
            grant: args.grant,
            toolkits: def.toolkits,
            on_step: (!crate::out::json())
                .then(|| workbooks_agent::StepObserver(Arc::new(progress))),
            ..AgentOptions::default()
        };
        let record = runtime()?
            .block_on(agents(engine)?.run(opts))
            .map_err(|e| match e {
                workbooks_agent::AgentError::Grant(_) => fail("grant", e, exit::REFUSED),
                _ => fail("agent", e, exit::ENGINE),
            })?;
        let code = match record.status {
            LoopStatus::Finished | LoopStatus::Done => 0,
            LoopStatus::Stopped | LoopStatus::Failed => exit::FAILED,
        };
        if crate::out::json() {
            let why = format!("agent: {:?}: {}", record.status, record.result);
            match serde_json::to_value(&record) {
                Ok(value) => outln!("{:#}", crate::out::verdict(value, code, &why)),
                Err(e) => return Err(fail("agent", e, exit::ENGINE)),
            }
        } else {
            outln!("{}", record.result);
            eprintln!(
                "{}: {:?} after {} steps; trace in {}",
                crate::BIN,
                record.status,
                record.steps,
                record.workdir.display()
            );
        }
        Ok(code)
    };
    body().unwrap_or_else(|c| c)
}

fn replay(args: ReplayArgs, home: PathBuf) -> u8 {
    let body = || -> Result<u8, u8> {
        let engine = engine(home)?;
        let got = runtime()?.block_on(agents(engine)?.replay(&args.workdir));
        let report = got.map_err(|e| match e {
            replay::ReplayError::NotARun { .. } => fail("usage", e, exit::USAGE),
            replay::ReplayError::Start(_) => fail("replay", e, exit::ENGINE),
            _ => fail("replay", e, exit::FAILED),
        })?;
        let steps = workbooks_agent::ledger::STEPS;
        let code = if report.same { 0 } else { exit::FAILED };
        let why = match report.first_different_line {
            Some(n) => format!("line {n} of {steps} differs"),
            None => "the ledger root differs".to_string(),
        };
        if crate::out::json() {
            let r = &report.record;
            let out = serde_json::json!({
                "id": r.id, "same": report.same, "status": r.status, "result": r.result,
                "steps": r.steps, "root": report.root, "original_root": report.original_root,
                "first_different_line": report.first_different_line,
                "workdir": r.workdir,
            });
            outln!(
                "{}",
                crate::out::verdict(out, code, &format!("replay: {why}"))
            );
        } else if report.same {
            outln!(
                "replayed {}: {} lines of {steps} and ledger root {} are the same",
                report.record.id,
                report.record.events.len(),
                report.root
            );
        } else {
            fail("replay", why, code);
        }
        Ok(code)
    };
    body().unwrap_or_else(|c| c)
}
