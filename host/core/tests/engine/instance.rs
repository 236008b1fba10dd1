//! The Instance API: start, call, info, vfs put/get, stop; faults are
//! values and the next call is served from a fresh store.

use crate::common::{artifact, engine};
use guest_artifacts::*;
use std::time::Duration;
use workbooks::vfs::Volume;
use workbooks::{Cap, CapSet, InstanceError, Profile, RunError, StartOptions, Supervisor};

guest_artifacts::foreach_instance!(assert_test_exists);

fn opts(profile: &str) -> StartOptions {
    StartOptions {
        profile: profile.into(),
        timeout: Some(Duration::from_millis(500)),
        ..StartOptions::default()
    }
}

#[tokio::test]
async fn instance_plugin() {
    let sup = Supervisor::new(engine().clone());
    let info = sup
        .start("plugin-1", &artifact(INSTANCE_PLUGIN), opts("minimal"))
        .await
        .unwrap();
    assert_eq!(info.profile_effective, Profile::Minimal);
    assert!(
        info.linked_imports
            .iter()
            .any(|i| i == "workbooks:host/kv@0.1.0")
    );

    assert_eq!(
        sup.call_run("plugin-1", "echo:hi").await.unwrap(),
        Ok("hi".into())
    );
    assert_eq!(
        sup.call_run("plugin-1", "count").await.unwrap(),
        Ok("2".into())
    );
    assert_eq!(
        sup.call_run("plugin-1", "session").await.unwrap(),
        Ok("plugin-1 default minimal".into())
    );
    assert_eq!(
        sup.call_run("plugin-1", "nope").await.unwrap(),
        Err("unknown verb nope".into())
    );
    let info = sup.info("plugin-1").unwrap();
    assert_eq!((info.calls, info.faults), (4, 0));
    assert!(info.memory_used.unwrap() > 0 && info.memory_used.unwrap() <= info.memory_limit);

    // The embedder and the guest share the instance's volumes.
    sup.vfs_put("plugin-1", Volume::Workspace, "in.txt", b"from host")
        .unwrap();
    assert_eq!(
        sup.call_run("plugin-1", "vfs-read:in.txt").await.unwrap(),
        Ok("from host".into())
    );
    assert_eq!(
        sup.call_run("plugin-1", "vfs-write:out.txt=from guest")
            .await
            .unwrap(),
        Ok("ok".into())
    );
    assert_eq!(
        sup.vfs_get("plugin-1", Volume::Workspace, "out.txt")
            .unwrap(),
        b"from guest"
    );

    // kv outlives the instance.
    assert_eq!(
        sup.call_run("plugin-1", "kv-set:colour=teal")
            .await
            .unwrap(),
        Ok("ok".into())
    );
    sup.stop("plugin-1").unwrap();
    assert!(matches!(
        sup.info("plugin-1"),
        Err(InstanceError::NotFound(_))
    ));
    sup.start("plugin-1", &artifact(INSTANCE_PLUGIN), opts("minimal"))
        .await
        .unwrap();
    assert_eq!(
        sup.call_run("plugin-1", "kv-get:colour").await.unwrap(),
        Ok("teal".into())
    );
}

#[tokio::test]
async fn a_faulting_call_is_an_error_and_the_next_call_gets_a_fresh_store() {
    let sup = Supervisor::new(engine().clone());
    sup.start("faulty", &artifact(INSTANCE_PLUGIN), opts("minimal"))
        .await
        .unwrap();
    assert_eq!(
        sup.call_run("faulty", "count").await.unwrap(),
        Ok("1".into())
    );

    let e = sup.call_run("faulty", "spin").await.unwrap_err();
    assert!(
        matches!(e, InstanceError::Run(RunError::Timeout { .. })),
        "{e}"
    );
    // Served at once, from a fresh store (the counter starts over).
    assert_eq!(
        sup.call_run("faulty", "count").await.unwrap(),
        Ok("1".into())
    );

    let e = sup.call_run("faulty", "recurse").await.unwrap_err();
    assert!(
        matches!(e, InstanceError::Run(RunError::StackOverflow)),
        "{e}"
    );
    assert_eq!(
        sup.call_run("faulty", "echo:alive").await.unwrap(),
        Ok("alive".into())
    );

    let e = sup.call_run("faulty", "sleep:60000").await.unwrap_err();
    assert!(
        matches!(e, InstanceError::Run(RunError::Timeout { .. })),
        "{e}"
    );
    let info = sup.info("faulty").unwrap();
    assert_eq!(info.faults, 3);
}

#[tokio::test]
async fn memory_is_capped_across_calls_and_a_memory_fault_is_survived() {
    let sup = Supervisor::new(engine().clone());
    sup.start("hoarder", &artifact(INSTANCE_PLUGIN), opts("minimal"))
        .await
        .unwrap();
    let mut held = 0;
    let fault = loop {
        match sup.call_run("hoarder", "hold:8").await {
            Ok(Ok(_)) => held += 8,
            Ok(Err(e)) => panic!("guest error: {e}"),
            Err(e) => break e,
        }
        assert!(held <= 64, "held {held} MiB under a 64 MiB cap");
    };
    assert!(held >= 32, "only {held} MiB before the cap");
    match fault {
        InstanceError::Run(RunError::Memory { limit, .. }) => assert_eq!(limit, 64 << 20),
        other => panic!("expected a memory error, got {other}"),
    }
    assert_eq!(
        sup.call_run("hoarder", "hold:8").await.unwrap(),
        Ok("holding 8 MiB".into())
    );
}

#[tokio::test]
async fn a_refusal_the_guest_handled_is_not_blamed_for_a_later_fault() {
    let sup = Supervisor::new(engine().clone());
    sup.start("careful", &artifact(INSTANCE_PLUGIN), opts("minimal"))
        .await
        .unwrap();
    // The growth is refused and the guest copes with it.
    assert_eq!(
        sup.call_run("careful", "try-hold:512").await.unwrap(),
        Ok("refused".into())
    );
    // A later, unrelated fault is reported as itself.
    let e = sup.call_run("careful", "panic").await.unwrap_err();
    assert!(matches!(e, InstanceError::Run(RunError::Trap(_))), "{e}");
    // Within one call, the budgets speak before a refusal does.
    assert_eq!(
        sup.call_run("careful", "try-hold:512").await.unwrap(),
        Ok("refused".into())
    );
    let e = sup.call_run("careful", "recurse").await.unwrap_err();
    assert!(
        matches!(e, InstanceError::Run(RunError::StackOverflow)),
        "{e}"
    );
}

#[tokio::test]
async fn unknown_profiles_fail_closed_and_info_says_so() {
    let sup = Supervisor::new(engine().clone());
    let info = sup
        .start("typo", &artifact(DOCK_SESSION), opts("netwrok"))
        .await
        .unwrap();
    assert_eq!(info.profile_requested, "netwrok");
    assert_eq!(info.profile_effective, Profile::Compute);
    assert_eq!(info.caps, CapSet::of(&[Cap::Vfs]));
    assert!(info.warning.unwrap().contains("resolved to compute"));
    // kv is absent under the fallback, so the kv plugin cannot start.
    let e = sup
        .start("typo-kv", &artifact(INSTANCE_PLUGIN), opts("netwrok"))
        .await
        .unwrap_err();
    assert!(e.to_string().contains("capability not granted: kv"), "{e}");
}

#[tokio::test]
async fn instances_cannot_be_widened_or_doubled() {
    let sup = Supervisor::new(engine().clone());
    let wide = StartOptions {
        caps: Some(CapSet::of(&[Cap::Vfs, Cap::Net])),
        ..opts("minimal")
    };
    let e = sup
        .start("wide", &artifact(DOCK_SESSION), wide)
        .await
        .unwrap_err();
    assert_eq!(e.to_string(), "capabilities not in profile minimal: net");

    sup.start("twice", &artifact(DOCK_SESSION), opts("compute"))
        .await
        .unwrap();
    let e = sup
        .start("twice", &artifact(DOCK_SESSION), opts("compute"))
        .await
        .unwrap_err();
    assert!(matches!(e, InstanceError::AlreadyRunning(_)));
    let e = sup
        .start("../escape", &artifact(DOCK_SESSION), opts("compute"))
        .await
        .unwrap_err();
    assert!(matches!(e, InstanceError::InvalidId(_)), "{e}");
}

#[tokio::test]
async fn calls_name_their_export() {
    let sup = Supervisor::new(engine().clone());
    sup.start("exports", &artifact(INSTANCE_PLUGIN), opts("minimal"))
        .await
        .unwrap();
    let e = sup.call("exports", "missing", &[]).await.unwrap_err();
    assert_eq!(e.to_string(), "no exported function `missing`");
    let e = sup.call("exports", "run", &[]).await.unwrap_err();
    assert!(matches!(e, InstanceError::BadCall { .. }), "{e}");
    // A command's run export is reachable by its interface path.
    sup.start("cmd", &artifact(CLI_HELLO), opts("compute"))
        .await
        .unwrap();
    let r = sup
        .call("cmd", "wasi:cli/run@0.2.0#run", &[])
        .await
        .unwrap();
    assert_eq!(r.len(), 1);
}

#[tokio::test]
async fn revoking_a_tenant_stops_a_live_instance_at_its_next_broker_call() {
    let sup = Supervisor::for_tenant(engine().clone(), "revoked-mid-session").unwrap();
    sup.start("live", &artifact(INSTANCE_PLUGIN), opts("minimal"))
        .await
        .unwrap();
    assert_eq!(
        sup.call_run("live", "kv-set:a=1").await.unwrap(),
        Ok("ok".into())
    );
    let revocations = engine().cadence().revocations();
    revocations.revoke("revoked-mid-session").unwrap();
    assert_eq!(
        sup.call_run("live", "kv-get:a").await.unwrap(),
        Err("Error::Revoked".into())
    );
    // The instance itself is fine; only its broker calls are refused.
    assert_eq!(
        sup.call_run("live", "echo:still here").await.unwrap(),
        Ok("still here".into())
    );
    revocations.unrevoke("revoked-mid-session").unwrap();
    assert_eq!(
        sup.call_run("live", "kv-get:a").await.unwrap(),
        Ok("1".into())
    );
}

#[tokio::test]
async fn info_says_which_granted_caps_bind_nothing() {
    let sup = Supervisor::new(engine().clone());
    let info = sup
        .start("posix-notes", &artifact(DOCK_SESSION), opts("posix"))
        .await
        .unwrap();
    assert!(
        info.notes
            .contains(&"posix: binds nothing in the component lane".to_string()),
        "{:?}",
        info.notes
    );
    // parallel is served (by its broker): no note for it.
    assert!(
        !info.notes.iter().any(|n| n.starts_with("parallel")),
        "{:?}",
        info.notes
    );
    let info = sup
        .start("compute-notes", &artifact(DOCK_SESSION), opts("compute"))
        .await
        .unwrap();
    assert!(info.notes.is_empty(), "{:?}", info.notes);
}

/// An instance started under a stored grant, attacked: it reaches the
/// destination the grant names and no other (a name for the same
/// address included), the operator's narrowing from another handle on the
/// book reaches it at its next call while it keeps running, and one
/// millisecond past the grant's expiry no call runs at all.
#[tokio::test]
async fn instance_fetch() {
    use workbooks::grants::{Expiry, Lists, now_ms};
    let home = tempfile::tempdir().unwrap();
    let (addr, hits) = crate::loopback::upstream().await;
    let allowed = format!("http://{addr}");
    let (e, operator, id) = crate::loopback::granted_engine(home.path(), "acme", &allowed);
    let plugin = artifact(INSTANCE_FETCH);
    let subject = format!("sha256:{}", plugin.sha256_hex());
    let sup = Supervisor::for_tenant(e.clone(), "acme").unwrap();
    let start = StartOptions {
        scope: Some(e.granted_scope(&id, "acme", &subject).unwrap()),
        ..opts("network")
    };
    sup.start("fetcher", &plugin, start).await.unwrap();
    let fetch = |url: String| {
        let sup = &sup;
        async move { sup.call_run("fetcher", &url).await }
    };
    assert_eq!(
        fetch(format!("{allowed}/")).await.unwrap(),
        Ok("200 2".into())
    );
    let port = addr.port();
    let refused = fetch(format!("http://localhost:{port}/")).await.unwrap();
    let why = format!("grant {id}: net scope allows {allowed}; refused http://localhost:{port}/");
    assert!(
        refused.as_ref().is_err_and(|e| e.contains(&why)),
        "{refused:?}"
    );
    // Narrowed to nothing from another handle: the running instance's next
    // fetch is refused.
    let drop = Lists {
        net: vec![allowed.clone()],
        ..Lists::default()
    };
    operator
        .narrow(&id, &Lists::default(), &drop, Expiry::Keep, "test")
        .unwrap();
    tokio::time::sleep(workbooks::limits::GRANT_REFRESH_INTERVAL * 2).await;
    let narrowed = fetch(format!("{allowed}/")).await.unwrap();
    assert!(
        narrowed
            .as_ref()
            .is_err_and(|e| e.contains(&format!("grant {id}"))),
        "{narrowed:?}"
    );
    // Expired: not even a call that reaches nothing runs.
    let at = now_ms() + 1;
    let nothing = Lists::default();
    operator
        .narrow(&id, &nothing, &nothing, Expiry::At(at), "test")
        .unwrap();
    while now_ms() <= at {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    tokio::time::sleep(workbooks::limits::GRANT_REFRESH_INTERVAL * 2).await;
    let expired = sup.call_run("fetcher", "not a url").await.unwrap_err();
    assert!(matches!(expired, InstanceError::Grant(_)), "{expired}");
    assert!(
        expired
            .to_string()
            .contains(&format!("grant {id} expired at"))
    );
    assert_eq!(hits.load(std::sync::atomic::Ordering::SeqCst), 1);
    let audit = e.cadence().audit().summary();
    assert_eq!(
        audit.counts.get("grant_expired").copied(),
        Some(1),
        "{audit:?}"
    );
}
