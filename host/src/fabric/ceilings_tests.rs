//! The ceilings tried from inside, as a child that escaped its guest would:
//! native programs run in the same sandbox, under the same ceilings, as a
//! container-tier `wbx`, and do exactly what the ceilings forbid.

use super::*;
use crate::fabric::tier::{TierEnv, bubblewrap_args};
use std::os::unix::process::ExitStatusExt;

const MIB: u64 = 1 << 20;

struct Outcome {
    status: std::process::ExitStatus,
    stdout: String,
    stderr: String,
}

/// Runs `argv` inside bubblewrap under `ceilings`.
async fn confined(ceilings: Ceilings, argv: &[&str]) -> Outcome {
    let bwrap = TierEnv::find_bwrap().expect("bubblewrap is needed: apt-get install bubblewrap");
    let home = tempfile::tempdir().unwrap();
    let mut cmd = tokio::process::Command::new(bwrap);
    cmd.args(bubblewrap_args(home.path(), &[], &[]));
    let program = ceilings.confine(&mut cmd).unwrap();
    cmd.args(argv)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let child = cmd.spawn().unwrap();
    drop(program);
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
    }
}

#[tokio::test]
async fn a_child_that_forks_is_refused_and_makes_no_process() {
    let out = confined(
        roomy(),
        &[
            "/bin/sh",
            "-c",
            "echo started; /bin/true & wait $! && echo forked",
        ],
    )
    .await;
    assert!(
        out.stdout.contains("started"),
        "the shell itself ran: {} {}",
        out.stdout,
        out.stderr
    );
    assert!(!out.stdout.contains("forked"), "{}", out.stdout);
    assert!(
        out.stderr.to_lowercase().contains("fork"),
        "the shell names the failed fork: {}",
        out.stderr
    );
}

#[tokio::test]
async fn a_child_that_spawns_through_posix_spawn_is_refused_but_may_make_threads() {
    let script = "\
import subprocess, threading
seen = []
t = threading.Thread(target=lambda: seen.append('thread ran'))
t.start(); t.join()
print(seen[0])
try:
    subprocess.run(['/bin/true'])
    print('spawned')
except OSError as e:
    print('spawn refused:', e.errno)
";
    let out = confined(roomy(), &["/usr/bin/python3", "-c", script]).await;
    assert!(
        out.stdout.contains("thread ran"),
        "{} {}",
        out.stdout,
        out.stderr
    );
    assert!(
        out.stdout
            .contains(&format!("spawn refused: {}", libc::EPERM)),
        "{} {}",
        out.stdout,
        out.stderr
    );
    assert!(!out.stdout.contains("spawned"), "{}", out.stdout);
}

#[tokio::test]
async fn memory_past_the_data_ceiling_is_refused_and_memory_under_it_is_not() {
    let ceilings = Ceilings {
        data_bytes: 128 * MIB,
        cpu_seconds: 20,
    };
    let script = "\
small = bytearray(32 << 20)
print('32 MiB ok')
try:
    big = bytearray(256 << 20)
    print('256 MiB granted')
except MemoryError:
    print('256 MiB refused')
";
    let out = confined(ceilings, &["/usr/bin/python3", "-c", script]).await;
    assert_eq!(
        out.stdout.lines().collect::<Vec<_>>(),
        ["32 MiB ok", "256 MiB refused"],
        "{}",
        out.stderr
    );
}

#[tokio::test]
async fn a_child_that_spins_past_its_cpu_ceiling_is_killed() {
    let ceilings = Ceilings {
        data_bytes: 256 * MIB,
        cpu_seconds: 1,
    };
    let out = confined(ceilings, &["/bin/sh", "-c", "while :; do :; done"]).await;
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
fn the_filter_ends_in_its_four_returns_and_every_jump_lands_inside_it() {
    let ops = filter();
    let returns: Vec<u32> = ops[ops.len() - 4..].iter().map(|op| op.k).collect();
    assert_eq!(
        returns,
        [
            RET_ALLOW,
            RET_ERRNO | libc::EPERM as u32,
            RET_ERRNO | libc::ENOSYS as u32,
            RET_KILL_PROCESS
        ]
    );
    for (at, op) in ops.iter().enumerate() {
        if op.code != RETURN {
            assert!(at + 1 + (op.jt.max(op.jf) as usize) < ops.len(), "op {at}");
        } else {
            assert!(at >= ops.len() - 4, "a return before the end, at {at}");
        }
    }
}
