//! A command run once for a parent: from its stored file (`os_process`)
//! or from the code the parent handed over (`container`).

use super::{Answer, ChildRequest, Handed, refused};
use crate::commands::CommandError;
use crate::commands::frames::Verdict;
use crate::state::{Output, SessionOptions, Stdin};
use std::os::fd::OwnedFd;
use std::path::Path;

/// Runs the command at `file`, which must hash to `sha256`, on `args`.
pub(super) fn exec(
    request: &ChildRequest,
    file: &Path,
    sha256: &str,
    args: &[String],
    handed: Option<&Handed>,
) -> Result<Answer, CommandError> {
    let grant = super::grant(request)?;
    let env = super::env(request)?;
    let relay = handed.map(|h| inherited(h.relay_fd)).transpose()?;
    let engine = super::engine(request, |mut b| {
        if let Some(handed) = handed {
            // Nothing is compiled here, nor written to this child's home.
            b = b.handed(handed.handoff.clone()).disk_cache(false);
        }
        if let Some(channel) = relay {
            b = b
                .relayed(channel)
                .map_err(|e| refused(format!("engine: the relay: {e}")))?;
        }
        Ok(b)
    })?;
    let artifact = engine.load_artifact(file).map_err(refused)?;
    if artifact.sha256_hex() != sha256.to_ascii_lowercase() {
        return Err(CommandError::Integrity(format!(
            "{} does not match sha256 {sha256}",
            file.display()
        )));
    }
    let docked = engine.dock(&artifact, &grant).map_err(refused)?;
    let mut opts = SessionOptions::new(request.id.clone(), request.tenant.clone());
    opts.args = args.to_vec();
    opts.env = env;
    opts.stdin = Stdin::Inherit;
    let contained = handed.is_some();
    if contained {
        // Read whole now: the host's stdin reader is a thread of its own.
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(
            &mut std::io::Read::take(
                std::io::stdin().lock(),
                crate::limits::MAX_STDIN_BYTES as u64 + 1,
            ),
            &mut bytes,
        )
        .map_err(|e| refused(format!("engine: stdin: {e}")))?;
        opts.stdin = Stdin::Bytes(bytes.into());
    }
    opts.stdout = Output::Capture;
    opts.stderr = Output::Capture;
    opts.dirs = super::dirs(request);
    opts.scope = super::scope(request, &engine)?;
    // One guest, one thread: its file calls need not hop to a pool.
    opts.inline_file_io = true;
    opts.timeout = request.timeout_ms.map(std::time::Duration::from_millis);
    opts.fuel = Some(request.fuel.unwrap_or(crate::limits::COMMAND_FUEL));
    opts.memory = request.memory;
    let runtime = super::runtime()?;
    if contained {
        // One blocking thread made now and kept, for whatever the guest's
        // calls hand the blocking pool; then no thread or process more.
        runtime
            .block_on(async { tokio::task::spawn_blocking(|| ()).await })
            .map_err(|e| refused(format!("engine: {e}")))?;
        crate::tier::forbid_new_threads()
            .map_err(|e| refused(format!("engine: cannot forbid new threads: {e}")))?;
    }
    let ran = runtime.block_on(engine.run(&docked, opts));
    // Denials coalesced in memory reach the audit file before the answer.
    engine.cadence().audit().flush();
    let out = ran.map_err(CommandError::from)?;
    Ok((out.stdout, out.stderr, Verdict::Exit(out.exit_code)))
}

/// The socket the parent left at descriptor `fd`.
fn inherited(fd: i32) -> Result<OwnedFd, CommandError> {
    use std::os::fd::FromRawFd as _;
    let refused = || {
        refused(format!(
            "the relay: no socket was handed at descriptor {fd}"
        ))
    };
    if fd < 3 {
        return Err(refused());
    }
    #[expect(
        unsafe_code,
        reason = "fcntl reads the descriptor's flags; nothing else in this process owns it"
    )]
    let open = unsafe { libc::fcntl(fd, libc::F_GETFD) } >= 0;
    if !open {
        return Err(refused());
    }
    #[expect(
        unsafe_code,
        reason = "the descriptor is open and this process's only owner of it is this call"
    )]
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}
