//! The os_process tier: each call runs in a child process, for commands
//! whose trust calls for an OS boundary as well as the sandbox.
//!
//! The child (`wbx`, or any binary that calls [`crate::child::run`]) is
//! started with [`CHILD_ARGV`] alone and reads one typed request
//! ([`ChildRequest`]) on its stdin: the store file, the grant (profile
//! and caps), the tenant
//! and session id (so it reaches the same tenant-scoped volumes an
//! in-process run would), the budgets, the preopens and the expected
//! sha256, which it verifies again itself before running, so a file swapped
//! between the parent's check and the child's read is refused. The child
//! answers in frames ([`crate::commands::frames`]): the guest's stdout and stderr,
//! then the engine's verdict, on a channel the guest cannot write. The
//! parent reads the frames as they come with the in-process caps, stops
//! (and kills) the child at the first byte past a cap, and bounds the
//! child's wall time as well.

use super::Engine;
use super::feed_pipe::FeedPipe;
use crate::commands::frames::{self, FrameError, Verdict};
use crate::commands::ladder::Resolved;
use crate::commands::{CommandEnv, CommandError, CommandOutput};
use crate::policy::Cap;
use bytes::Bytes;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use workbooks_wire::child::{CHILD_ARGV, CHILD_PROTOCOL, ChildDir, ChildJob, ChildRequest};

/// Extra wall time the child gets over the command's budget, for process
/// start-up and engine set-up.
pub(crate) const CHILD_GRACE: Duration = Duration::from_secs(5);

/// Bytes of the child's own diagnostics kept for an error message.
const CHILD_DIAGNOSTIC_BYTES: u64 = 4 << 10;

impl Engine {
    /// Runs a command in a child process.
    pub(crate) async fn run_in_process(
        &self,
        env: &CommandEnv,
        resolved: &Resolved,
        args: Vec<String>,
        stdin: Bytes,
        timeout: Duration,
        fuel: u64,
    ) -> Result<CommandOutput, CommandError> {
        self.run_child(env, resolved, args, stdin, (timeout, fuel), None)
            .await
    }

    /// Runs a resolved command on `argv` in a child, inside a
    /// bubblewrap sandbox when `container` (the fabric's `os_process` and
    /// `container` tiers).
    pub(crate) async fn run_isolated(
        &self,
        env: &CommandEnv,
        resolved: &Resolved,
        argv: Vec<String>,
        stdin: Bytes,
        container: bool,
    ) -> Result<CommandOutput, CommandError> {
        let (args, stdin) = super::launch::shape(resolved, argv, stdin)?;
        let bwrap = match container {
            false => None,
            true => Some(crate::tier::TierEnv::find_bwrap().ok_or_else(|| {
                CommandError::Refused(
                    "tier unavailable: container (bubblewrap not found: install bwrap, or set WB_BWRAP)"
                        .into(),
                )
            })?),
        };
        let budgets = super::launch::budgets(env);
        self.run_child(env, resolved, args, stdin, budgets, bwrap.as_deref())
            .await
    }

    async fn run_child(
        &self,
        env: &CommandEnv,
        resolved: &Resolved,
        args: Vec<String>,
        stdin: Bytes,
        (timeout, fuel): (Duration, u64),
        bwrap: Option<&std::path::Path>,
    ) -> Result<CommandOutput, CommandError> {
        let child_bin = self.child_binary().ok_or_else(|| {
            CommandError::Refused(
                "tier os_process unavailable: this engine has no child binary to start (EngineBuilder::child_binary)"
                    .into(),
            )
        })?;
        // Docked here first, so the child loads compiled code rather than
        // compiling: compiling (the memory-hungry step) stays outside a
        // container's ceilings, a fan-out compiles once rather than once
        // per child, and a refusal comes before any process starts.
        let docked = self.dock_resolved(env, resolved)?;
        let (cmd, request, handed, feed) = match bwrap {
            None => {
                let mut cmd = tokio::process::Command::new(child_bin);
                let request = self.os_process_request(env, resolved, args, (timeout, fuel))?;
                let (keep, feed) = FeedPipe::hand_to(&mut cmd, env.scope.as_ref(), &request)?;
                (cmd, request, Some((keep, None)), feed)
            }
            Some(bwrap) => {
                let contained = self.contained_command(
                    (bwrap, child_bin),
                    env,
                    resolved,
                    &docked,
                    args,
                    (timeout, fuel),
                )?;
                (
                    contained.command,
                    contained.request,
                    Some((contained.keep, Some(contained.relay))),
                    contained.feed,
                )
            }
        };
        // An os_process child shares this engine's home; a contained child
        // is handed its code and has no home of ours.
        let shares_home = bwrap.is_none();
        let mut child =
            self.start_child(cmd, child_bin, &request, stdin, shares_home, Stdio::piped())?;
        // The child holds its own copies now; the relay's parent end and
        // the store it serves stay here.
        let mut relay = handed.and_then(|(keep, relay)| {
            drop(keep);
            relay
        });
        // The child's own stderr carries only its diagnostics: kept short,
        // and drained so the child never blocks on it.
        let diagnostics = child.stderr.take().map(|pipe| {
            tokio::spawn(async move {
                let mut text = Vec::new();
                let _ = pipe
                    .take(CHILD_DIAGNOSTIC_BYTES)
                    .read_to_end(&mut text)
                    .await;
                String::from_utf8_lossy(&text).trim().to_string()
            })
        });
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| CommandError::Refused("the child has no stdout".into()))?;
        let exchange = async {
            let received = frames::read(stdout).await;
            if received.is_err() {
                let _ = child.start_kill();
            }
            let status = child.wait().await;
            (received, status)
        };
        // The relay is served while the child runs, and dropped (its
        // channel closed, its jobs stopped) when it ends.
        // And the grant's changes are sent while it runs.
        let serving = async {
            let feeding = async {
                if let Some(feed) = feed {
                    feed.send().await;
                }
                std::future::pending::<()>().await
            };
            let relaying = async {
                if let Some(relay) = relay.as_mut() {
                    relay.serve().await;
                }
                std::future::pending::<()>().await
            };
            tokio::join!(feeding, relaying);
        };
        let both = async {
            tokio::select! {
                done = exchange => done,
                () = serving => unreachable!("serving never ends by itself"),
            }
        };
        let (received, status) = tokio::time::timeout(timeout + CHILD_GRACE, both)
            .await
            .map_err(|_| CommandError::Timeout(timeout))?;
        let received = received.map_err(|e| match e {
            FrameError::TooLarge { limit, .. } => CommandError::OutputTooLarge(limit as u64),
            FrameError::Malformed(why) => CommandError::Refused(format!("the child: {why}")),
        })?;
        let verdict = match received.verdict {
            Some(v) => v,
            None => {
                let said = match diagnostics {
                    Some(task) => task.await.unwrap_or_default(),
                    None => String::new(),
                };
                let status = status
                    .map(|s| s.to_string())
                    .unwrap_or_else(|e| e.to_string());
                return Err(CommandError::Refused(format!(
                    "the child ended without a verdict ({status}){}{said}",
                    if said.is_empty() { "" } else { ": " }
                )));
            }
        };
        match verdict {
            Verdict::Exit(exit_code) => Ok(CommandOutput {
                stdout: received.stdout,
                stderr: received.stderr,
                exit_code,
                elapsed: Duration::ZERO,
            }),
            Verdict::Failed(error) => Err(error),
        }
    }

    /// Starts `cmd` (the child binary, or bubblewrap around it) as a child
    /// of the tiers' protocol: [`CHILD_ARGV`] and no environment, but for
    /// this engine's cache and the key sealing it when it `shares_home`
    /// (or it compiles every guest afresh); the request, then `stdin`, on
    /// its stdin. `program` names it in a refusal.
    pub(crate) fn start_child(
        &self,
        mut cmd: tokio::process::Command,
        program: &std::path::Path,
        request: &ChildRequest,
        stdin: Bytes,
        shares_home: bool,
        stderr: Stdio,
    ) -> Result<tokio::process::Child, CommandError> {
        let frame = request_frame(request)?;
        cmd.args(CHILD_ARGV)
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .kill_on_drop(true);
        if shares_home {
            if let Some(dir) = self.state_dir() {
                cmd.env(crate::seal::STATE_DIR_ENV, dir);
            }
            if let Some(dir) = self.cache_dir() {
                cmd.env(workbooks_wire::home::CACHE_DIR_ENV, dir);
            }
        }
        let mut child = cmd.spawn().map_err(|e| {
            CommandError::Refused(format!("cannot start {}: {e}", program.display()))
        })?;
        if let Some(mut pipe) = child.stdin.take() {
            tokio::spawn(async move {
                if pipe.write_all(&frame).await.is_ok() {
                    let _ = pipe.write_all(&stdin).await;
                }
            });
        }
        Ok(child)
    }

    /// The `os_process` child's request: the stored command, run with
    /// this engine's home (the tier protects this process's address
    /// space; the child is the same user with the same home).
    fn os_process_request(
        &self,
        env: &CommandEnv,
        resolved: &Resolved,
        args: Vec<String>,
        budgets: (Duration, u64),
    ) -> Result<ChildRequest, CommandError> {
        let path = resolved.path.as_ref().ok_or_else(|| {
            CommandError::Refused("tier os_process needs a registered (stored) command".into())
        })?;
        let brokers = self.replaced_broker_files().map_err(|e| {
            CommandError::Refused(format!(
                "tier os_process cannot pass a replaced broker: {e}"
            ))
        })?;
        let job = ChildJob::Exec {
            file: path.clone(),
            sha256: resolved.artifact.sha256_hex(),
            args,
            handed: None,
        };
        child_request(
            self,
            self.home().to_path_buf(),
            job,
            env,
            resolved,
            budgets,
            &brokers,
        )
    }
}

/// The request of a child running `job`, both tiers alike: the grant,
/// the tenant and session, the budgets, the environment, the brokers
/// (`brokers`: each cap and the file the child reads it from), the stubs
/// and the preopens.
pub(crate) fn child_request(
    engine: &Engine,
    home: std::path::PathBuf,
    job: ChildJob,
    env: &CommandEnv,
    resolved: &Resolved,
    (timeout, fuel): (Duration, u64),
    brokers: &[(Cap, std::path::PathBuf)],
) -> Result<ChildRequest, CommandError> {
    let grant = resolved.grant(&env.grant);
    // The child runs under the grant as it is now; one already expired or
    // revoked starts nothing.
    let scope = env
        .scope
        .as_ref()
        .map(crate::grants::Scope::snapshot)
        .transpose()
        .map_err(|e| CommandError::Refused(e.to_string()))?;
    // The child composes with the same brokers and deny brokers as this
    // engine.
    let stubs = env.grant.stubs.union(engine.stubs()).union(resolved.stubs);
    // A child in this engine's own home reads a stored grant as it is now;
    // a view held fixed (a replay's) stays fixed there too.
    let scope_live = home == engine.home()
        && env
            .scope
            .as_ref()
            .is_some_and(crate::grants::Scope::is_live);
    Ok(ChildRequest {
        protocol: CHILD_PROTOCOL,
        job,
        profile: grant.profile.effective.name().to_string(),
        caps: Some(cap_words(grant.caps)),
        tenant: env.tenant.clone(),
        id: env.session_id.clone(),
        timeout_ms: Some(millis(timeout)),
        fuel: Some(fuel),
        memory: env.policy.memory,
        env: env.policy.env.to_vec(),
        brokers: broker_words(brokers),
        stubs: stub_words(stubs),
        dirs: child_dirs(&env.dirs),
        home_shares: engine.home_shares(),
        scope,
        scope_live,
        // Else a grant that changes is sent to it as it changes.
        scope_feed_fd: super::feed_pipe::feed_fd(env.scope.as_ref(), scope_live),
        home,
    })
}

/// Caps as the request names them.
pub(crate) fn cap_words(caps: crate::policy::CapSet) -> Vec<String> {
    caps.words().into_iter().map(String::from).collect()
}

/// Stubs as the request names them.
pub(crate) fn stub_words(stubs: crate::policy::Stubs) -> Vec<String> {
    stubs.iter().map(|s| s.to_string()).collect()
}

/// A budget in the request's milliseconds.
pub(crate) fn millis(budget: Duration) -> u64 {
    u64::try_from(budget.as_millis()).unwrap_or(u64::MAX)
}

/// Each replaced broker as the request names it.
pub(crate) fn broker_words(
    brokers: &[(Cap, std::path::PathBuf)],
) -> Vec<(String, std::path::PathBuf)> {
    brokers
        .iter()
        .map(|(cap, file)| (cap.to_string(), file.clone()))
        .collect()
}

/// The preopens as the request carries them.
pub(crate) fn child_dirs(dirs: &[crate::preopen::Preopen]) -> Vec<ChildDir> {
    dirs.iter()
        .map(|d| ChildDir {
            host: d.host.clone(),
            guest: d.guest.clone(),
            read_only: d.read_only,
        })
        .collect()
}

/// The request as the frame a child reads first; a request it cannot
/// carry (a host path that is not UTF-8, a frame past the limit) is
/// refused here, never reinterpreted there.
fn request_frame(request: &ChildRequest) -> Result<Vec<u8>, CommandError> {
    request
        .to_frame()
        .map_err(|e| CommandError::Refused(format!("cannot pass the request to a child: {e}")))
}
