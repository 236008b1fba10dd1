//! Every relayed operation answers as it does in process: a child engine
//! built with [`crate::EngineBuilder::relayed`] on one end of a socket
//! pair, a store of the parent served on the other, and the same script
//! run against that relayed store and against an in-process store of the
//! parent (another tenant, so neither sees the other's writes). No
//! bubblewrap: this pins the protocol, the container tests pin the tier.

use super::channel;
use crate::cap::bindings::workbooks::engine::command_types::{
    PipelineStage, StageInput, StageSink, TaskInput,
};
use crate::cap::bindings::workbooks::engine::vfs::{self, Volume};
use crate::cap::bindings::workbooks::host::launch;
use crate::cap::kv::bindings::workbooks::host::kv;
use crate::cap::launch::LaunchView;
use crate::cap::queue::bindings::workbooks::host::queue;
use crate::cap::relay::{Relay, ask_async};
use crate::cap::secrets::bindings::workbooks::host::secrets;
use crate::cap::secrets::keyring::{Secret, SecretKind};
use crate::cap::{kv as kv_cap, launch as launch_cap, queue as queue_cap, secrets as secrets_cap};
use crate::commands::{self, ArgMode, CommandError, Tier};
use crate::flavor::Flavor;
use crate::policy::{Cap, Grant};
use crate::state::{SessionOptions, StoreState};
use crate::{Engine, engine::for_tests};
use std::os::fd::OwnedFd;
use std::sync::Arc;
use wasmtime::Store;

/// A parent engine serving a store of tenant `t`, a child engine relaying
/// to it, the child's relayed store (which names tenant `x`: the serving
/// side's tenant is the one that counts) and an in-process store of
/// tenant `u`, all under the same grant.
struct Ends {
    _homes: (tempfile::TempDir, tempfile::TempDir),
    parent: Engine,
    child: Engine,
    relayed: Store<StoreState>,
    local: Store<StoreState>,
    /// The serving side; aborting it closes the channel.
    server: tokio::task::JoinHandle<()>,
}

fn hmac_key() -> Secret {
    Secret::new(SecretKind::Hmac, vec![7; 32]).expect("hmac key")
}

fn ed_key() -> Secret {
    Secret::new(SecretKind::Ed25519, vec![9; 32]).expect("ed25519 key")
}

async fn ends(profile: &str) -> Ends {
    let (parent_home, parent) = for_tests();
    let cat = std::fs::read(guest_artifacts::CLI_CAT).expect("cat");
    parent
        .registry()
        .register("kat", cat, ArgMode::Argv, Tier::Instance)
        .expect("register");
    for tenant in ["t", "u"] {
        parent.keyring().set(tenant, "mac", hmac_key()).unwrap();
        parent.keyring().set(tenant, "ed", ed_key()).unwrap();
    }
    let (near, far) = std::os::unix::net::UnixStream::pair().expect("pair");
    let child_home = tempfile::tempdir().expect("child home");
    let child = Engine::builder()
        .home(child_home.path())
        .pooling(false)
        .relayed(OwnedFd::from(far))
        .expect("relay client")
        .build()
        .expect("child engine");
    let grant = Grant::profile(profile);
    let opts = |tenant: &str| SessionOptions::new("box", tenant);
    let (mut serving, _) = parent
        .new_store(Flavor::Sync, &grant, &opts("t"))
        .expect("serving store");
    near.set_nonblocking(true).unwrap();
    let stream = tokio::net::UnixStream::from_std(near).unwrap();
    let server = tokio::spawn(async move { channel::serve(stream, serving.data_mut()).await });
    let (relayed, _) = child
        .new_store(Flavor::Sync, &grant, &opts("x"))
        .expect("relayed store");
    let (local, _) = parent
        .new_store(Flavor::Sync, &grant, &opts("u"))
        .expect("local store");
    Ends {
        _homes: (parent_home, child_home),
        parent,
        child,
        relayed,
        local,
        server,
    }
}

fn kv_script(s: &mut StoreState) -> Vec<String> {
    use kv::Host;
    let kv = &mut s.caps.kv;
    vec![
        format!("{:?}", kv.put(b"k".to_vec(), b"v".to_vec())),
        format!("{:?}", kv.get(b"k".to_vec())),
        format!("{:?}", kv.get(b"missing".to_vec())),
        format!("{:?}", kv.contains(b"k".to_vec())),
        format!("{:?}", kv.keys(Vec::new(), 10)),
        format!("{:?}", kv.delete(b"k".to_vec())),
        format!("{:?}", kv.delete(b"k".to_vec())),
        format!("{:?}", kv.put(Vec::new(), b"v".to_vec())),
        format!("{:?}", kv.get(vec![b'k'; 4096])),
    ]
}

fn vfs_script(s: &mut StoreState) -> Vec<String> {
    use vfs::Host;
    let v = &mut s.caps.vfs;
    let stat = |m: Result<vfs::Metadata, vfs::Error>| format!("{:?}", m.map(|m| (m.kind, m.size)));
    vec![
        format!(
            "{:?}",
            v.write(Volume::Workspace, "a/b.txt".into(), b"hi".to_vec())
        ),
        format!("{:?}", v.read(Volume::Workspace, "a/b.txt".into())),
        format!("{:?}", v.list_dir(Volume::Workspace, "a".into())),
        stat(v.stat(Volume::Workspace, "a/b.txt".into())),
        stat(v.stat(Volume::Workspace, "a".into())),
        format!("{:?}", v.read(Volume::Workspace, "a".into())),
        format!("{:?}", v.remove(Volume::Workspace, "a/b.txt".into())),
        format!("{:?}", v.read(Volume::Workspace, "a/b.txt".into())),
        format!("{:?}", v.write(Volume::Tmp, "../x".into(), b"x".to_vec())),
        format!("{:?}", v.list_dir(Volume::Memory, "".into())),
    ]
}

async fn queue_script(s: &mut StoreState) -> Vec<String> {
    use queue::Host;
    let q = &mut s.caps.queue;
    vec![
        format!("{:?}", q.push("q".into(), b"one".to_vec()).await),
        format!("{:?}", q.push("q".into(), b"two".to_vec()).await),
        format!("{:?}", q.len("q".into()).await),
        format!("{:?}", q.pop("q".into(), 0).await),
        format!("{:?}", q.pop("q".into(), 5).await),
        format!("{:?}", q.pop("q".into(), 5).await),
        format!("{:?}", q.push(String::new(), b"x".to_vec()).await),
    ]
}

fn secrets_script(s: &mut StoreState) -> Vec<String> {
    use secrets::Host;
    let k = &mut s.caps.secrets;
    vec![
        format!("{:?}", k.hmac_sha256("mac".into(), b"data".to_vec())),
        format!("{:?}", k.ed25519_sign("ed".into(), b"data".to_vec())),
        format!("{:?}", k.ed25519_public_key("ed".into())),
        format!("{:?}", k.hmac_sha256("ed".into(), b"data".to_vec())),
        format!("{:?}", k.ed25519_public_key("nope".into())),
    ]
}

fn stage(name: &str, input: StageInput, stdout: StageSink) -> PipelineStage {
    PipelineStage {
        name: name.into(),
        argv: Vec::new(),
        input,
        stdout,
    }
}

async fn launch_script(s: &mut StoreState) -> Vec<String> {
    use launch::{Host, HostJob};
    let mut view = LaunchView {
        ctx: &mut s.caps.launch,
        table: &mut s.table,
    };
    let mut seen = vec![
        format!(
            "{:?}",
            view.run("kat".into(), vec![], b"hi".to_vec())
                .await
                .unwrap()
        ),
        format!(
            "{:?}",
            view.run("nope".into(), vec![], vec![]).await.unwrap()
        ),
    ];
    let stages = vec![
        stage("kat", StageInput::Bytes(b"piped".to_vec()), StageSink::Pipe),
        stage("kat", StageInput::Pipe, StageSink::Capture),
    ];
    let piped = view.pipeline(stages).await.unwrap();
    seen.push(format!(
        "{:?}",
        piped.map(|out| out
            .into_iter()
            .map(|s| (s.output, s.stdout_bytes))
            .collect::<Vec<_>>())
    ));
    let inputs = ["x", "y"].map(|i| TaskInput {
        argv: vec![],
        stdin: i.as_bytes().to_vec(),
    });
    let many = view.run_many("kat".into(), inputs.into(), 2).await.unwrap();
    seen.push(format!(
        "{:?}",
        many.map(|done| done.into_iter().map(|t| t.outcome).collect::<Vec<_>>())
    ));
    let job = view.start("kat".into(), vec![], b"job".to_vec()).await;
    let job = job.unwrap().expect("started");
    let again = wasmtime::component::Resource::<crate::cap::launch::Job>::new_borrow(job.rep());
    seen.push(format!("{:?}", view.wait(job).await.unwrap()));
    seen.push(format!("{:?}", view.kill(again)));
    seen.push(format!(
        "{:?}",
        view.start("nope".into(), vec![], vec![])
            .await
            .unwrap()
            .err()
    ));
    seen
}

/// Both stores' answers to `script`; the same, or the test fails.
macro_rules! both {
    ($ends:expr, $script:ident $(.$await:ident)?) => {{
        let relayed = $script($ends.relayed.data_mut())$(.$await)?;
        let local = $script($ends.local.data_mut())$(.$await)?;
        assert_eq!(relayed, local, "relayed (left) and in-process (right) differ");
        relayed
    }};
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_relayed_storage_and_signing_call_answers_as_it_does_in_process() {
    let mut e = ends("minimal").await;
    let kv = both!(e, kv_script);
    assert_eq!(kv[1], r#"Ok(Some([118]))"#, "{kv:?}");
    assert!(kv[7].starts_with("Err(Error::InvalidKey"), "{kv:?}");
    let files = both!(e, vfs_script);
    assert_eq!(files[1], "Ok([104, 105])", "{files:?}");
    assert!(files[8].starts_with("Err(Error::InvalidPath"), "{files:?}");
    let queued = both!(e, queue_script.await);
    assert_eq!(queued[3], r#"Ok(Some([111, 110, 101]))"#, "{queued:?}");
    assert_eq!(queued[5], "Ok(None)", "{queued:?}");
    let signed = both!(e, secrets_script);
    assert!(signed[0].starts_with("Ok(["), "{signed:?}");
    assert!(signed[3].starts_with("Err(Error::WrongKind"), "{signed:?}");
    // What the child wrote is the parent's tenant `t`'s, nobody else's.
    use kv::Host as _;
    let (mut parents_t, _) = e
        .parent
        .new_store(
            Flavor::Sync,
            &Grant::profile("minimal"),
            &SessionOptions::new("box", "t"),
        )
        .unwrap();
    let kv_t = &mut parents_t.data_mut().caps.kv;
    assert!(kv_t.put(b"seen".to_vec(), b"1".to_vec()).is_ok());
    let relayed = &mut e.relayed.data_mut().caps.kv;
    let got = relayed.get(b"seen".to_vec());
    assert!(matches!(&got, Ok(Some(v)) if v == b"1"), "{got:?}");
    let local = &mut e.local.data_mut().caps.kv;
    let got = local.get(b"seen".to_vec());
    assert!(matches!(&got, Ok(None)), "{got:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_relayed_launch_call_answers_as_it_does_in_process() {
    let mut e = ends("posix").await;
    let seen = both!(e, launch_script.await);
    assert!(seen[0].contains("stdout: [104, 105]"), "{seen:?}");
    assert!(seen[1].contains("UnknownCommand"), "{seen:?}");
    assert!(
        seen[2].contains("stdout: [112, 105, 112, 101, 100]"),
        "{seen:?}"
    );
    assert!(seen[4].contains("stdout: [106, 111, 98]"), "{seen:?}");
    // A preview 1 module's `workbooks.exec` is relayed as its own call.
    let relay = e.child.inner.relay.clone().expect("the child relays");
    let call = || launch_cap::relay::ModuleExec {
        name: "kat".into(),
        argv: vec![],
        stdin: b"mod".to_vec(),
    };
    let exited = |out: commands::CommandOutput| (out.exit_code, out.stdout, out.stderr);
    let ran = ask_async(&*relay, call()).await.map(exited);
    let here = e.local.data_mut().caps.launch.0.run_async(call()).await;
    assert_eq!(ran, here.map(exited));
    assert!(
        matches!(&ran, Ok((0, out, _)) if out == &b"mod"[..]),
        "{ran:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_call_for_a_cap_not_granted_finds_it_deny_all_as_in_process() {
    let mut e = ends("compute").await;
    assert!(!Grant::profile("compute").caps.contains(Cap::Kv));
    // The child opens no context for a cap it was not granted, so these
    // two compare the deny-all default on both sides, relay unused.
    let kv = both!(e, kv_script);
    let none = r#"Err(Error::Unavailable("no tenant for this store"))"#;
    assert_eq!(kv, vec![none; 9]);
    let signed = both!(e, secrets_script);
    let not_found = |name: &str| format!(r#"Err(Error::NotFound("{name}"))"#);
    let names = ["mac", "ed", "ed", "ed", "nope"];
    assert_eq!(signed, names.map(not_found));
    // Native code that escaped its guest speaks the protocol itself, and
    // finds the serving side's context as deny-all.
    let relay: Arc<dyn Relay> = e.child.inner.relay.clone().expect("the child relays");
    let forged = secrets_cap::relay::Sign {
        name: "ed".into(),
        data: b"data".to_vec(),
    };
    let answer = ask_async(&*relay, forged).await;
    assert!(
        matches!(&answer, Err(secrets_cap::relay::Fault::NotFound(name)) if name == "ed"),
        "{answer:?}"
    );
    let forged = queue_cap::relay::Len { name: "q".into() };
    let answer = ask_async(&*relay, forged).await;
    assert!(
        matches!(&answer, Err(queue_cap::relay::Fault::Unavailable(why)) if why == "queue not granted"),
        "{answer:?}"
    );
    let forged = kv_cap::relay::Put {
        key: b"k".to_vec(),
        value: b"v".to_vec(),
    };
    let answer = ask_async(&*relay, forged).await;
    assert!(
        matches!(&answer, Err(kv_cap::relay::Fault::Unavailable(why)) if why == "no tenant for this store"),
        "{answer:?}"
    );
    let forged = launch_cap::relay::Run {
        name: "kat".into(),
        argv: vec![],
        stdin: vec![],
    };
    let answer = ask_async(&*relay, forged).await;
    assert!(matches!(answer, Err(CommandError::Denied)), "{answer:?}");
    let wait = ask_async(&*relay, launch_cap::relay::JobWait { job: 7 }).await;
    assert!(
        matches!(&wait, Err(CommandError::Refused(why)) if why.starts_with("relay: refused")),
        "a made-up job is refused: {wait:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_relayed_job_is_dropped_on_the_serving_side_too() {
    use launch::{Host, HostJob};
    let mut e = ends("posix").await;
    let state = e.relayed.data_mut();
    let mut view = LaunchView {
        ctx: &mut state.caps.launch,
        table: &mut state.table,
    };
    let job = view.start("kat".into(), vec![], b"job".to_vec()).await;
    let job = job.unwrap().expect("started");
    let number = view.table.get(&job).unwrap().relayed_number();
    let number = number.expect("a relayed store's job is the serving side's");
    HostJob::drop(&mut view, job).unwrap();
    let relay: Arc<dyn Relay> = e.child.inner.relay.clone().expect("the child relays");
    let wait = ask_async(&*relay, launch_cap::relay::JobWait { job: number }).await;
    assert!(
        matches!(&wait, Err(CommandError::Refused(why)) if why.starts_with("relay: refused")),
        "job {number} is gone there: {wait:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn when_the_parent_is_gone_every_call_gets_its_caps_own_error() {
    use launch::{Host, HostJob};
    use {kv::Host as _, queue::Host as _, secrets::Host as _, vfs::Host as _};
    let mut e = ends("posix").await;
    let job = {
        let state = e.relayed.data_mut();
        let mut view = LaunchView {
            ctx: &mut state.caps.launch,
            table: &mut state.table,
        };
        let job = view.start("kat".into(), vec![], Vec::new()).await;
        job.unwrap().expect("started")
    };
    e.server.abort();
    let _ = (&mut e.server).await;
    let relay: Arc<dyn Relay> = e.child.inner.relay.clone().expect("the child relays");
    let gone = |why: &str| why.starts_with("relay: the parent");
    let s = e.relayed.data_mut();
    let got = s.caps.kv.get(b"k".to_vec());
    assert!(
        matches!(&got, Err(kv::Error::Unavailable(w)) if gone(w)),
        "{got:?}"
    );
    let got = s.caps.vfs.read(Volume::Tmp, "a".into());
    assert!(
        matches!(&got, Err(vfs::Error::Unavailable(w)) if gone(w)),
        "{got:?}"
    );
    let got = s.caps.queue.len("q".into()).await;
    let unavailable = matches!(&got, Err(queue::Error::Unavailable(w)) if gone(w));
    assert!(unavailable, "{got:?}");
    let got = s.caps.secrets.hmac_sha256("mac".into(), Vec::new());
    let not_found = matches!(&got, Err(secrets::Error::NotFound(w))
        if w.starts_with("mac (relay: the parent") && w.ends_with(')'));
    assert!(not_found, "{got:?}");
    let mut view = LaunchView {
        ctx: &mut s.caps.launch,
        table: &mut s.table,
    };
    let got = view.run("kat".into(), vec![], vec![]).await.unwrap();
    assert!(
        matches!(&got, Err(launch::Error::Refused(w)) if gone(w)),
        "{got:?}"
    );
    let stages = vec![stage("kat", StageInput::Pipe, StageSink::Capture)];
    let got = view.pipeline(stages).await.unwrap();
    let failed = matches!(&got, Err(f) if f.index == 0
        && matches!(&f.error, launch::Error::Refused(w) if gone(w)));
    assert!(failed, "{got:?}");
    let again = wasmtime::component::Resource::<crate::cap::launch::Job>::new_borrow(job.rep());
    assert!(
        !view.kill(again).unwrap(),
        "a relay that fails killed nothing"
    );
    let got = view.wait(job).await.unwrap();
    assert!(
        matches!(&got, Err(launch::Error::Refused(w)) if gone(w)),
        "{got:?}"
    );
    let exec = launch_cap::relay::ModuleExec {
        name: "kat".into(),
        argv: vec![],
        stdin: Vec::new(),
    };
    let got = ask_async(&*relay, exec).await;
    assert!(
        matches!(&got, Err(CommandError::Refused(w)) if gone(w)),
        "{got:?}"
    );
}
