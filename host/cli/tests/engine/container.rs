//! The container tier attacked from inside. A native program
//! (`tests/native/escapee.c`) stands in for native code that escaped its
//! guest: the engine starts it exactly where it starts its child `wbx`,
//! with the same root, filters, limits and descriptors, and it goes after
//! the engine's home, the user's data, the handed code, the relay and the
//! kernel. Then the real child is looked at from outside while it runs.

use crate::common::own_builder;
use guest_artifacts::*;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use workbooks::commands::{ArgMode, Tier};
use workbooks::{Engine, LineOptions, Secret, SecretKind};
use workbooks_fabric::{FabricOptions, Target, TaskInput};

/// `tests/native/escapee.c` built to go after `home`.
fn escapee(dir: &Path, home: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/native/escapee.c");
    let work = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let user_home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    let out = dir.join("escapee");
    let quoted = |name: &str, value: &Path| format!("-D{name}=\"{}\"", value.display());
    let built = std::process::Command::new("cc")
        .args(["-O1", "-o"])
        .arg(&out)
        .arg(&src)
        .arg(quoted("ENGINE_HOME", home))
        .arg(quoted("USER_HOME", Path::new(&user_home)))
        .arg(quoted("WORK_DIR", &work.canonicalize().unwrap()))
        .arg(format!("-DPARENT={}", std::process::id()))
        .status()
        .expect("a C compiler (cc) builds the test's native program");
    assert!(built.success(), "cc failed on {}", src.display());
    out
}

/// A home worth robbing: another tenant's keys, secret and state, a
/// compile cache and its sealing key.
fn robbed_home(home: &Path) {
    let e = own_builder(home).build().unwrap();
    let storage = e.storage().unwrap();
    storage
        .kv("victim")
        .unwrap()
        .put(b"card", b"4111-1111")
        .unwrap();
    e.keyring()
        .set(
            "victim",
            "victim-key",
            Secret::generate(SecretKind::Ed25519).unwrap(),
        )
        .unwrap();
    e.precompile(&workbooks::Artifact::from_file(CLI_CAT).unwrap())
        .unwrap();
    assert!(home.join("cache.key").is_file() || home.join("cache").is_dir());
}

/// The attacker's report: `name=result` per line.
fn findings(report: &str) -> HashMap<String, String> {
    report
        .lines()
        // The first line starts with the engine's own words.
        .filter_map(|l| l.rsplit(": ").next()?.split_once(['=', ':']))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect()
}

/// Runs the engine's container tier once with `attacker` in place of its
/// `wbx`, under `profile`; what the attacker reported.
async fn escape(home: &Path, attacker: &Path, profile: &str) -> (Engine, HashMap<String, String>) {
    let e = own_builder(home).child_binary(attacker).build().unwrap();
    e.registry()
        .register(
            "cat1",
            std::fs::read(CLI_CAT).unwrap(),
            ArgMode::Argv,
            Tier::Instance,
        )
        .unwrap();
    let opts = FabricOptions {
        tier: Some(Tier::Container),
        ..FabricOptions::default()
    };
    let line = LineOptions {
        profile: profile.into(),
        ..LineOptions::default()
    };
    let results = workbooks_fabric::Fabric::new(e.clone())
        .fan_out_as_host(
            line,
            &Target::Command("cat1".into()),
            vec![TaskInput::default()],
            &opts,
        )
        .await
        .unwrap();
    let error = results[0]
        .error
        .clone()
        .expect("the attacker gives no verdict");
    assert!(error.contains("exit status: 3"), "{error}");
    (e, findings(&error))
}

fn expect(found: &HashMap<String, String>, name: &str, want: &str) {
    assert_eq!(
        found.get(name).map(String::as_str),
        Some(want),
        "{name}: {found:?}"
    );
}

#[tokio::test]
async fn native_code_in_the_container_sees_no_home_and_is_refused_every_way_out() {
    let home = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    robbed_home(home.path());
    let attacker = escapee(bin.path(), home.path());
    let (e, found) = escape(home.path(), &attacker, "compute").await;
    let enoent = format!("E{}", libc::ENOENT);
    let eperm = format!("E{}", libc::EPERM);
    // Nothing of the home, the user's data or the rest of the host.
    for name in [
        "home",
        "cache_key",
        "db",
        "secrets",
        "compiled",
        "daemon_socket_dir",
        "user_home",
        "work",
        "etc_passwd",
        "var",
        "parent_root",
    ] {
        expect(&found, name, &enoent);
    }
    expect(&found, "new_file_in_root", &format!("E{}", libc::EROFS));
    // The handed code and guest are sealed: no write reaches them.
    for name in [
        "code_write",
        "code_truncate",
        "code_reopen_write",
        "guest_write",
    ] {
        expect(&found, name, &eperm);
    }
    // No way out through the kernel.
    for name in [
        "socket_unix",
        "socket_inet",
        "unshare",
        "setns",
        "mount",
        "io_uring_setup",
        "ptrace",
        "process_vm_readv",
        "bpf",
        "userfaultfd",
        "perf_event_open",
        "keyctl",
        "fork",
    ] {
        expect(&found, name, &eperm);
    }
    // The relay answers only for this task's grant and tenant: compute
    // holds neither kv nor secrets, a made-up job is refused, and a frame
    // past the cap closes the channel.
    expect(&found, "relay_kv_put", "answered-err");
    expect(&found, "relay_sign_victim_key", "answered-err");
    expect(&found, "relay_wait_made_up_job", "refused");
    expect(&found, "relay_after_bomb", "closed");
    expect(&found, "Seccomp_filters", "2");
    expect(&found, "NoNewPrivs", "1");
    let storage = e.storage().unwrap();
    assert_eq!(storage.kv("default").unwrap().get(b"pwned").unwrap(), None);
    assert_eq!(
        storage
            .kv("victim")
            .unwrap()
            .get(b"card")
            .unwrap()
            .as_deref(),
        Some(&b"4111-1111"[..])
    );
}

#[tokio::test]
async fn a_forged_relay_call_lands_in_the_tasks_own_tenant_and_nowhere_else() {
    let home = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    robbed_home(home.path());
    let attacker = escapee(bin.path(), home.path());
    // minimal holds kv and secrets: the put goes through, as the task's.
    let (e, found) = escape(home.path(), &attacker, "minimal").await;
    expect(&found, "relay_kv_put", "answered-ok");
    // The victim's key is not the task tenant's, whatever its name.
    expect(&found, "relay_sign_victim_key", "answered-err");
    let storage = e.storage().unwrap();
    assert_eq!(
        storage
            .kv("default")
            .unwrap()
            .get(b"pwned")
            .unwrap()
            .as_deref(),
        Some(&b"x"[..])
    );
    assert_eq!(storage.kv("victim").unwrap().get(b"pwned").unwrap(), None);
}

/// The child `wbx exec --framed` processes of this test process, by pid.
fn framed_children() -> Vec<u32> {
    framed_children_under(std::process::id())
}

/// How many `wbx exec --framed` processes run under process `ancestor`.
pub(crate) fn framed_children_of(ancestor: u32) -> usize {
    framed_children_under(ancestor).len()
}

/// The `wbx exec --framed` processes under process `me`, by pid.
fn framed_children_under(me: u32) -> Vec<u32> {
    let parent_of = |pid: u32| -> Option<u32> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let after = stat.rsplit_once(')')?.1;
        after.split_whitespace().nth(1)?.parse().ok()
    };
    let descends = |mut pid: u32| {
        for _ in 0..8 {
            match parent_of(pid) {
                Some(p) if p == me => return true,
                Some(p) if p > 1 => pid = p,
                _ => return false,
            }
        }
        false
    };
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| c.windows(9).any(|w| w == b"--framed\0"))
        })
        .filter(|pid| descends(*pid))
        .collect()
}

#[tokio::test]
async fn the_real_child_holds_a_root_of_libraries_and_locks_its_threads_before_its_guest() {
    let home = tempfile::tempdir().unwrap();
    robbed_home(home.path());
    let e = own_builder(home.path())
        .child_binary(env!("CARGO_BIN_EXE_wbx"))
        .build()
        .unwrap();
    e.registry()
        .register(
            "sleeper",
            std::fs::read(LIMITS_BLOCKING_SLEEP).unwrap(),
            ArgMode::Argv,
            Tier::Instance,
        )
        .unwrap();
    let opts = FabricOptions {
        tier: Some(Tier::Container),
        timeout: Duration::from_secs(20),
        ..FabricOptions::default()
    };
    let runner = e.clone();
    let run = tokio::spawn(async move {
        workbooks_fabric::Fabric::new(runner.clone())
            .fan_out_as_host(
                LineOptions::default(),
                &Target::Command("sleeper".into()),
                vec![TaskInput::default()],
                &opts,
            )
            .await
    });
    // Waits for the child's guest to be running (its threads locked).
    let mut looked = None;
    for _ in 0..400 {
        looked = framed_children().into_iter().find_map(|pid| {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
            status
                .contains("Seccomp_filters:\t3")
                .then_some((pid, status))
        });
        if looked.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (pid, status) = looked.expect("a child with its thread lock in place");
    assert!(status.contains("NoNewPrivs:\t1"), "{status}");
    let threads: u32 = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap();
    assert!(threads <= 8, "{threads} threads");
    // Its root: the program's and the system libraries' directories, and
    // bubblewrap's own; nothing of the home or the user.
    let root: Vec<String> = std::fs::read_dir(format!("/proc/{pid}/root"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for absent in [
        "home", "root", "etc", "var", "run", "work", "srv", "opt", "mnt",
    ] {
        assert!(!root.contains(&absent.to_string()), "/{absent} in {root:?}");
    }
    let inside =
        |p: &Path| PathBuf::from(format!("/proc/{pid}/root")).join(p.strip_prefix("/").unwrap());
    assert!(!inside(&home.path().join("cache.key")).exists());
    assert!(!inside(home.path()).exists());
    assert!(!inside(Path::new(env!("CARGO_BIN_EXE_wbx"))).exists());
    assert!(inside(Path::new("/usr/libexec/workbooks/wbx")).is_file());
    // The sleeper never ends by itself: stopping the task kills it.
    run.abort();
}
