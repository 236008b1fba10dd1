//! The system calls a container-tier child may make: the ones a `wbx exec
//! --framed` child makes, and nothing else; every other call fails with
//! `EPERM` before the kernel looks at it. Read off `strace -f` of children
//! running kv, vfs, queue (a waiting pop), secrets, exec (spawn, wait,
//! kill), run-command, a fan-out, a preopened directory, a preview 1
//! module, a memory bomb and a runaway loop stopped at its deadline; the
//! file calls a guest's writes into a preopen make are added, as are
//! `bubblewrap`'s own after it loads the filters (`execve`, its init's
//! `wait4`).
//!
//! Left out on purpose, because escaped native code would use them and the
//! child never does: `memfd_create` (a file in memory no limit counts; the
//! child is handed its code and makes none), `socket` and `connect` (the child has one socket, its
//! relay, inherited already connected), `unshare`, `setns`, `mount`,
//! `pivot_root`, `chroot`, every `io_uring` call, `ptrace`,
//! `process_vm_readv`/`writev`, `bpf`, `perf_event_open`, `userfaultfd`,
//! `keyctl`, `add_key`, `kexec_*`, `personality`, handle-based opens, and
//! every way to make a process (`fork`, `vfork`, and `clone` without
//! `CLONE_THREAD`; see [`super::ceilings`] for `clone3` and for threads).

/// Allowed whatever their arguments, on every architecture the container
/// tier confines (the numbers differ; the names are the same).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const COMMON: &[i64] = &[
    libc::SYS_read,
    libc::SYS_write,
    libc::SYS_readv,
    libc::SYS_writev,
    libc::SYS_pread64,
    libc::SYS_pwrite64,
    libc::SYS_preadv,
    libc::SYS_pwritev,
    libc::SYS_close,
    libc::SYS_fstat,
    libc::SYS_newfstatat,
    libc::SYS_statx,
    libc::SYS_statfs,
    libc::SYS_fstatfs,
    libc::SYS_lseek,
    libc::SYS_mprotect,
    libc::SYS_munmap,
    libc::SYS_mremap,
    libc::SYS_madvise,
    libc::SYS_mincore,
    libc::SYS_brk,
    libc::SYS_rt_sigaction,
    libc::SYS_rt_sigprocmask,
    libc::SYS_rt_sigreturn,
    libc::SYS_sigaltstack,
    libc::SYS_ioctl,
    libc::SYS_faccessat,
    libc::SYS_faccessat2,
    libc::SYS_openat,
    libc::SYS_openat2,
    libc::SYS_execve,
    libc::SYS_set_tid_address,
    libc::SYS_set_robust_list,
    libc::SYS_get_robust_list,
    libc::SYS_rseq,
    libc::SYS_prlimit64,
    libc::SYS_getrlimit,
    libc::SYS_getrandom,
    libc::SYS_futex,
    libc::SYS_clone3,
    libc::SYS_exit,
    libc::SYS_exit_group,
    libc::SYS_wait4,
    libc::SYS_waitid,
    libc::SYS_sched_getaffinity,
    libc::SYS_sched_yield,
    libc::SYS_getpid,
    libc::SYS_getppid,
    libc::SYS_gettid,
    libc::SYS_getuid,
    libc::SYS_geteuid,
    libc::SYS_getgid,
    libc::SYS_getegid,
    libc::SYS_uname,
    libc::SYS_clock_gettime,
    libc::SYS_clock_getres,
    libc::SYS_gettimeofday,
    libc::SYS_clock_nanosleep,
    libc::SYS_nanosleep,
    libc::SYS_epoll_create1,
    libc::SYS_epoll_ctl,
    libc::SYS_epoll_pwait,
    libc::SYS_eventfd2,
    libc::SYS_ppoll,
    libc::SYS_pipe2,
    libc::SYS_fcntl,
    libc::SYS_dup,
    libc::SYS_dup3,
    libc::SYS_getcwd,
    libc::SYS_readlinkat,
    libc::SYS_getdents64,
    libc::SYS_mkdirat,
    libc::SYS_unlinkat,
    libc::SYS_renameat,
    libc::SYS_renameat2,
    libc::SYS_symlinkat,
    libc::SYS_linkat,
    libc::SYS_fsync,
    libc::SYS_fdatasync,
    libc::SYS_ftruncate,
    libc::SYS_fallocate,
    libc::SYS_utimensat,
    libc::SYS_fchmod,
    libc::SYS_fchmodat,
    libc::SYS_recvfrom,
    libc::SYS_sendto,
    libc::SYS_membarrier,
    libc::SYS_seccomp,
    libc::SYS_restart_syscall,
    libc::SYS_tgkill,
    libc::SYS_sched_getparam,
    libc::SYS_sched_getscheduler,
];

/// x86-64's own: the older calls its C library still makes.
#[cfg(target_arch = "x86_64")]
const ARCH: &[i64] = &[
    libc::SYS_stat,
    libc::SYS_lstat,
    libc::SYS_access,
    libc::SYS_open,
    libc::SYS_arch_prctl,
    libc::SYS_epoll_wait,
    libc::SYS_poll,
    libc::SYS_dup2,
    libc::SYS_readlink,
];

/// aarch64's own: none (it has no legacy calls).
#[cfg(target_arch = "aarch64")]
const ARCH: &[i64] = &[];

/// Allowed whatever their arguments.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
pub(crate) fn allowed() -> impl Iterator<Item = i64> {
    COMMON.iter().chain(ARCH).copied()
}

/// No list is written for any other architecture: a container cannot be
/// confined there and is refused.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
pub(crate) fn allowed() -> impl Iterator<Item = i64> {
    std::iter::empty()
}

/// `socketpair`, allowed only for `AF_UNIX`: the runtime makes one for its
/// signal driver; a pair reaches nothing but itself.
pub(crate) const SOCKETPAIR: i64 = libc::SYS_socketpair;

/// `mmap`, allowed only without `MAP_SHARED`: every mapping the child
/// makes is private, so `RLIMIT_DATA` counts every writable page of it. A
/// shared anonymous mapping would be memory no limit counts.
pub(crate) const MMAP: i64 = libc::SYS_mmap;

/// `clone`, allowed only with `CLONE_THREAD` (a thread, not a process).
pub(crate) const CLONE: i64 = libc::SYS_clone;

/// `prctl`, allowed only for these operations: naming a thread (the
/// runtime names its threads), reading a name back, and
/// `PR_SET_NO_NEW_PRIVS` (set already; setting it again changes nothing).
pub(crate) const PRCTL: i64 = libc::SYS_prctl;
pub(crate) const PRCTL_ALLOWED: [u64; 3] = [
    libc::PR_SET_NAME as u64,
    libc::PR_GET_NAME as u64,
    libc::PR_SET_NO_NEW_PRIVS as u64,
];
