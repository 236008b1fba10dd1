//! vfs: volumes, path escapes, size limits, tmp cleared on resume.

use crate::common::{artifact, engine, ok_stdout, run_with};
use guest_artifacts::*;
use workbooks::store::Volume;
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
