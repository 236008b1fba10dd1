//! Docking: every profile × every implemented interface instantiates iff
//! granted, and every refusal names the capability.

use crate::common::{artifact, engine, ok_stdout, run, run_narrowed};
use guest_artifacts::*;
use workbooks::{Cap, DockError, Grant, Profile};

guest_artifacts::foreach_dock!(assert_test_exists);

/// (probe, the cap its engine import needs, its arguments, exactly what it
/// prints when it runs)
const INTERFACE_PROBES: &[(&str, Cap, &[&str], &str)] = &[
    (DOCK_VFS, Cap::Vfs, &[], "vfs works\n"),
    (DOCK_KV, Cap::Kv, &[], "kv works\n"),
    (
        DOCK_FS,
        Cap::Vfs,
        &["/"],
        "/: error: No such file or directory (os error 44)\n",
    ),
];

#[tokio::test]
async fn every_profile_and_interface_instantiates_iff_granted() {
    for &(probe, cap, args, prints) in INTERFACE_PROBES {
        for profile in Profile::ALL {
            let granted = profile.caps().contains(cap);
            match run(probe, profile, args).await {
                Ok(out) => {
                    assert!(granted, "{probe} ran under {profile} without {cap}");
                    assert_eq!(
                        crate::common::stdout(&out),
                        prints,
                        "{probe} under {profile}"
                    );
                }
                Err(f) => {
                    assert!(!granted, "{probe} refused under {profile}: {:?}", f);
                    let e = f.dock();
                    assert!(matches!(e, DockError::NotGranted { cap: c, .. } if c == cap));
                    let text = e.to_string();
                    assert!(
                        text.starts_with(&format!(
                            "capability not granted: {} (import ",
                            cap.word()
                        )),
                        "{text}"
                    );
                    assert!(
                        text.ends_with(&format!("under profile {profile}")),
                        "{text}"
                    );
                }
            }
        }
    }
}

#[tokio::test]
async fn narrowed_caps_take_interfaces_away() {
    // minimal grants both vfs and kv; narrowing removes each in turn.
    let e = run_narrowed(DOCK_KV, Profile::Minimal, &[Cap::Vfs])
        .await
        .unwrap_err()
        .dock();
    assert!(
        e.to_string().contains(
            "capability not granted: kv (import workbooks:engine/kv@0.1.0) under profile minimal"
        ),
        "{e}"
    );
    let e = run_narrowed(DOCK_VFS, Profile::Minimal, &[Cap::Kv])
        .await
        .unwrap_err()
        .dock();
    assert!(
        e.to_string()
            .contains("capability not granted: vfs (import workbooks:engine/vfs@0.1.0)"),
        "{e}"
    );
    let e = run_narrowed(DOCK_FS, Profile::Posix, &[Cap::Kv])
        .await
        .unwrap_err()
        .dock();
    assert!(
        e.to_string()
            .contains("capability not granted: vfs (import wasi:filesystem/"),
        "{e}"
    );
    assert_eq!(
        ok_stdout(run_narrowed(DOCK_KV, Profile::Minimal, &[Cap::Kv]).await),
        "kv works\n"
    );
}

#[tokio::test]
async fn dock_session() {
    for profile in Profile::ALL {
        let out = ok_stdout(run(DOCK_SESSION, profile, &[]).await);
        assert_eq!(
            out,
            format!(
                "id=probe tenant=default profile={profile} caps={}\n",
                profile.caps().words().join(",")
            )
        );
    }
    // An unknown profile runs, fail-closed, as compute.
    let grant = Grant::profile("superuser");
    assert!(grant.profile.fell_back());
    let d = engine().dock(&artifact(DOCK_SESSION), &grant).unwrap();
    assert_eq!(d.receipt().profile_requested, "superuser");
    assert_eq!(d.receipt().profile_effective, Profile::Compute);
}

#[tokio::test]
async fn dock_vfs() {
    assert_eq!(
        ok_stdout(run(DOCK_VFS, Profile::Compute, &[]).await),
        "vfs works\n"
    );
}

#[tokio::test]
async fn dock_kv() {
    assert_eq!(
        ok_stdout(run(DOCK_KV, Profile::Minimal, &[]).await),
        "kv works\n"
    );
    // The receipt shows the broker composed in and the primitive linked in
    // place of the engine interface.
    let d = engine()
        .dock(&artifact(DOCK_KV), &Grant::profile("minimal"))
        .unwrap();
    let r = d.receipt();
    assert_eq!(r.brokers.len(), 1);
    assert_eq!(r.brokers[0].serves, "workbooks:engine/kv@0.1.0");
    assert!(r.composed_sha256.is_some());
    assert!(r.linked.iter().any(|i| i == "workbooks:host/storage@0.1.0"));
    assert!(
        !r.linked
            .iter()
            .any(|i| i.starts_with("workbooks:engine/kv"))
    );
    let kv = r
        .imports
        .iter()
        .find(|i| i.name == "workbooks:engine/kv@0.1.0")
        .unwrap();
    assert_eq!(
        (kv.cap.as_str(), kv.served_by.as_str()),
        ("kv", "broker workbooks:kv-broker")
    );
}

#[tokio::test]
async fn dock_fs() {
    // wasi:filesystem is linked under vfs but sees no directory by default:
    // both listings fail, and they are the only lines.
    let out = ok_stdout(run(DOCK_FS, Profile::Posix, &["/", "."]).await);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    assert!(lines[0].starts_with("/: error: "), "{out}");
    assert!(lines[1].starts_with(".: error: "), "{out}");
}

#[tokio::test]
async fn dock_host_storage() {
    for profile in Profile::ALL {
        let e = run(DOCK_HOST_STORAGE, profile, &[])
            .await
            .unwrap_err()
            .dock();
        assert!(matches!(e, DockError::HostPrimitive { .. }), "{e}");
        assert!(
            e.to_string().contains("workbooks:host/storage@0.1.0"),
            "{e}"
        );
    }
}

#[tokio::test]
async fn dock_unknown_import() {
    for profile in Profile::ALL {
        let e = run(DOCK_UNKNOWN_IMPORT, profile, &[])
            .await
            .unwrap_err()
            .dock();
        assert_eq!(
            e.to_string(),
            "unknown imports refused: evil:probe/backdoor"
        );
    }
}

#[test]
fn core_modules_are_refused_with_a_clear_error() {
    let module = workbooks::Artifact::from_bytes(b"\0asm\x01\0\0\0".to_vec()).unwrap();
    let e = engine()
        .dock(&module, &Grant::profile("posix"))
        .unwrap_err();
    assert!(matches!(e, DockError::NotAComponent), "{e}");
}
