//! vfs: volumes, path escapes, size limits, tmp cleared on resume.

use crate::common::{artifact, engine, ok_stdout, run_with};
use guest_artifacts::*;
use workbooks::vfs::Volume;
use workbooks::{Grant, SessionOptions, StartOptions, Supervisor};

guest_artifacts::foreach_vfs!(assert_test_exists);

async fn vfs(id: &str, args: &[&str]) -> String {
    let mut opts = SessionOptions::new(id, "default");
    opts.args = args.iter().map(|a| a.to_string()).collect();
    ok_stdout(run_with(VFS_OPS, &Grant::profile("compute"), opts).await)
}

#[tokio::test]
async fn vfs_ops() {
    let out = vfs(
        "vfs-ops",
        &[
            "write",
            "workspace",
            "notes/a.md",
            "alpha",
            "write",
            "workspace",
            "notes/b.md",
            "beta!",
            "write",
            "memory",
            "notes/a.md",
            "remembered",
            "read",
            "workspace",
            "notes/a.md",
            "read",
            "memory",
            "notes/a.md",
            "ls",
            "workspace",
            "",
            "ls",
            "workspace",
            "notes",
            "stat",
            "workspace",
            "notes",
            "stat",
            "workspace",
            "notes/b.md",
            "rm",
            "workspace",
            "notes/a.md",
            "read",
            "workspace",
            "notes/a.md",
            "read",
            "workspace",
            "notes",
            "write",
            "workspace",
            "notes/b.md/c",
            "x",
            "write",
            "workspace",
            "notes",
            "x",
        ],
    )
    .await;
    assert_eq!(
        out,
        "Ok(())\nOk(())\nOk(())\nalpha\nremembered\nnotes:EntryKind::Directory:0\n\
         a.md:EntryKind::File:5,b.md:EntryKind::File:5\nEntryKind::Directory 0\nEntryKind::File 5\nOk(true)\nError::NotFound\nError::IsDirectory\n\
         Err(Error::NotDirectory)\nErr(Error::IsDirectory)\n"
    );
}

#[tokio::test]
async fn volumes_are_per_instance() {
    vfs("vfs-owner", &["write", "workspace", "mine.txt", "private"]).await;
    assert_eq!(
        vfs("vfs-other", &["read", "workspace", "mine.txt"]).await,
        "Error::NotFound\n"
    );
    assert_eq!(
        vfs("vfs-owner", &["read", "workspace", "mine.txt"]).await,
        "private\n"
    );
}

#[tokio::test]
async fn path_escapes_are_refused() {
    let long = "a/".repeat(600);
    let out = vfs(
        "vfs-escape",
        &[
            "read",
            "workspace",
            "../vfs-owner/mine.txt",
            "read",
            "workspace",
            "/etc/passwd",
            "write",
            "workspace",
            "a/../../x",
            "x",
            "write",
            "workspace",
            "nul\0byte",
            "x",
            "write",
            "workspace",
            &long,
            "x",
            "write",
            "workspace",
            "back\\slash",
            "x",
        ],
    )
    .await;
    let lines: Vec<&str> = out.lines().collect();
    let expect = [
        "`..`",
        "absolute",
        "`..`",
        "NUL",
        "longer than 1024",
        "backslash",
    ];
    assert_eq!(lines.len(), expect.len(), "{out}");
    for (line, why) in lines.iter().zip(expect) {
        assert!(
            line.contains("InvalidPath") && line.contains(why),
            "{line} should mention {why}"
        );
    }
}

#[tokio::test]
async fn files_are_capped_at_sixteen_mebibytes() {
    let out = vfs(
        "vfs-size",
        &[
            "writen", "tmp", "max.bin", "16777216", "writen", "tmp", "over.bin", "16777217",
        ],
    )
    .await;
    assert_eq!(out, "Ok(())\nErr(Error::FileTooLarge(16777216))\n");
}

#[tokio::test]
async fn tmp_is_cleared_on_resume_and_the_rest_persists() {
    let sup = Supervisor::new(engine().clone());
    let plugin = artifact(INSTANCE_PLUGIN);
    let opts = || StartOptions {
        profile: "minimal".into(),
        ..StartOptions::default()
    };
    sup.start("vfs-resume", &plugin, opts()).await.unwrap();
    sup.vfs_put("vfs-resume", Volume::Tmp, "scratch.txt", b"scratch")
        .unwrap();
    sup.vfs_put("vfs-resume", Volume::Workspace, "kept.txt", b"kept")
        .unwrap();
    sup.stop("vfs-resume").unwrap();
    sup.start("vfs-resume", &plugin, opts()).await.unwrap();
    assert!(
        sup.vfs_get("vfs-resume", Volume::Tmp, "scratch.txt")
            .is_err()
    );
    assert_eq!(
        sup.vfs_get("vfs-resume", Volume::Workspace, "kept.txt")
            .unwrap(),
        b"kept"
    );
}

/// One vfs operation through the probe, run directly as `tenant` with the
/// session id every `wbx run` stage has.
async fn vfs_as(tenant: &str, args: &[&str]) -> String {
    let mut opts = SessionOptions::new("run", tenant);
    opts.args = args.iter().map(|a| a.to_string()).collect();
    ok_stdout(run_with(VFS_OPS, &Grant::profile("compute"), opts).await)
}

#[tokio::test]
async fn two_tenants_with_the_same_instance_id_never_share_a_volume() {
    let read = ["read", "workspace", "secret.txt"];
    assert_eq!(
        vfs_as("iso-alice", &["write", "workspace", "secret.txt", "alice"]).await,
        "Ok(())\n"
    );
    // Bob, as the same id, neither reads nor overwrites Alice's file.
    assert_eq!(vfs_as("iso-bob", &read).await, "Error::NotFound\n");
    assert_eq!(
        vfs_as("iso-bob", &["write", "workspace", "secret.txt", "bob"]).await,
        "Ok(())\n"
    );
    assert_eq!(vfs_as("iso-alice", &read).await, "alice\n");
    assert_eq!(vfs_as("iso-bob", &read).await, "bob\n");
}

/// Runs the registered vfs probe `name` as `tenant` with `args` on `e`.
async fn command_as(e: &workbooks::Engine, name: &str, tenant: &str, args: &[&str]) -> String {
    let opts = workbooks::LineOptions {
        tenant: tenant.into(),
        ..workbooks::LineOptions::default()
    };
    let argv = args.iter().map(|a| a.to_string()).collect();
    let out = e.commands().run(name, argv, opts).await.unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn commands_in_process_and_in_a_child_reach_only_their_tenants_volumes() {
    use workbooks::commands::{ArgMode, Tier};
    let home = tempfile::tempdir().unwrap();
    let read = &["read", "workspace", "f.txt"];
    {
        // Children only: the parent never opens the database they use.
        let e = crate::common::own_builder(home.path())
            .child_binary(crate::CHILD)
            .build()
            .unwrap();
        let bytes = std::fs::read(VFS_OPS).unwrap();
        e.registry()
            .register("vfsop", bytes.clone(), ArgMode::Argv, Tier::Instance)
            .unwrap();
        e.registry()
            .register("vfsop-proc", bytes, ArgMode::Argv, Tier::OsProcess)
            .unwrap();
        let write = |who| ["write", "workspace", "f.txt", who];
        assert_eq!(
            command_as(&e, "vfsop-proc", "alice", &write("alice")).await,
            "Ok(())\n"
        );
        assert_eq!(
            command_as(&e, "vfsop-proc", "bob", read).await,
            "Error::NotFound\n"
        );
        assert_eq!(
            command_as(&e, "vfsop-proc", "bob", &write("bob")).await,
            "Ok(())\n"
        );
        assert_eq!(command_as(&e, "vfsop-proc", "alice", read).await, "alice\n");
    }
    // In process, the same tenant and session id name the same volume the
    // children wrote, and only that one.
    let e = crate::common::own_engine(home.path());
    assert_eq!(command_as(&e, "vfsop", "alice", read).await, "alice\n");
    assert_eq!(command_as(&e, "vfsop", "bob", read).await, "bob\n");
    assert_eq!(
        command_as(&e, "vfsop", "carol", read).await,
        "Error::NotFound\n"
    );
}

#[tokio::test]
async fn supervisors_of_two_tenants_keep_same_named_instances_apart() {
    use workbooks::InstanceError;
    let plugin = artifact(INSTANCE_PLUGIN);
    let opts = || StartOptions {
        profile: "minimal".into(),
        ..StartOptions::default()
    };
    let alice = Supervisor::for_tenant(engine().clone(), "sup-alice").unwrap();
    let bob = Supervisor::for_tenant(engine().clone(), "sup-bob").unwrap();
    alice.start("main", &plugin, opts()).await.unwrap();
    bob.start("main", &plugin, opts()).await.unwrap();
    alice
        .vfs_put("main", Volume::Workspace, "plan.txt", b"alice's plan")
        .unwrap();
    assert!(matches!(
        bob.vfs_get("main", Volume::Workspace, "plan.txt"),
        Err(InstanceError::Vfs(workbooks::vfs::VfsError::NotFound))
    ));
    assert_eq!(
        bob.call_run("main", "vfs-read:plan.txt").await.unwrap(),
        Err("Error::NotFound".into())
    );
    assert_eq!(
        bob.call_run("main", "session").await.unwrap(),
        Ok("main sup-bob minimal".into())
    );
    assert_eq!(
        alice.call_run("main", "vfs-read:plan.txt").await.unwrap(),
        Ok("alice's plan".into())
    );
    assert!(Supervisor::for_tenant(engine().clone(), "../bob").is_err());
}
