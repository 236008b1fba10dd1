//! OS ceilings for the container tier: what still bounds a child `wbx`
//! inside bubblewrap if the code in it misbehaves (a host bug, or a guest
//! that escaped the wasm sandbox into the child process).
//!
//! The wasm limits (memory cap, fuel, epoch deadline) bound the guest; the
//! ceilings here bound the whole child process, as the kernel enforces
//! them. The limits are set in the forked child before bubblewrap starts
//! and the filters are loaded by bubblewrap just before it starts the
//! child, so they hold for everything the child then runs:
//!
//! - **system calls**: two seccomp programs, made with `seccompiler`. The
//!   first allows only the calls a child `wbx` makes ([`super::syscalls`]);
//!   every other call fails with `EPERM`, and `clone` only makes threads
//!   (`CLONE_THREAD` set): `fork`, `vfork` and a process-making `clone` are
//!   refused. The second makes `clone3` fail with `ENOSYS`, so the C
//!   library falls back to `clone`, whose flags the first can read. A call
//!   of another architecture (or an x32 call on x86-64) kills the process.
//! - **threads**: the child makes the threads it needs while it starts
//!   (the runtime's, the epoch ticker, the relay's reader, the grant pipe's reader), then, before
//!   its guest runs, adds a filter of its own ([`forbid_new_threads`]):
//!   every `clone` and `clone3` fails with `EAGAIN` from then on. Code that
//!   escaped the guest finds the thread count fixed. A count limit would
//!   not do where it matters most: root is exempt from `RLIMIT_NPROC`, and
//!   a pids cgroup needs a writable hierarchy, which an unprivileged user
//!   rarely has.
//! - **memory**: `RLIMIT_DATA`, the private writable memory the child may
//!   map. Wasmtime reserves linear memory inaccessible and makes it
//!   writable as it grows; the kernel counts that step against this limit
//!   (it refuses the `mprotect`), so a growth past the ceiling fails as
//!   `Cannot allocate memory` however the guest got there. `RLIMIT_AS`
//!   would not do: it counts wasmtime's multi-GiB address reservations.
//!   Root is not exempt from it.
//! - **CPU**: `RLIMIT_CPU`, seconds of CPU time: `SIGXCPU`, then `SIGKILL`
//!   a second later. The parent also stops the child on wall time; this
//!   holds even if the parent is gone.

use crate::limits::{CONTAINER_CPU_FACTOR, CONTAINER_DATA_HEADROOM_BYTES, CONTAINER_MAX_FILES};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// The descriptors bubblewrap reads the two seccomp programs from.
const FILTER_FDS: [i32; 2] = [3, 4];

/// The descriptor a child finds its relay socket at.
pub(crate) const RELAY_FD: i32 = 5;
/// The descriptor a child finds its handed compiled code at.
pub(crate) const CODE_FD: i32 = 6;
/// The descriptor a child finds its guest's bytes at.
pub(crate) const GUEST_FD: i32 = 7;
/// The descriptor a child reads its grant's changes from.
pub(crate) const SCOPE_FD: i32 = 8;

/// Descriptors moved into place in a child at most.
const MAX_MOVES: usize = 8;

/// The ceilings one child runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ceilings {
    /// `RLIMIT_DATA`, in bytes.
    pub data_bytes: u64,
    /// `RLIMIT_CPU`, in seconds (the hard limit is one more).
    pub cpu_seconds: u64,
    /// `RLIMIT_NOFILE`.
    pub files: u64,
}

impl Ceilings {
    /// The ceilings for a task whose guest may use `memory_cap` bytes and
    /// run for `wall` (its budget plus the child's start-up grace).
    pub(crate) fn for_task(memory_cap: usize, wall: Duration) -> Self {
        Ceilings {
            data_bytes: (memory_cap as u64).saturating_add(CONTAINER_DATA_HEADROOM_BYTES),
            cpu_seconds: wall
                .as_secs()
                .saturating_add(1)
                .saturating_mul(CONTAINER_CPU_FACTOR),
            files: CONTAINER_MAX_FILES,
        }
    }

    /// Puts `cmd` (a `bwrap` about to be given its command) under these
    /// ceilings (adds its seccomp programs, sets the limits in the forked
    /// child), and gives the child each of `handed` at its descriptor
    /// number. The returned descriptors must live until `cmd` has been
    /// spawned.
    pub(crate) fn confine(
        &self,
        cmd: &mut tokio::process::Command,
        handed: Vec<(OwnedFd, i32)>,
    ) -> io::Result<Vec<OwnedFd>> {
        // The allow-list last: bubblewrap loads each program with a
        // `prctl` that the allow-list itself refuses.
        let programs = [clone3_unsupported()?, allowed_calls()?];
        let mut keep = Vec::new();
        let mut moves = [(-1, -1); MAX_MOVES];
        let filters = programs.into_iter().zip(FILTER_FDS);
        for (i, (fd, target)) in filters.chain(handed).enumerate() {
            if i == MAX_MOVES {
                return Err(io::Error::other("too many descriptors for a child"));
            }
            moves[i] = (fd.as_raw_fd(), target);
            keep.push(fd);
        }
        for fd in FILTER_FDS {
            cmd.arg("--add-seccomp-fd").arg(fd.to_string());
        }
        let count = keep.len();
        let limits = *self;
        #[expect(
            unsafe_code,
            reason = "pre_exec: only async-signal-safe calls (fcntl, dup2, setrlimit) run between fork and exec"
        )]
        unsafe {
            cmd.pre_exec(move || limits.set_in_child(&moves[..count]));
        }
        Ok(keep)
    }

    /// Runs in the forked child: puts each descriptor at its number
    /// (without close-on-exec) and sets the limits.
    fn set_in_child(&self, moves: &[(i32, i32)]) -> io::Result<()> {
        move_in_child(moves)?;
        #[expect(unsafe_code, reason = "plain system calls on limits this child owns")]
        unsafe {
            let data = libc::rlimit {
                rlim_cur: self.data_bytes as libc::rlim_t,
                rlim_max: self.data_bytes as libc::rlim_t,
            };
            ok(libc::setrlimit(libc::RLIMIT_DATA, &data))?;
            let cpu = libc::rlimit {
                rlim_cur: self.cpu_seconds as libc::rlim_t,
                rlim_max: self.cpu_seconds.saturating_add(1) as libc::rlim_t,
            };
            ok(libc::setrlimit(libc::RLIMIT_CPU, &cpu))?;
            let files = libc::rlimit {
                rlim_cur: self.files as libc::rlim_t,
                rlim_max: self.files as libc::rlim_t,
            };
            ok(libc::setrlimit(libc::RLIMIT_NOFILE, &files)).map(|_| ())
        }
    }
}

/// This architecture, as `seccompiler` names it.
fn arch() -> io::Result<seccompiler::TargetArch> {
    if super::syscalls::allowed().next().is_none() {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "no system call list is written for this architecture",
        ));
    }
    std::env::consts::ARCH
        .try_into()
        .map_err(|e| io::Error::new(io::ErrorKind::Unsupported, format!("{e}")))
}

fn compiled(filter: seccompiler::SeccompFilter) -> io::Result<seccompiler::BpfProgram> {
    filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| io::Error::other(e.to_string()))
}

fn rule(
    arg: u8,
    op: seccompiler::SeccompCmpOp,
    value: u64,
) -> io::Result<seccompiler::SeccompRule> {
    let condition =
        seccompiler::SeccompCondition::new(arg, seccompiler::SeccompCmpArgLen::Qword, op, value)
            .map_err(|e| io::Error::other(e.to_string()))?;
    seccompiler::SeccompRule::new(vec![condition]).map_err(|e| io::Error::other(e.to_string()))
}

/// The allow-list: [`super::syscalls::allowed`], threads only from
/// `clone`, a few `prctl` operations; `EPERM` for anything else.
fn allowed_program() -> io::Result<seccompiler::BpfProgram> {
    use super::syscalls::{CLONE, MMAP, PRCTL, PRCTL_ALLOWED, SOCKETPAIR, allowed};
    use seccompiler::{SeccompAction, SeccompCmpOp, SeccompFilter};
    let mut rules: std::collections::BTreeMap<i64, Vec<seccompiler::SeccompRule>> =
        allowed().map(|nr| (nr, Vec::new())).collect();
    let thread = libc::CLONE_THREAD as u64;
    rules.insert(
        CLONE,
        vec![rule(0, SeccompCmpOp::MaskedEq(thread), thread)?],
    );
    let prctl = PRCTL_ALLOWED
        .iter()
        .map(|op| rule(0, SeccompCmpOp::Eq, *op))
        .collect::<io::Result<_>>()?;
    rules.insert(PRCTL, prctl);
    let shared = libc::MAP_SHARED as u64;
    rules.insert(MMAP, vec![rule(3, SeccompCmpOp::MaskedEq(shared), 0)?]);
    let unix = libc::AF_UNIX as u64;
    rules.insert(SOCKETPAIR, vec![rule(0, SeccompCmpOp::Eq, unix)?]);
    compiled(
        SeccompFilter::new(
            rules,
            SeccompAction::Errno(libc::EPERM as u32),
            SeccompAction::Allow,
            arch()?,
        )
        .map_err(|e| io::Error::other(e.to_string()))?,
    )
}

/// `clone3` fails with `ENOSYS` (its flags sit behind a pointer a filter
/// cannot read); everything else is left to the allow-list.
fn clone3_program() -> io::Result<seccompiler::BpfProgram> {
    use seccompiler::{SeccompAction, SeccompFilter};
    let rules = [(libc::SYS_clone3, Vec::new())].into_iter().collect();
    compiled(
        SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::ENOSYS as u32),
            arch()?,
        )
        .map_err(|e| io::Error::other(e.to_string()))?,
    )
}

/// Adds, to every thread of this process, a filter under which no thread
/// or process can be made any more: `clone`, `clone3`, `fork` and `vfork`
/// fail with `EAGAIN` (what a runtime reads as "no thread now", not as a
/// fault). A container-tier child calls it once it has started, before
/// its guest runs.
pub fn forbid_new_threads() -> io::Result<()> {
    use seccompiler::{SeccompAction, SeccompFilter};
    let mut calls = vec![libc::SYS_clone, libc::SYS_clone3];
    #[cfg(target_arch = "x86_64")]
    calls.extend([libc::SYS_fork, libc::SYS_vfork]);
    let rules = calls.into_iter().map(|nr| (nr, Vec::new())).collect();
    let program = compiled(
        SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(libc::EAGAIN as u32),
            arch()?,
        )
        .map_err(|e| io::Error::other(e.to_string()))?,
    )?;
    seccompiler::apply_filter_all_threads(&program).map_err(|e| io::Error::other(e.to_string()))
}

/// The allow-list as bubblewrap reads it.
fn allowed_calls() -> io::Result<OwnedFd> {
    piped(&allowed_program()?)
}

/// Gives a child started without ceilings (an `os_process` child) each
/// of `handed` at its descriptor number. The returned descriptors must
/// live until `cmd` has been spawned.
pub(crate) fn hand(
    cmd: &mut tokio::process::Command,
    handed: Vec<(OwnedFd, i32)>,
) -> io::Result<Vec<OwnedFd>> {
    if handed.len() > MAX_MOVES {
        return Err(io::Error::other("too many descriptors for a child"));
    }
    let mut moves = [(-1, -1); MAX_MOVES];
    let mut keep = Vec::new();
    for (i, (fd, target)) in handed.into_iter().enumerate() {
        moves[i] = (fd.as_raw_fd(), target);
        keep.push(fd);
    }
    let count = keep.len();
    #[expect(
        unsafe_code,
        reason = "pre_exec: only async-signal-safe calls (fcntl, dup2) run between fork and exec"
    )]
    unsafe {
        cmd.pre_exec(move || move_in_child(&moves[..count]));
    }
    Ok(keep)
}

/// A system call's return, as a result.
fn ok(rc: i32) -> io::Result<i32> {
    match rc < 0 {
        true => Err(io::Error::last_os_error()),
        false => Ok(rc),
    }
}

/// Runs in the forked child: puts each descriptor at its number, without
/// close-on-exec.
fn move_in_child(moves: &[(i32, i32)]) -> io::Result<()> {
    #[expect(
        unsafe_code,
        reason = "plain system calls on descriptors this child owns"
    )]
    unsafe {
        // First every source out of the way of every target (the copies
        // close on exec), then each into its place.
        let mut staged = [-1; MAX_MOVES];
        for (i, (from, _)) in moves.iter().enumerate() {
            staged[i] = ok(libc::fcntl(*from, libc::F_DUPFD_CLOEXEC, 64))?;
        }
        for (i, (_, to)) in moves.iter().enumerate() {
            ok(libc::dup2(staged[i], *to))?;
        }
    }
    Ok(())
}

/// The `clone3` program as bubblewrap reads it.
fn clone3_unsupported() -> io::Result<OwnedFd> {
    piped(&clone3_program()?)
}

/// A program as bubblewrap wants it: a pipe whose read end holds the raw
/// `sock_filter` array.
fn piped(program: &seccompiler::BpfProgram) -> io::Result<OwnedFd> {
    let bytes: Vec<u8> = program
        .iter()
        .flat_map(|op| {
            let mut b = [0u8; 8];
            b[..2].copy_from_slice(&op.code.to_ne_bytes());
            b[2] = op.jt;
            b[3] = op.jf;
            b[4..].copy_from_slice(&op.k.to_ne_bytes());
            b
        })
        .collect();
    let mut fds = [0i32; 2];
    #[expect(unsafe_code, reason = "pipe2 fills the two descriptors it returns")]
    let (read, write) = unsafe {
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) < 0 {
            return Err(io::Error::last_os_error());
        }
        (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1]))
    };
    // A few kilobytes at most: inside the pipe's buffer, so this cannot
    // block before bubblewrap reads it.
    io::Write::write_all(&mut std::fs::File::from(write), &bytes)?;
    Ok(read)
}

#[cfg(test)]
#[path = "ceilings_tests.rs"]
mod tests;
