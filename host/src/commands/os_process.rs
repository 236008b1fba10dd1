//! The os_process tier: each call runs in a child `wbx` process, for
//! commands whose trust calls for an OS boundary as well as the sandbox.
//!
//! The child gets the store file, the grant (profile and caps), the
//! budgets, the preopens and the expected sha256, which it verifies again
//! itself before running, so a file swapped between the parent's check and
//! the child's read is refused. The parent bounds the child's wall time as
//! well and kills it past the budget. The child's engine verdicts (exit
//! codes 120 to 126 with a `wbx:` line on stderr) come back as the same
//! errors an in-process run reports.

use super::broker::Resolved;
use super::{CommandEnv, CommandError, CommandOutput};
use crate::engine::Engine;
use bytes::Bytes;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::AsyncWriteExt;

/// Extra wall time the child gets over the command's budget, for process
/// start-up and engine set-up.
const CHILD_GRACE: Duration = Duration::from_secs(5);

impl Engine {
    /// Runs a command in a child `wbx` process.
    pub(crate) async fn run_in_process(
        &self,
        env: &CommandEnv,
        resolved: &Resolved,
        args: Vec<String>,
        stdin: Bytes,
        timeout: Duration,
        fuel: u64,
    ) -> Result<CommandOutput, CommandError> {
        let wbx = self.wbx_binary().ok_or_else(|| {
            CommandError::Refused(
                "tier os_process unavailable: this engine has no wbx binary to start (EngineBuilder::wbx_binary)"
                    .into(),
            )
        })?;
        let path = resolved.path.as_ref().ok_or_else(|| {
            CommandError::Refused("tier os_process needs a registered (stored) command".into())
        })?;
        let mut cmd = tokio::process::Command::new(wbx);
        cmd.arg("--home")
            .arg(self.home())
            .arg("exec")
            .arg("--profile")
            .arg(env.grant.profile.effective.name())
            .arg("--caps")
            .arg(env.grant.caps.words().join(","))
            .arg("--tenant")
            .arg(&env.principal)
            .arg("--timeout")
            .arg(timeout.as_millis().to_string())
            .arg("--fuel")
            .arg(fuel.to_string())
            .arg("--expect-sha256")
            .arg(resolved.artifact.sha256_hex());
        if let Some(bytes) = env.policy.memory {
            cmd.arg("--memory").arg((bytes >> 20).max(1).to_string());
        }
        for dir in &env.dirs {
            let ro = if dir.read_only { "::ro" } else { "" };
            cmd.arg("--dir")
                .arg(format!("{}::{}{ro}", dir.host.display(), dir.guest));
        }
        cmd.arg(path)
            .arg("--")
            .args(&args)
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd
            .spawn()
            .map_err(|e| CommandError::Refused(format!("cannot start {}: {e}", wbx.display())))?;
        if let Some(mut pipe) = child.stdin.take() {
            tokio::spawn(async move {
                let _ = pipe.write_all(&stdin).await;
            });
        }
        let out = tokio::time::timeout(timeout + CHILD_GRACE, child.wait_with_output())
            .await
            .map_err(|_| CommandError::Timeout(timeout))?
            .map_err(|e| CommandError::Refused(format!("child wbx failed: {e}")))?;
        let code = out.status.code().unwrap_or(-1);
        let stderr_text = String::from_utf8_lossy(&out.stderr);
        let verdict = stderr_text
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("wbx: "))
            .map(str::to_string);
        if let (Some(line), 120..=126) = (&verdict, code) {
            return Err(match code {
                124 => CommandError::Timeout(timeout),
                122 => CommandError::Memory(
                    self.memory_cap(env.policy.memory, env.grant.profile.effective) as u64,
                ),
                123 => CommandError::Fuel,
                121 => CommandError::Trap(line.clone()),
                _ if line.contains("artifact_integrity") => CommandError::Integrity(line.clone()),
                _ => CommandError::Refused(line.clone()),
            });
        }
        Ok(CommandOutput {
            stdout: Bytes::from(out.stdout),
            stderr: Bytes::from(out.stderr),
            exit_code: code,
            elapsed: Duration::ZERO,
        })
    }
}
