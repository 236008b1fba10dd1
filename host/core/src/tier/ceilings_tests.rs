//! The ceilings tried from inside, as a child that escaped its guest would:
//! a native program (`tests/native/ceiling.c`, built here with the C
//! compiler) run in the same sandbox root, under the same filters and
//! limits, as a container-tier `wbx`, doing exactly what they forbid.

use super::*;
use crate::tier::TierEnv;
use crate::tier::root::{bubblewrap_args, root_for};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

const MIB: u64 = 1 << 20;

struct Outcome {
    status: std::process::ExitStatus,
    stdout: String,
    stderr: String,
}

/// `tests/native/ceiling.c`, compiled once for this run.
fn program() -> PathBuf {
    static BUILT: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let out = dir.path().join("ceiling");
            let src = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/native/ceiling.c");
            let built = std::process::Command::new("cc")
                .args(["-O1", "-pthread", "-o"])
                .arg(&out)
                .arg(src)
                .status()
                .expect("a C compiler (cc) builds the test's native program");
            assert!(built.success(), "cc failed on {src}");
            (dir, out)
        })
        .1
        .clone()
}

/// Runs the native program with `args` inside bubblewrap under `ceilings`.
async fn confined(ceilings: Ceilings, args: &[&str]) -> Outcome {
    let bwrap = TierEnv::find_bwrap().expect("bubblewrap is needed: apt-get install bubblewrap");
    let program = program();
    let root = root_for(&program).unwrap();
    let mut cmd = tokio::process::Command::new(bwrap);
    cmd.args(bubblewrap_args(&root, &program, &[], &[]));
    let keep = ceilings.confine(&mut cmd, Vec::new()).unwrap();
    cmd.arg(crate::tier::root::PROGRAM_INSIDE)
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let child = cmd.spawn().unwrap();
    drop(keep);
    let out = tokio::time::timeout(Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("the ceilings stop the child well inside 30 s")
        .unwrap();
    Outcome {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn roomy() -> Ceilings {
    Ceilings {
        data_bytes: 256 * MIB,
        cpu_seconds: 20,
        files: CONTAINER_MAX_FILES,
    }
}

#[tokio::test]
async fn a_child_that_forks_is_refused_and_makes_no_process() {
    let out = confined(roomy(), &["fork"]).await;
    assert_eq!(
        out.stdout,
        format!("started\nfork refused: E{}\n", libc::EPERM),
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn a_child_may_make_threads_until_it_locks_them() {
    // Threads are a child's own business until it starts its guest (the
    // lock is tried in `forbid_new_threads`' own test).
    let out = confined(roomy(), &["threads", "4"]).await;
    assert_eq!(out.stdout, "threads made: 4\n", "{}", out.stderr);
}

#[tokio::test]
async fn memory_past_the_data_ceiling_is_refused_and_memory_under_it_is_not() {
    let ceilings = Ceilings {
        data_bytes: 128 * MIB,
        ..roomy()
    };
    let out = confined(ceilings, &["memory", "32", "256"]).await;
    assert_eq!(
        out.stdout.lines().collect::<Vec<_>>(),
        ["32 MiB ok", "256 MiB refused"],
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn memory_the_data_ceiling_does_not_count_has_no_way_in() {
    let out = confined(roomy(), &["shared"]).await;
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(
        lines.get(..4),
        Some(
            &[
                format!("shared map refused: E{}", libc::EPERM).as_str(),
                &format!("memfd refused: E{}", libc::EPERM),
                // /dev/shm is a folder of the read-only /dev.
                &format!("/dev/x refused: E{}", libc::EROFS),
                &format!("/dev/shm/x refused: E{}", libc::EROFS),
            ][..]
        ),
        "{}",
        out.stderr
    );
    let number = |prefix: &str| -> u64 {
        lines
            .iter()
            .find_map(|l| l.strip_prefix(prefix))
            .and_then(|n| n.trim_end_matches(" MiB").parse().ok())
            .unwrap_or_else(|| panic!("no `{prefix}` line: {lines:?}"))
    };
    assert!(
        number("tmp took ") <= crate::limits::CONTAINER_TMP_BYTES / MIB,
        "{lines:?}"
    );
    assert!(
        number("descriptors opened: ") < CONTAINER_MAX_FILES,
        "{lines:?}"
    );
}

#[tokio::test]
async fn a_child_that_spins_past_its_cpu_ceiling_is_killed() {
    let ceilings = Ceilings {
        cpu_seconds: 1,
        ..roomy()
    };
    let out = confined(ceilings, &["spin"]).await;
    // bubblewrap reports its command's death by signal as 128 + signal.
    let signal = out
        .status
        .signal()
        .or(out.status.code().map(|c| c - 128))
        .unwrap();
    assert!(
        [libc::SIGXCPU, libc::SIGKILL].contains(&signal),
        "{:?} {}",
        out.status,
        out.stderr
    );
}

#[test]
fn a_task_gets_its_guest_memory_plus_headroom_and_cpu_in_proportion_to_its_wall_time() {
    let c = Ceilings::for_task(64 << 20, Duration::from_secs(65));
    assert_eq!(c.data_bytes, (64 << 20) + CONTAINER_DATA_HEADROOM_BYTES);
    assert_eq!(c.cpu_seconds, 66 * CONTAINER_CPU_FACTOR);
}

#[test]
fn the_allow_list_kills_a_foreign_architecture_and_refuses_the_rest_with_eperm() {
    let program = allowed_program().unwrap();
    // seccompiler's preamble: load the architecture, kill on a mismatch.
    assert_eq!(program[2].k, libc::SECCOMP_RET_KILL_PROCESS);
    let last = program.last().unwrap();
    assert_eq!(last.k, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32);
    for (nr, name) in [
        (libc::SYS_socket, "socket"),
        (libc::SYS_connect, "connect"),
        (libc::SYS_unshare, "unshare"),
        (libc::SYS_ptrace, "ptrace"),
        (libc::SYS_bpf, "bpf"),
        (libc::SYS_io_uring_setup, "io_uring_setup"),
        (libc::SYS_process_vm_readv, "process_vm_readv"),
        (libc::SYS_userfaultfd, "userfaultfd"),
    ] {
        assert!(
            !super::super::syscalls::allowed().any(|a| a == nr),
            "{name} is on the allow-list"
        );
    }
}

#[test]
fn once_threads_are_forbidden_no_thread_or_process_can_be_made() {
    const NAME: &str =
        "tier::ceilings::tests::once_threads_are_forbidden_no_thread_or_process_can_be_made";
    if std::env::var_os("WB_TEST_LOCKED_CHILD").is_some() {
        // The attacker: code that runs after the child locked its threads.
        forbid_new_threads().unwrap();
        let thread = std::thread::Builder::new().spawn(|| ()).map(|h| h.join());
        let said = |r: Result<(), i32>| match r {
            Ok(()) => "made".to_string(),
            Err(e) => format!("E{e}"),
        };
        println!(
            "thread: {}",
            said(
                thread
                    .map(|_| ())
                    .map_err(|e| e.raw_os_error().unwrap_or(0))
            )
        );
        #[expect(unsafe_code, reason = "fork in a test child that exits at once")]
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            #[expect(unsafe_code, reason = "the forked copy leaves at once")]
            unsafe {
                libc::_exit(0)
            };
        }
        let fork = if pid < 0 {
            Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
        } else {
            Ok(())
        };
        println!("fork: {}", said(fork));
        return;
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", NAME, "--nocapture", "--test-threads=1"])
        .env("WB_TEST_LOCKED_CHILD", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let eagain = libc::EAGAIN;
    assert!(
        stdout.contains(&format!("thread: E{eagain}")),
        "{stdout} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(&format!("fork: E{eagain}")), "{stdout}");
}
