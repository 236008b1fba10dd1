//! `wbx fabric run`: one command or kernel over many inputs.

use crate::options::{StageArgs, StageOptions as _, engine};
use crate::{exit, fail};
use std::io::BufRead;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use workbooks_fabric::{
    FABRIC_TASK_TIMEOUT, FABRIC_WIDTH, FabricError, FabricOptions, Target, TaskInput, Tier,
};

#[derive(Debug, clap::Subcommand)]
pub(crate) enum FabricCommand {
    /// Run a command (or, with --kernel, a kernel) once per input line.
    Run(RunArgs),
}

#[derive(Debug, clap::Args)]
pub(crate) struct RunArgs {
    /// The command (or kernel) to run.
    target: String,
    /// The inputs: one JSON object per line, {"args": [..], "stdin": ".."}
    /// (`-` for stdin).
    #[arg(long, value_name = "FILE.jsonl")]
    inputs: PathBuf,
    /// The target is a registered kernel; each input's stdin is its input.
    #[arg(long)]
    kernel: bool,
    /// Tasks in flight at once.
    #[arg(long, default_value_t = FABRIC_WIDTH, value_name = "N")]
    width: usize,
    /// instance, os_process, node or container (the shape's own when
    /// omitted).
    #[arg(long, value_name = "TIER")]
    tier: Option<String>,
    /// NATS server of the node tier.
    #[arg(long, value_name = "URL")]
    nats: Option<String>,
    /// A node-tier worker whose results this run takes, by its did:key
    /// (repeatable; `wbx worker` prints its own). Tasks are signed with the
    /// tenant's key (`WB_SIGNING_KEY` overrides it).
    #[arg(long = "worker", value_name = "DID")]
    workers: Vec<String>,
    #[command(flatten)]
    stage: StageArgs,
}

fn read_inputs(path: &PathBuf) -> Result<Vec<TaskInput>, u8> {
    let reader: Box<dyn BufRead> = if path.as_os_str() == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        let file = std::fs::File::open(path).map_err(|e| {
            fail(
                "load",
                format!("cannot read {}: {e}", path.display()),
                exit::LOAD,
            )
        })?;
        Box::new(std::io::BufReader::new(file))
    };
    let mut inputs = Vec::new();
    for (n, line) in reader.lines().enumerate() {
        let line = line.map_err(|e| fail("load", e, exit::LOAD))?;
        if line.trim().is_empty() {
            continue;
        }
        let input = serde_json::from_str(&line).map_err(|e| {
            fail(
                "usage",
                format!(
                    "{} line {}: not an input object ({e})",
                    path.display(),
                    n + 1
                ),
                exit::USAGE,
            )
        })?;
        inputs.push(input);
    }
    Ok(inputs)
}

pub(crate) fn run(cmd: FabricCommand, home: PathBuf) -> u8 {
    let FabricCommand::Run(args) = cmd;
    let body = || -> Result<u8, u8> {
        let tier = match &args.tier {
            None => None,
            Some(t) => Some(Tier::parse(t).ok_or_else(|| {
                fail(
                    "usage",
                    "--tier is instance, os_process, node or container",
                    exit::USAGE,
                )
            })?),
        };
        let inputs = read_inputs(&args.inputs)?;
        let engine = engine(home)?;
        if let Some(tier) = tier {
            workbooks_fabric::Fabric::new(engine.clone())
                .tier_env(args.nats.clone())
                .resolve(tier)
                .map_err(|e| fail("fabric", e, exit::REFUSED))?;
        }
        // Under --grant, judged for the target's bytes: a grant may name
        // them.
        let line = args.stage.ungranted_options()?;
        let registry = match args.kernel {
            true => engine.kernels(),
            false => engine.registry(),
        };
        let subject = match registry.get(&args.target) {
            Ok(Some(entry)) => entry.sha256,
            _ => String::new(),
        };
        let line =
            crate::options::granted(&args.stage, &engine, line, &format!("sha256:{subject}"))
                .map_err(|e| fail("refused", e, exit::REFUSED))?;
        let total = inputs.len();
        let finished = Arc::new(AtomicUsize::new(0));
        let opts = FabricOptions {
            width: args.width,
            tier,
            timeout: args
                .stage
                .timeout
                .map(Duration::from_millis)
                .unwrap_or(FABRIC_TASK_TIMEOUT),
            nats: args.nats.clone(),
            finished: Some(finished.clone()),
            workers: args.workers.clone(),
            signer: match crate::toolkit::seed() {
                None => None,
                Some(seed) => Some(
                    workbooks::identity::Identity::of_tenant(
                        engine.keyring(),
                        &line.tenant,
                        Some(&seed),
                    )
                    .map_err(|e| fail("usage", e, exit::USAGE))?,
                ),
            },
        };
        let target = match args.kernel {
            true => Target::Kernel(args.target.clone()),
            false => Target::Command(args.target.clone()),
        };
        let start = Instant::now();
        let bar = progress_bar(total, &args.target, crate::out::json());
        let results = runtime_multi()?
            .block_on(async {
                let fabric = workbooks_fabric::Fabric::new(engine.clone());
                let run = fabric.fan_out_as_host(line, &target, inputs, &opts);
                tokio::pin!(run);
                let mut tick = tokio::time::interval(Duration::from_millis(100));
                loop {
                    tokio::select! {
                        done = &mut run => break done,
                        _ = tick.tick() => bar.set_position(finished.load(Ordering::Relaxed) as u64),
                    }
                }
            })
            .map_err(|e| {
                let code = match e {
                    FabricError::Width(_) | FabricError::TooManyInputs { .. } => exit::USAGE,
                    FabricError::Line(_) => exit::USAGE,
                    FabricError::Tier(_) => exit::REFUSED,
                    FabricError::Kernel { .. } => exit::LOAD,
                    FabricError::Node(_) => exit::ENGINE,
                };
                fail("fabric", e, code)
            })?;
        bar.finish_and_clear();
        let failed = results.iter().filter(|r| !r.ok()).count();
        for r in &results {
            if crate::out::json() {
                outln!("{}", serde_json::to_string(r).unwrap_or_default());
                continue;
            }
            let status = match (&r.exit, &r.error) {
                (_, Some(error)) => format!("error {error}"),
                (Some(code), None) => format!("exit {code}"),
                (None, None) => "no result".to_string(),
            };
            let first = r.stdout.lines().next().unwrap_or("");
            outln!("#{:<5} {status:<12} {:>6} ms  {first}", r.index, r.dur_ms);
        }
        let code = if failed > 0 { exit::FAILED } else { 0 };
        let summary = format!(
            "{} tasks, {} ok, {failed} failed, in {:.2?}",
            results.len(),
            results.len() - failed,
            start.elapsed()
        );
        if !crate::out::json() {
            eprintln!("{summary}");
        } else if code != 0 {
            // One result per line, then the failure as every verb gives it.
            outln!(
                "{}",
                crate::out::error_json(&format!("fabric: {summary}"), code)
            );
        }
        Ok(code)
    };
    body().unwrap_or_else(|code| code)
}

/// A bar of finished tasks on stderr when it is a terminal (and the output
/// is not JSON); hidden otherwise.
fn progress_bar(total: usize, target: &str, json: bool) -> indicatif::ProgressBar {
    use std::io::IsTerminal as _;
    if json || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:30} {pos}/{len} {msg} ({elapsed}, eta {eta})",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar.set_message(target.to_string());
    bar
}

/// A runtime with a worker per core: the fan-out runs tasks in parallel.
fn runtime_multi() -> Result<tokio::runtime::Runtime, u8> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| fail("engine", e, exit::ENGINE))
}
