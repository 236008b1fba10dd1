//! A registered plugin called at its registered tier: one registered at
//! `os_process` is started and called in a child process (the tiers' one
//! request, [`workbooks_wire::child`], naming the plugin), not in this process, whichever lane asks (`wbx call NAME`, an MCP
//! plugin tool). The child answers in frames ([`crate::commands::frames`]):
//! the plugin's `ok` text on the stdout frame, its `err` text on the
//! stderr frame, and the verdict (exit 0 or 1, or the engine's refusal).
//!
//! Threat: a third-party plugin (a foreign bundle's, an unattested
//! toolkit's) registered at `os_process` ran in the caller's process when
//! called as a plugin; the tier held only for command runs.

use super::Commands;
use super::feed_pipe::FeedPipe;
use super::os_process::{CHILD_GRACE, broker_words, cap_words, child_dirs, millis, stub_words};
use crate::commands::frames::{self, Verdict};
use crate::commands::{CommandError, Entry};
use crate::engine::shell::LineOptions;
use std::process::Stdio;
use workbooks_wire::child::{CHILD_PROTOCOL, ChildJob, ChildRequest};

impl Commands<'_> {
    /// Calls the plugin registered as `entry` with `input` in a child
    /// `wbx`, under `opts`, as instance `id`: its `ok` or `err` text.
    pub async fn call_plugin_in_child(
        self,
        entry: &Entry,
        input: &str,
        id: &str,
        opts: &LineOptions,
    ) -> Result<Result<String, String>, CommandError> {
        let child_bin = self.engine.child_binary().ok_or_else(|| {
            CommandError::Refused(format!(
                "`{}` is registered at os_process, and this engine has no child binary to start (EngineBuilder::child_binary)",
                entry.name
            ))
        })?;
        // The child looks the name up in the registry, never a file of
        // that name where it runs, and calls only the bytes registered
        // here; it serves the same brokers and stubs as this engine.
        let brokers = self.engine.replaced_broker_files().map_err(|e| {
            CommandError::Refused(format!("cannot pass a replaced broker to a child: {e}"))
        })?;
        let scope_live = opts
            .scope
            .as_ref()
            .is_some_and(crate::grants::Scope::is_live);
        let request = ChildRequest {
            protocol: CHILD_PROTOCOL,
            home: self.engine.home().to_path_buf(),
            job: ChildJob::Call {
                name: entry.name.clone(),
                sha256: entry.sha256.clone(),
            },
            profile: opts.profile.clone(),
            caps: opts.caps.map(cap_words),
            tenant: opts.tenant.clone(),
            id: id.to_string(),
            timeout_ms: opts.stage_timeout.map(millis),
            fuel: opts.stage_fuel,
            memory: opts.stage_memory,
            env: opts.env.clone(),
            brokers: broker_words(&brokers),
            stubs: stub_words(self.engine.stubs()),
            dirs: child_dirs(&opts.dirs),
            home_shares: self.engine.home_shares(),
            scope: opts
                .scope
                .as_ref()
                .map(crate::grants::Scope::snapshot)
                .transpose()
                .map_err(|e| CommandError::Refused(e.to_string()))?,
            // It shares this engine's home: it reads a stored grant as it is
            // now (a view held fixed stays fixed); a grant fed to this
            // engine (a node worker's) is sent on to it.
            scope_live,
            scope_feed_fd: super::feed_pipe::feed_fd(opts.scope.as_ref(), scope_live),
        };
        // The child shares this engine's home, its cache and the key
        // sealing it; the request, then the input, on its stdin.
        let mut cmd = tokio::process::Command::new(child_bin);
        cmd.current_dir("/");
        let (keep, feed) = FeedPipe::hand_to(&mut cmd, opts.scope.as_ref(), &request)?;
        let input = bytes::Bytes::copy_from_slice(input.as_bytes());
        let mut child =
            self.engine
                .start_child(cmd, child_bin, &request, input, true, Stdio::null())?;
        drop(keep);
        let stdout = child
            .stdout
            .take()
            .ok_or_else(|| CommandError::Refused("the child has no stdout".into()))?;
        let budget = opts.stage_timeout.unwrap_or_else(|| {
            crate::policy::Profile::parse(&opts.profile)
                .map_or(crate::commands::COMMAND_TIMEOUT, |p| p.timeout())
        });
        // The grant's changes are sent while the child answers.
        let feeding = async {
            if let Some(feed) = feed {
                feed.send().await;
            }
            std::future::pending::<()>().await
        };
        let answered = async {
            tokio::select! {
                read = frames::read(stdout) => read,
                () = feeding => unreachable!("feeding never ends by itself"),
            }
        };
        let received = tokio::time::timeout(budget + CHILD_GRACE, answered)
            .await
            .map_err(|_| CommandError::Timeout(budget))?
            .map_err(|e| CommandError::Refused(format!("the child: {e}")))?;
        let _ = child.wait().await;
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        match received.verdict {
            Some(Verdict::Exit(0)) => Ok(Ok(text(&received.stdout))),
            Some(Verdict::Exit(_)) => Ok(Err(text(&received.stderr))),
            Some(Verdict::Failed(e)) => Err(e),
            None => Err(CommandError::Refused(
                "the child ended without a verdict".into(),
            )),
        }
    }
}
