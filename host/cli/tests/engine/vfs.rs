//! vfs from `wbx`: two tenants under one file never share a volume, and
//! a home's volumes from before they were scoped by tenant are refused
//! until adopted. (The volumes themselves: the core's tests.)

use crate::common::artifact;
use guest_artifacts::*;
use workbooks::{Grant, SessionOptions};

#[test]
fn wbx_exec_keeps_tenants_apart_under_the_same_file() {
    let home = tempfile::tempdir().unwrap();
    let exec = |tenant: &str, args: &[&str]| {
        let mut argv = vec!["exec", "--tenant", tenant, VFS_OPS, "--"];
        argv.extend_from_slice(args);
        let out = crate::common::wbx(home.path(), &argv, b"");
        assert!(out.status.success(), "{}", crate::common::text(&out.stderr));
        crate::common::text(&out.stdout)
    };
    assert_eq!(
        exec("alice", &["write", "workspace", "k", "alice"]),
        "Ok(())\n"
    );
    assert_eq!(
        exec("bob", &["read", "workspace", "k"]),
        "Error::NotFound\n"
    );
    assert_eq!(exec("alice", &["read", "workspace", "k"]), "alice\n");
}

/// `notes.txt` of the `run` instance's workspace, read as `tenant`.
async fn read_notes(e: &workbooks::Engine, tenant: &str) -> String {
    let docked = e
        .dock(&artifact(VFS_OPS), &Grant::profile("compute"))
        .unwrap();
    let mut opts = SessionOptions::new("run", tenant);
    opts.args = ["read", "workspace", "notes.txt"]
        .map(String::from)
        .to_vec();
    crate::common::stdout(&e.run(&docked, opts).await.unwrap())
}

/// The database of `home` as an engine from before volumes were scoped by
/// tenant left it: instance `run` with `notes.txt` in its workspace.
fn legacy_db(home: &std::path::Path) -> sled::Db {
    let db = sled::open(home.join("db")).unwrap();
    let mut value = 0u64.to_le_bytes().to_vec();
    value.extend_from_slice(b"old notes");
    db.open_tree("vfs/run")
        .unwrap()
        .insert(b"\x01notes.txt", value)
        .unwrap();
    db
}

#[tokio::test]
async fn unscoped_volumes_are_refused_until_given_to_their_tenant() {
    let home = tempfile::tempdir().unwrap();
    legacy_db(home.path()).flush().unwrap();
    let e = crate::common::own_engine(home.path());
    // Nobody gets the id, not even by guessing the owner.
    for tenant in ["alice", "bob"] {
        let out = read_notes(&e, tenant).await;
        assert!(
            out.contains("Unavailable") && out.contains("wbx vfs adopt run --tenant"),
            "{out}"
        );
    }
    assert_eq!(
        e.storage().unwrap().legacy_volumes(),
        vec!["run".to_string()]
    );
    drop(e);
    let out = crate::common::wbx(
        home.path(),
        &["vfs", "adopt", "run", "--tenant", "alice"],
        b"",
    );
    assert!(out.status.success(), "{}", crate::common::text(&out.stderr));
    let e = crate::common::own_engine(home.path());
    assert_eq!(read_notes(&e, "alice").await, "old notes\n");
    assert_eq!(read_notes(&e, "bob").await, "Error::NotFound\n");
    assert!(e.storage().unwrap().legacy_volumes().is_empty());
}

#[tokio::test]
async fn adopting_never_overwrites_a_tenants_volumes_and_dropping_deletes_the_old_ones() {
    let home = tempfile::tempdir().unwrap();
    {
        let db = legacy_db(home.path());
        // Alice already has volumes of her own under that id.
        db.open_tree("vfs/alice/run")
            .unwrap()
            .insert(b"\x01mine.txt", 0u64.to_le_bytes().to_vec())
            .unwrap();
        db.flush().unwrap();
    }
    let out = crate::common::wbx(
        home.path(),
        &["vfs", "adopt", "run", "--tenant", "alice"],
        b"",
    );
    assert_eq!(out.status.code(), Some(125));
    assert!(
        crate::common::text(&out.stderr).contains("adopting would overwrite them"),
        "{}",
        crate::common::text(&out.stderr)
    );
    let out = crate::common::wbx(home.path(), &["vfs", "legacy", "--json"], b"");
    assert_eq!(
        crate::common::text(&out.stdout).trim(),
        r#"{"legacy":["run"]}"#
    );
    let out = crate::common::wbx(home.path(), &["vfs", "drop-legacy", "run"], b"");
    assert!(out.status.success());
    let e = crate::common::own_engine(home.path());
    assert!(e.storage().unwrap().legacy_volumes().is_empty());
    assert_eq!(read_notes(&e, "alice").await, "Error::NotFound\n");
}
