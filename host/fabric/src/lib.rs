//! The fabric: one command or kernel fanned over many inputs at a chosen
//! (width, tier). Results come back in input order, each with its own exit
//! code, output, error and duration; one input's failure never sinks the
//! others.
//!
//! Serves `wbx fabric run` and the `parallel` cap's host primitive
//! (`workbooks:host/launch.run-many`, reached through the parallel
//! broker). Invariant: every task goes through the same deny ladder,
//! envelope and budgets as a single command run by the same tenant
//! (revocation and rate limit are checked per task, not per batch), at no
//! weaker tier than the command's own; width is bounded by the
//! tenant's concurrency cap, so a fan-out cannot starve the tenant's
//! other work past it.
//!
//! The engine runs each command task ([`workbooks::Commands::fan`]);
//! this crate adds kernels, the node tier and the options around them, and
//! holds an engine ([`Fabric`]) rather than extending it.

#![deny(missing_docs)]

pub mod limits;
#[cfg(feature = "node")]
pub mod node;

pub use crate::limits::{FABRIC_MAX_INPUTS, FABRIC_TASK_TIMEOUT};
pub use workbooks::commands::Tier;
pub use workbooks::limits::{
    FAN_MAX_WIDTH as FABRIC_MAX_WIDTH, FAN_WIDTH as FABRIC_WIDTH, PARALLEL_MAX_INPUTS,
};
pub use workbooks::tier::{TierEnv, TierUnavailable, forbid_new_threads};

use bytes::Bytes;
use workbooks::commands::{CommandEnv, CommandOutput};
use workbooks::engine::{Engine, Fan};
use workbooks::kernel::{Kernel, KernelError, KernelOptions};
use workbooks::policy::Cap;

use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// One input: its arguments and its stdin.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskInput {
    /// Arguments, without the command name (a kernel ignores them).
    #[serde(default)]
    pub args: Vec<String>,
    /// Stdin (a kernel's input).
    #[serde(default)]
    pub stdin: String,
}

/// What one input did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskResult {
    /// Its position in the inputs.
    pub index: usize,
    /// Its exit code (`None` when it did not run to one).
    pub exit: Option<i32>,
    /// Its stdout (a kernel's output), as text.
    pub stdout: String,
    /// Its stderr, as text.
    pub stderr: String,
    /// Why it did not run to an exit code.
    pub error: Option<String>,
    /// Its wall time, in milliseconds.
    pub dur_ms: u64,
}

impl TaskResult {
    fn finished(index: usize, dur: Duration, out: Result<CommandOutput, String>) -> TaskResult {
        let dur_ms = dur.as_millis() as u64;
        match out {
            Ok(out) => TaskResult {
                index,
                exit: Some(out.exit_code),
                stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
                stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
                error: None,
                dur_ms,
            },
            Err(error) => TaskResult {
                index,
                exit: None,
                stdout: String::new(),
                stderr: String::new(),
                error: Some(error),
                dur_ms,
            },
        }
    }

    /// Whether it ran to exit code 0.
    pub fn ok(&self) -> bool {
        self.exit == Some(0)
    }
}

/// What runs on each input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// A registered or built-in command.
    Command(String),
    /// A registered kernel.
    Kernel(String),
}

/// How to fan out.
#[derive(Debug, Clone)]
pub struct FabricOptions {
    /// Tasks in flight at once (1..=[`FABRIC_MAX_WIDTH`]).
    pub width: usize,
    /// The tier asked for; the shape's own when `None`.
    pub tier: Option<Tier>,
    /// Budget of each task.
    pub timeout: Duration,
    /// The NATS server of the node tier.
    pub nats: Option<String>,
    /// Counts tasks as they finish, for a progress display (instance,
    /// os_process, container and kernel fan-outs; the node tier counts
    /// when its results are gathered).
    pub finished: Option<Arc<AtomicUsize>>,
    /// The node tier's workers whose results this run takes, by did:key;
    /// a result signed by anyone else is ignored.
    pub workers: Vec<String>,
    /// The key the node tier's tasks are signed with: the tenant's own
    /// identity when `None`.
    pub signer: Option<workbooks::identity::Identity>,
}

impl Default for FabricOptions {
    fn default() -> Self {
        Self {
            width: FABRIC_WIDTH,
            tier: None,
            timeout: FABRIC_TASK_TIMEOUT,
            nats: None,
            finished: None,
            workers: Vec::new(),
            signer: None,
        }
    }
}

impl FabricOptions {
    /// Notes one more finished task.
    fn finish_one(&self) {
        if let Some(count) = &self.finished {
            count.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Why a fan-out did not start (each task's own failure is in its result).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FabricError {
    /// The width is out of range.
    #[error("fabric: width {0} is outside 1..={FABRIC_MAX_WIDTH}")]
    Width(usize),
    /// Too many inputs.
    #[error("fabric: {given} inputs, over {max}")]
    TooManyInputs {
        /// Inputs given.
        given: usize,
        /// The cap.
        max: usize,
    },
    /// The tier cannot run here.
    #[error(transparent)]
    Tier(#[from] TierUnavailable),
    /// The node tier's bus failed.
    #[error("fabric: node: {0}")]
    Node(String),
    /// The profile, caps or environment were refused.
    #[error("fabric: {0}")]
    Line(String),
    /// The kernel could not be found or loaded.
    #[error("fabric: kernel `{name}`: {error}")]
    Kernel {
        /// The kernel's name.
        name: String,
        /// Why.
        error: KernelError,
    },
}

/// Fans commands and kernels out on an engine; cheap to clone.
#[derive(Clone)]
pub struct Fabric {
    engine: Engine,
}

/// The node tier as the fabric runs it: tasks submitted over NATS to
/// `wbx worker`s.
#[derive(Debug)]
struct NodeTier {
    /// The NATS server tasks are submitted to.
    nats: Option<String>,
}

impl workbooks::tier::RemoteTier for NodeTier {
    fn available(&self) -> Result<(), String> {
        if self.nats.is_none() {
            return Err("no NATS server: pass --nats URL (and run `wbx worker --nats URL`)".into());
        }
        if cfg!(feature = "node") {
            Ok(())
        } else {
            Err("this build has no node tier (built without `node`)".into())
        }
    }
}

impl Fabric {
    /// The fabric over `engine`.
    pub fn new(engine: Engine) -> Fabric {
        Fabric { engine }
    }

    /// The engine the tasks run on.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// What the tiers can use here, with `nats` for the node tier, which
    /// this build runs when it has the `node` feature.
    pub fn tier_env(&self, nats: Option<String>) -> TierEnv {
        TierEnv {
            remote: Some(std::sync::Arc::new(NodeTier { nats })),
            ..self.engine.commands().tier_env()
        }
    }

    /// [`Fabric::fan_out`] with the host as the caller (the CLI, an
    /// embedder): the grant and stage settings of `line`, through
    /// `commands`.
    pub async fn fan_out_as_host(
        &self,
        line: workbooks::LineOptions,
        target: &Target,
        inputs: Vec<TaskInput>,
        opts: &FabricOptions,
    ) -> Result<Vec<TaskResult>, FabricError> {
        let (env, _) = workbooks::engine::shell::host_env(line)
            .map_err(|e| FabricError::Line(e.to_string()))?;
        self.fan_out(&env, Cap::Commands, target, inputs, opts)
            .await
    }

    /// Runs `target` on every input for `env`, `opts.width` at a time, and
    /// returns one result per input, in input order. Each command task is
    /// admitted by the ladder as a call through `cap` (`commands` from the
    /// CLI, `parallel` from a guest).
    pub async fn fan_out(
        &self,
        env: &CommandEnv,
        cap: Cap,
        target: &Target,
        inputs: Vec<TaskInput>,
        opts: &FabricOptions,
    ) -> Result<Vec<TaskResult>, FabricError> {
        if opts.width == 0 || opts.width > FABRIC_MAX_WIDTH {
            return Err(FabricError::Width(opts.width));
        }
        if inputs.len() > FABRIC_MAX_INPUTS {
            return Err(FabricError::TooManyInputs {
                given: inputs.len(),
                max: FABRIC_MAX_INPUTS,
            });
        }
        let tier_env = self.tier_env(opts.nats.clone());
        match target {
            Target::Kernel(name) => {
                let tier = opts.tier.unwrap_or(Tier::Instance);
                if tier != Tier::Instance {
                    return Err(TierUnavailable {
                        tier,
                        why: "a kernel runs at instance: its shape is the in-memory hot loop; \
                              fan a command out for a stronger tier"
                            .into(),
                    }
                    .into());
                }
                self.fan_kernel(name, inputs, opts, env.scope.clone()).await
            }
            Target::Command(name) => {
                let tier = opts.tier.unwrap_or(Tier::Instance);
                tier_env.resolve(tier)?;
                let tasks = inputs
                    .into_iter()
                    .map(|i| (i.args, Bytes::from(i.stdin.into_bytes())))
                    .collect();
                let done = match (tier, &opts.nats) {
                    #[cfg(feature = "node")]
                    (Tier::Node, Some(url)) => {
                        self.fan_node(env, cap, name, tasks, opts, url).await?
                    }
                    _ => {
                        let fan = Fan {
                            width: opts.width,
                            tier,
                            timeout: opts.timeout,
                            finished: opts.finished.as_deref(),
                        };
                        self.engine
                            .commands()
                            .fan(env, cap, name, tasks, &fan)
                            .await
                    }
                };
                Ok(done
                    .into_iter()
                    .enumerate()
                    .map(|(index, (out, dur))| {
                        TaskResult::finished(index, dur, out.map_err(|e| e.to_string()))
                    })
                    .collect())
            }
        }
    }

    /// Runs a kernel over the inputs: `width` workers, each with its own
    /// instance, taking the next input until none is left. Under a stored
    /// grant (`scope`) each call is made only while the grant stands: a
    /// kernel reaches nothing, but past the grant's expiry or revocation
    /// nothing runs under it.
    async fn fan_kernel(
        &self,
        name: &str,
        inputs: Vec<TaskInput>,
        opts: &FabricOptions,
        scope: Option<workbooks::grants::Scope>,
    ) -> Result<Vec<TaskResult>, FabricError> {
        let failed = |error: KernelError| FabricError::Kernel {
            name: name.to_string(),
            error,
        };
        let artifact = workbooks::kernel::Kernels::of(&self.engine)
            .load(name)
            .map_err(failed)?;
        let kopts = KernelOptions {
            timeout: opts.timeout,
            ..KernelOptions::default()
        };
        let inputs = Arc::new(inputs);
        let next = Arc::new(AtomicUsize::new(0));
        let width = opts.width.min(inputs.len().max(1));
        let mut workers = Vec::with_capacity(width);
        for _ in 0..width {
            let kernel = Kernel::load(&self.engine, &artifact, kopts.clone())
                .await
                .map_err(failed)?;
            let (inputs, next, scope) = (inputs.clone(), next.clone(), scope.clone());
            let opts = opts.clone();
            workers.push(match kernel {
                Kernel::Core(mut k) => tokio::task::spawn_blocking(move || {
                    let mut done = Vec::new();
                    while let Some((index, input)) = take(&inputs, &next) {
                        let start = Instant::now();
                        let out = match standing(scope.as_ref()) {
                            Err(refused) => Err(refused),
                            Ok(()) => k.call(input.stdin.as_bytes()),
                        };
                        done.push(kernel_result(index, start, out));
                        opts.finish_one();
                    }
                    done
                }),
                component @ Kernel::Component(_) => {
                    let mut k = component;
                    tokio::spawn(async move {
                        let mut done = Vec::new();
                        while let Some((index, input)) = take(&inputs, &next) {
                            let start = Instant::now();
                            let out = match standing(scope.as_ref()) {
                                Err(refused) => Err(refused),
                                Ok(()) => k.call(input.stdin.as_bytes()).await,
                            };
                            done.push(kernel_result(index, start, out));
                            opts.finish_one();
                        }
                        done
                    })
                }
            });
        }
        let mut results = Vec::with_capacity(inputs.len());
        for worker in workers {
            match worker.await {
                Ok(done) => results.extend(done),
                Err(e) => {
                    return Err(failed(KernelError::Refused(format!("worker failed: {e}"))));
                }
            }
        }
        Ok(in_order(results))
    }
}

fn take<'a>(inputs: &'a [TaskInput], next: &AtomicUsize) -> Option<(usize, &'a TaskInput)> {
    let index = next.fetch_add(1, Ordering::Relaxed);
    inputs.get(index).map(|input| (index, input))
}

/// Whether a kernel call may run under `scope`: the grant has neither
/// expired nor been revoked.
fn standing(scope: Option<&workbooks::grants::Scope>) -> Result<(), KernelError> {
    match scope.map(workbooks::grants::Scope::now) {
        Some(Err(refused)) => Err(KernelError::Refused(refused.to_string())),
        _ => Ok(()),
    }
}

fn kernel_result(index: usize, start: Instant, out: Result<Vec<u8>, KernelError>) -> TaskResult {
    TaskResult::finished(
        index,
        start.elapsed(),
        out.map(|stdout| CommandOutput {
            stdout: stdout.into(),
            ..CommandOutput::default()
        })
        .map_err(|e| e.to_string()),
    )
}

fn in_order(mut results: Vec<TaskResult>) -> Vec<TaskResult> {
    results.sort_by_key(|r| r.index);
    results
}

#[cfg(test)]
mod layers {
    /// Lowest first.
    const LAYERS: &[&str] = &["limits", "node"];

    #[test]
    fn every_module_is_placed_and_none_imports_from_a_layer_above_it() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let checked = layers::check(&src, LAYERS, &[]).unwrap_or_else(|e| panic!("{e}"));
        assert!(checked >= 4, "checked only {checked} files");
    }
}
