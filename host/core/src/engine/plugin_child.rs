//! A registered plugin called at its registered tier: one registered at
//! `os_process` is started and called in a child `wbx call --framed`,
//! not in this process, whichever lane asks (`wbx call NAME`, an MCP
//! plugin tool). The child answers in frames ([`crate::commands::frames`]):
//! the plugin's `ok` text on the stdout frame, its `err` text on the
//! stderr frame, and the verdict (exit 0 or 1, or the engine's refusal).
//!
//! Threat: a third-party plugin (a foreign bundle's, an unattested
//! toolkit's) registered at `os_process` ran in the caller's process when
//! called as a plugin; the tier held only for command runs.

use super::Engine;
use super::os_process::CHILD_GRACE;
use crate::commands::frames::{self, Verdict};
use crate::commands::{CommandError, Entry};
use crate::engine::shell::LineOptions;
use std::process::Stdio;
use tokio::io::AsyncWriteExt;

impl Engine {
    /// Calls the plugin registered as `entry` with `input` in a child
    /// `wbx`, under `opts`, as instance `id`: its `ok` or `err` text.
    pub async fn call_plugin_in_child(
        &self,
        entry: &Entry,
        input: &str,
        id: &str,
        opts: &LineOptions,
    ) -> Result<Result<String, String>, CommandError> {
        let wbx = self.wbx_binary().ok_or_else(|| {
            CommandError::Refused(format!(
                "`{}` is registered at os_process, and this engine has no wbx binary to start (EngineBuilder::wbx_binary)",
                entry.name
            ))
        })?;
        let mut cmd = tokio::process::Command::new(wbx);
        // The child looks the name up in the registry, never a file of
        // that name where it runs, and calls only the bytes registered
        // here; it serves the same brokers and stubs as this engine.
        cmd.arg("--home")
            .arg(self.home())
            .arg("call")
            .arg("--framed")
            .arg(format!("--registered-sha256={}", entry.sha256))
            .arg("--input")
            .arg("-")
            .arg(format!("--id={id}"))
            .arg(format!("--profile={}", opts.profile))
            .arg(format!("--tenant={}", opts.tenant));
        if let Some(caps) = opts.caps {
            cmd.arg(format!("--caps={}", caps.words().join(",")));
        }
        if let Some(t) = opts.stage_timeout {
            cmd.arg(format!("--timeout={}", t.as_millis()));
        }
        if let Some(fuel) = opts.stage_fuel {
            cmd.arg(format!("--fuel={fuel}"));
        }
        if let Some(bytes) = opts.stage_memory {
            cmd.arg(format!("--memory={}", (bytes >> 20).max(1)));
        }
        for (name, value) in &opts.env {
            cmd.arg(format!("--env={name}={value}"));
        }
        let brokers = self.replaced_broker_files().map_err(|e| {
            CommandError::Refused(format!("cannot pass a replaced broker to a child: {e}"))
        })?;
        for (cap, file) in brokers {
            cmd.arg(format!("--broker={cap}={}", file.display()));
        }
        for stub in self.stubs().iter() {
            cmd.arg(format!("--stub={stub}"));
        }
        for dir in &opts.dirs {
            cmd.arg(super::os_process::dir_flag(dir)?);
        }
        cmd.arg(&entry.name)
            .current_dir("/")
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        // The child shares this engine's home, its cache and the key
        // sealing it.
        if let Some(dir) = self.state_dir() {
            cmd.env(crate::seal::STATE_DIR_ENV, dir);
        }
        if let Some(dir) = self.cache_dir() {
            cmd.env(workbooks_wire::home::CACHE_DIR_ENV, dir);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| CommandError::Refused(format!("cannot start {}: {e}", wbx.display())))?;
        if let Some(mut pipe) = child.stdin.take() {
            let input = input.as_bytes().to_vec();
            tokio::spawn(async move {
                let _ = pipe.write_all(&input).await;
            });
        }
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| CommandError::Refused("child wbx has no stdout".into()))?;
        let budget = opts.stage_timeout.unwrap_or_else(|| {
            crate::policy::Profile::parse(&opts.profile)
                .map_or(crate::commands::COMMAND_TIMEOUT, |p| p.timeout())
        });
        let received = tokio::time::timeout(budget + CHILD_GRACE, frames::read(stdout))
            .await
            .map_err(|_| CommandError::Timeout(budget))?
            .map_err(|e| CommandError::Refused(format!("child wbx: {e}")))?;
        let _ = child.wait().await;
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        match received.verdict {
            Some(Verdict::Exit(0)) => Ok(Ok(text(&received.stdout))),
            Some(Verdict::Exit(_)) => Ok(Err(text(&received.stderr))),
            Some(Verdict::Failed(e)) => Err(e),
            None => Err(CommandError::Refused(
                "child wbx ended without a verdict".into(),
            )),
        }
    }
}
