//! The child's half of the tiers' one protocol: [`run`] reads a
//! [`ChildRequest`] from stdin, runs the command or calls the plugin it
//! names, and answers on stdout in [`crate::commands::frames`].
//!
//! Serves: the `os_process` and `container` tiers (`engine/os_process.rs`,
//! `engine/container.rs`, `engine/plugin_child.rs`), which start a child
//! binary with [`CHILD_ARGV`] and write it the request. Any binary whose
//! `main` calls [`run`] when started so is a child: `wbx`, and the core's
//! own `workbooks-child`, which an embedder without `wbx` ships instead
//! (`EngineBuilder::child_binary`).
//!
//! Invariant: the guest never writes this process's stdout; its two
//! streams are captured and framed, then the verdict, so nothing it prints
//! passes for the engine's word. A request this build cannot read (another
//! protocol, an unknown field) is answered with a refusal naming why, and
//! nothing runs.

mod call;
mod exec;

use crate::commands::CommandError;
use crate::commands::frames::Verdict;
use crate::engine::{Engine, EngineBuilder};
use crate::policy::{Cap, CapSet, Grant, Profile, Stubs};
use crate::preopen::Preopen;
use bytes::Bytes;
use std::os::fd::AsFd as _;
pub use workbooks_wire::child::{
    CHILD_ARGV, CHILD_PROTOCOL, CHILD_REQUEST, ChildDir, ChildJob, ChildRequest, ChildRequestError,
    Handed,
};

/// The exit code of a child that could not write its answer (the
/// engine's own failure code).
const UNANSWERED: u8 = workbooks_wire::ENGINE_EXIT;

/// Whether a process's arguments (after its name) are [`CHILD_ARGV`]:
/// a tier started it, and [`run`] is all it should do.
pub fn started_as_child<A: AsRef<std::ffi::OsStr>>(args: &[A]) -> bool {
    args.iter()
        .map(AsRef::as_ref)
        .eq(CHILD_ARGV.map(std::ffi::OsStr::new))
}

/// Reads the request on stdin, carries it out and writes the answer on
/// stdout: the child's whole life. Returns the process's exit code: 0
/// once an answer is written (the verdict carries how the run went).
pub fn run() -> u8 {
    // The request is read from a duplicate of stdin, unbuffered, so not
    // one byte past it is taken from the guest's stdin.
    let request = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map_err(ChildRequestError::Read)
        .and_then(|fd| ChildRequest::read(&mut std::fs::File::from(fd)));
    let (stdout, stderr, verdict) = match request {
        Err(e) => (
            Bytes::new(),
            Bytes::new(),
            Verdict::Failed(CommandError::Refused(e.to_string())),
        ),
        Ok(request) => carry_out(&request),
    };
    let mut out = std::io::stdout().lock();
    match workbooks_wire::child::write_answer(&mut out, &stdout, &stderr, &verdict) {
        Ok(()) => 0,
        Err(_) => UNANSWERED,
    }
}

/// What the guest wrote on its two streams, and the verdict.
type Answer = (Bytes, Bytes, Verdict);

fn carry_out(request: &ChildRequest) -> Answer {
    let answer = match &request.job {
        ChildJob::Exec {
            file,
            sha256,
            args,
            handed,
        } => exec::exec(request, file, sha256, args, handed.as_ref()),
        ChildJob::Call { name, sha256 } => call::call(request, name, sha256),
    };
    answer.unwrap_or_else(|e| (Bytes::new(), Bytes::new(), Verdict::Failed(e)))
}

/// A refusal before anything ran.
fn refused(what: impl std::fmt::Display) -> CommandError {
    CommandError::Refused(what.to_string())
}

/// The grant the request names.
fn grant(request: &ChildRequest) -> Result<Grant, CommandError> {
    let profile = Profile::parse(&request.profile).map_err(refused)?;
    match &request.caps {
        None => Ok(Grant::profile(profile.name())),
        Some(words) => CapSet::parse(&words.join(","))
            .and_then(|caps| Grant::narrowed(profile.name(), caps))
            .map_err(refused),
    }
}

/// The preopens the request names, as the parent granted them.
fn dirs(request: &ChildRequest) -> Vec<Preopen> {
    request
        .dirs
        .iter()
        .map(|d| Preopen {
            host: d.host.clone(),
            guest: d.guest.clone(),
            read_only: d.read_only,
        })
        .collect()
}

/// The guest's environment, checked as the parent's was.
fn env(request: &ChildRequest) -> Result<Vec<(String, String)>, CommandError> {
    crate::environ::check(&request.env).map_err(refused)?;
    Ok(request.env.clone())
}

/// An engine for the request: its home, its brokers and stubs, room for
/// its memory; `finish` adds what the job needs.
fn engine(
    request: &ChildRequest,
    finish: impl FnOnce(EngineBuilder) -> Result<EngineBuilder, CommandError>,
) -> Result<Engine, CommandError> {
    // On-demand allocation: one guest runs, and a pool's reservation
    // would not fit a contained child's address-space ceiling.
    let mut builder = Engine::builder().home(&request.home).pooling(false);
    if let Some(bytes) = request.memory {
        builder = builder.max_memory(bytes.max(Profile::Posix.memory_bytes()));
    }
    for (word, file) in &request.brokers {
        let cap = Cap::from_word(word).map_err(refused)?;
        let bytes = std::fs::read(file).map_err(|e| {
            refused(format!(
                "broker {word}: cannot read {}: {e}",
                file.display()
            ))
        })?;
        builder = builder.broker(cap, bytes);
    }
    for word in &request.stubs {
        for stub in Stubs::parse(word).map_err(refused)?.iter() {
            builder = builder.stub(stub);
        }
    }
    let engine = finish(builder)?
        .build()
        .map_err(|e| refused(format!("engine: {e}")))?;
    for pattern in &request.home_shares {
        engine.share_home(pattern).map_err(refused)?;
    }
    Ok(engine)
}

/// The grant's scopes the parent passed. A child that shares its parent's
/// home (`scope_live`) reads the grant they name from the home's grants at
/// every call, as its parent would, so a narrowing, an expiry or a
/// revocation made after it started reaches it; one handed a pipe of the
/// grant's changes (`scope_feed_fd`) takes each as it arrives; another
/// holds them as they were when it started (their expiry still holds). A grant of another
/// tenant, or a destination that cannot be read, refuses the run (never
/// runs it unscoped).
fn scope(
    request: &ChildRequest,
    engine: &Engine,
) -> Result<Option<crate::grants::Scope>, CommandError> {
    let Some(snapshot) = request.scope.clone() else {
        return Ok(None);
    };
    if request.scope_live
        && let Some(id) = &snapshot.grant
    {
        if let Some(record) = engine.grants().get(id)
            && record.tenant != request.tenant
        {
            return Err(refused(format!(
                "grant {id} is tenant {}'s, not {}'s",
                record.tenant, request.tenant
            )));
        }
        return Ok(Some(crate::grants::Scope::stored(
            engine.grants().clone(),
            id,
        )));
    }
    let scoped = crate::grants::Scoped::read(snapshot)
        .map_err(|e| refused(format!("the network scope: {e}")))?;
    match request.scope_feed_fd {
        None => Ok(Some(crate::grants::Scope::fixed(scoped))),
        // The parent sends each later change down a pipe.
        Some(fd) => {
            let feed = crate::grants::ScopeFeed::start(scoped);
            let pipe = handed_pipe(fd)?;
            let follower = feed.clone();
            std::thread::Builder::new()
                .name("grant-feed".into())
                // A line at a time: a small stack, within a container's
                // data ceiling.
                .stack_size(64 << 10)
                .spawn(move || crate::grants::follow_lines(pipe, &follower))
                .map_err(|e| refused(format!("the grant's pipe: {e}")))?;
            Ok(Some(crate::grants::Scope::fed(feed)))
        }
    }
}

/// The pipe the parent handed at `fd`, checked to be one: a request naming
/// stdio, or a descriptor that is not an open pipe, is refused rather than
/// read. It closes on exec, so no process the child starts holds it.
fn handed_pipe(fd: i32) -> Result<std::fs::File, CommandError> {
    use std::os::fd::FromRawFd;
    #[expect(
        unsafe_code,
        reason = "fstat of a descriptor number, then ownership of it once it is an open pipe the parent handed this process"
    )]
    unsafe {
        let mut stat: libc::stat = std::mem::zeroed();
        let is_pipe = fd > 2
            && libc::fstat(fd, &mut stat) == 0
            && stat.st_mode & libc::S_IFMT == libc::S_IFIFO
            && libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) == 0;
        match is_pipe {
            true => Ok(std::fs::File::from_raw_fd(fd)),
            false => Err(refused(format!(
                "the grant's pipe: descriptor {fd} is not an open pipe"
            ))),
        }
    }
}

/// A runtime on this thread, as one guest needs.
fn runtime() -> Result<tokio::runtime::Runtime, CommandError> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .thread_keep_alive(std::time::Duration::from_secs(24 * 3600))
        .build()
        .map_err(|e| refused(format!("engine: {e}")))
}

#[cfg(test)]
mod tests {
    use super::started_as_child;

    #[test]
    fn only_the_exact_child_line_is_taken_for_a_child() {
        assert!(started_as_child(&["exec", "--framed"]));
        for other in [
            &["exec", "--framed", "t.wasm"][..],
            &["exec"],
            &["--framed", "exec"],
            &["exec", "--framed=true"],
            &[],
        ] {
            assert!(!started_as_child(other), "{other:?}");
        }
    }
}
