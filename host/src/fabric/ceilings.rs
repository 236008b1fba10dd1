//! OS ceilings for the container tier: what still bounds a child `wbx`
//! inside bubblewrap if the code in it misbehaves (a host bug, or a guest
//! that escaped the wasm sandbox into the child process).
//!
//! The wasm limits (memory cap, fuel, epoch deadline) bound the guest; the
//! ceilings here bound the whole child process, as the kernel enforces
//! them, and are set in the forked child before bubblewrap starts, so they
//! hold for everything bubblewrap then runs:
//!
//! - **memory**: `RLIMIT_DATA`, the private writable memory the child may
//!   map. Wasmtime reserves linear memory inaccessible and makes it
//!   writable as it grows; the kernel counts that step against this limit
//!   (it refuses the `mprotect`), so a growth past the ceiling fails as
//!   `Cannot allocate memory` however the guest got there. `RLIMIT_AS`
//!   would not do: it counts wasmtime's multi-GiB address reservations.
//!   Root is not exempt from it.
//! - **processes**: a seccomp filter (passed to bubblewrap's `--seccomp`)
//!   refuses every way to make a new process: `fork`, `vfork`, and `clone`
//!   without `CLONE_THREAD`, with `EPERM`; `clone3` with `ENOSYS`, so the C
//!   library falls back to `clone`, whose flags the filter can read. Threads
//!   stay possible; only the child's own runtime makes them. A pids count
//!   would not do where it matters most: root is exempt from
//!   `RLIMIT_NPROC`, and a pids cgroup needs a writable hierarchy, which an
//!   unprivileged user rarely has. A filter for another architecture, or an
//!   x32 system call on x86-64, kills the process.
//! - **CPU**: `RLIMIT_CPU`, seconds of CPU time: `SIGXCPU`, then `SIGKILL`
//!   a second later. The parent also stops the child on wall time; this
//!   holds even if the parent is gone.

use super::{CONTAINER_CPU_FACTOR, CONTAINER_DATA_HEADROOM_BYTES};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Duration;

/// The descriptor number bubblewrap reads the seccomp program from.
const SECCOMP_FD: i32 = 3;

/// The ceilings one child runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ceilings {
    /// `RLIMIT_DATA`, in bytes.
    pub data_bytes: u64,
    /// `RLIMIT_CPU`, in seconds (the hard limit is one more).
    pub cpu_seconds: u64,
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
        }
    }

    /// Puts `cmd` (a `bwrap` about to be given its command) under these
    /// ceilings: adds `--seccomp`, and sets the limits in the forked child.
    /// The returned descriptor must live until `cmd` has been spawned.
    pub(crate) fn confine(&self, cmd: &mut tokio::process::Command) -> io::Result<OwnedFd> {
        let program = no_new_processes()?;
        cmd.arg("--seccomp").arg(SECCOMP_FD.to_string());
        let fd = program.as_raw_fd();
        let limits = *self;
        #[expect(
            unsafe_code,
            reason = "pre_exec: only async-signal-safe calls (dup2, fcntl, setrlimit) run between fork and exec"
        )]
        unsafe {
            cmd.pre_exec(move || limits.set_in_child(fd));
        }
        Ok(program)
    }

    /// Runs in the forked child: moves the program to [`SECCOMP_FD`]
    /// (without close-on-exec) and sets the limits.
    fn set_in_child(&self, fd: i32) -> io::Result<()> {
        let ok = |rc: i32| {
            if rc < 0 {
                Err(io::Error::last_os_error())
            } else {
                Ok(())
            }
        };
        #[expect(
            unsafe_code,
            reason = "plain system calls on descriptors and limits this child owns"
        )]
        unsafe {
            if fd == SECCOMP_FD {
                ok(libc::fcntl(fd, libc::F_SETFD, 0))?;
            } else {
                ok(libc::dup2(fd, SECCOMP_FD))?;
            }
            let data = libc::rlimit {
                rlim_cur: self.data_bytes as libc::rlim_t,
                rlim_max: self.data_bytes as libc::rlim_t,
            };
            ok(libc::setrlimit(libc::RLIMIT_DATA, &data))?;
            let cpu = libc::rlimit {
                rlim_cur: self.cpu_seconds as libc::rlim_t,
                rlim_max: self.cpu_seconds.saturating_add(1) as libc::rlim_t,
            };
            ok(libc::setrlimit(libc::RLIMIT_CPU, &cpu))
        }
    }
}

/// The filter as bubblewrap wants it: a pipe whose read end holds the raw
/// `sock_filter` array.
fn no_new_processes() -> io::Result<OwnedFd> {
    if !FILTERED_ARCH {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "no seccomp filter is written for this architecture",
        ));
    }
    let bytes: Vec<u8> = filter()
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
    // A few hundred bytes: well inside the pipe's buffer, so this cannot
    // block before bubblewrap reads it.
    io::Write::write_all(&mut std::fs::File::from(write), &bytes)?;
    Ok(read)
}

/// One classic-BPF instruction (`struct sock_filter`).
#[derive(Debug, Clone, Copy)]
struct Op {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

const LOAD_WORD: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JUMP_EQ: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JUMP_GE: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const JUMP_SET: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const RETURN: u16 = 0x06; // BPF_RET | BPF_K

const RET_KILL_PROCESS: u32 = 0x8000_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const RET_ALLOW: u32 = 0x7fff_0000;

/// Offsets in `struct seccomp_data`.
const NR: u32 = 0;
const ARCH: u32 = 4;
const ARG0_LOW: u32 = 16;

const CLONE_THREAD: u32 = 0x0001_0000;
const CLONE3: u32 = 435;

#[cfg(target_arch = "x86_64")]
mod arch {
    pub const AUDIT_ARCH: u32 = 0xc000_003e;
    pub const CLONE: u32 = 56;
    /// `fork`, `vfork`.
    pub const FORKS: &[u32] = &[57, 58];
    /// Numbers at or above this are the x32 ABI's.
    pub const X32_BIT: Option<u32> = Some(0x4000_0000);
}

#[cfg(target_arch = "aarch64")]
mod arch {
    pub const AUDIT_ARCH: u32 = 0xc000_00b7;
    pub const CLONE: u32 = 220;
    pub const FORKS: &[u32] = &[];
    pub const X32_BIT: Option<u32> = None;
}

/// Any other architecture: no filter is written for it, so a container
/// cannot be confined and is refused (see [`no_new_processes`]).
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod arch {
    pub const AUDIT_ARCH: u32 = 0;
    pub const CLONE: u32 = u32::MAX;
    pub const FORKS: &[u32] = &[];
    pub const X32_BIT: Option<u32> = None;
}

/// Whether this architecture has a filter.
const FILTERED_ARCH: bool = cfg!(any(target_arch = "x86_64", target_arch = "aarch64"));

/// Where a jump lands: one of the three returns at the program's end.
#[derive(Clone, Copy)]
enum To {
    Next,
    Allow,
    Deny,
    NoSys,
    Kill,
}

/// The program: check the architecture, refuse the process-making calls,
/// allow everything else. A wrong architecture or an x32 call is killed,
/// not refused: its numbers mean other calls.
fn filter() -> Vec<Op> {
    let mut body: Vec<(u16, To, To, u32)> = vec![
        (LOAD_WORD, To::Next, To::Next, ARCH),
        (JUMP_EQ, To::Next, To::Kill, arch::AUDIT_ARCH),
        (LOAD_WORD, To::Next, To::Next, NR),
    ];
    if let Some(x32) = arch::X32_BIT {
        body.push((JUMP_GE, To::Kill, To::Next, x32));
    }
    for &nr in arch::FORKS {
        body.push((JUMP_EQ, To::Deny, To::Next, nr));
    }
    body.push((JUMP_EQ, To::NoSys, To::Next, CLONE3));
    body.push((JUMP_EQ, To::Next, To::Allow, arch::CLONE));
    body.push((LOAD_WORD, To::Next, To::Next, ARG0_LOW));
    body.push((JUMP_SET, To::Allow, To::Deny, CLONE_THREAD));
    let end = body.len();
    let target = |to: To, at: usize| -> u8 {
        let land = match to {
            To::Next => at + 1,
            To::Allow => end,
            To::Deny => end + 1,
            To::NoSys => end + 2,
            To::Kill => end + 3,
        };
        (land - at - 1) as u8
    };
    let mut ops: Vec<Op> = body
        .iter()
        .enumerate()
        .map(|(at, &(code, jt, jf, k))| Op {
            code,
            jt: target(jt, at),
            jf: target(jf, at),
            k,
        })
        .collect();
    for k in [
        RET_ALLOW,
        RET_ERRNO | libc::EPERM as u32,
        RET_ERRNO | libc::ENOSYS as u32,
        RET_KILL_PROCESS,
    ] {
        ops.push(Op {
            code: RETURN,
            jt: 0,
            jf: 0,
            k,
        });
    }
    ops
}

#[cfg(test)]
#[path = "ceilings_tests.rs"]
mod tests;
