//! What the engine reads back from its home is checked before it is
//! trusted: the registry manifest, the compile cache (native code) and the
//! composition cache; and a home made by someone else is not trusted at
//! all.

use crate::common::{own_builder, own_engine, text};
use guest_artifacts::*;
use workbooks::commands::{ArgMode, RegistryError, Tier};
use workbooks::{Artifact, Engine, Grant, SessionOptions};

#[test]
fn an_entry_naming_a_path_outside_the_store_is_never_loaded() {
    let home = tempfile::tempdir().unwrap();
    let e = own_engine(home.path());
    let entry = e
        .registry()
        .register(
            "tool",
            std::fs::read(CLI_HELLO).unwrap(),
            ArgMode::Argv,
            Tier::Instance,
        )
        .unwrap();
    // An embedder building an entry by hand gets the same check.
    let forged = workbooks::commands::Entry {
        sha256: "../../../../etc/passwd".into(),
        ..entry
    };
    assert!(matches!(
        e.registry().load(&forged),
        Err(RegistryError::Integrity { .. })
    ));
}

/// Runs `probe` once under compute and returns its stdout and stderr.
async fn run(e: &Engine, probe: &str) -> String {
    let docked = e
        .dock(
            &Artifact::from_file(probe).unwrap(),
            &Grant::profile("compute"),
        )
        .unwrap();
    let out = e
        .run(&docked, SessionOptions::new("probe", "default"))
        .await
        .unwrap();
    format!("{}{}", text(&out.stdout), text(&out.stderr))
}

/// The compile-cache file of `probe` in `home`.
fn cwasm_of(home: &std::path::Path, probe: &str) -> std::path::PathBuf {
    let sha = Artifact::from_file(probe).unwrap().sha256_hex();
    std::fs::read_dir(home.join("cache/compiled"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .find(|p| {
            p.extension().is_some_and(|x| x == "cwasm")
                && p.file_name().unwrap().to_string_lossy().starts_with(&sha)
        })
        .expect("a compile cache entry")
}

#[tokio::test]
async fn a_swapped_compile_cache_entry_is_never_run() {
    let home = tempfile::tempdir().unwrap();
    {
        let e = own_engine(home.path());
        assert_eq!(run(&e, CLI_HELLO).await, "hello\n");
        assert_eq!(run(&e, CLI_EXIT_CODE).await, "out\nerr\n");
    }
    // Someone with write access to the cache puts one artifact's native
    // code in the other's place.
    let hello = cwasm_of(home.path(), CLI_HELLO);
    let code = cwasm_of(home.path(), CLI_EXIT_CODE);
    std::fs::copy(&code, &hello).unwrap();
    let e = own_engine(home.path());
    assert_eq!(
        run(&e, CLI_HELLO).await,
        "hello\n",
        "the engine ran code it never compiled for this artifact"
    );
    // The bad entry was replaced by a good one.
    assert_ne!(
        std::fs::read(&hello).unwrap(),
        std::fs::read(&code).unwrap()
    );
    // Another user's entry, seal and all, is no better: its seal is made
    // with their key, kept in their own state directory.
    let other = tempfile::tempdir().unwrap();
    let their_state = tempfile::tempdir().unwrap();
    {
        let e = own_builder(other.path())
            .state_dir(their_state.path())
            .build()
            .unwrap();
        assert_eq!(run(&e, CLI_HELLO).await, "hello\n");
    }
    let theirs = cwasm_of(other.path(), CLI_HELLO);
    std::fs::copy(&theirs, &hello).unwrap();
    std::fs::copy(theirs.with_extension("seal"), hello.with_extension("seal")).unwrap();
    let e = own_engine(home.path());
    assert_eq!(run(&e, CLI_HELLO).await, "hello\n");
    assert_ne!(
        std::fs::read(hello.with_extension("seal")).unwrap(),
        std::fs::read(theirs.with_extension("seal")).unwrap(),
        "the foreign seal was accepted"
    );
}

#[tokio::test]
async fn a_home_warmed_under_another_home_directory_is_compiled_anew() {
    // A home warmed by someone else (another user, or this user under
    // another HOME), then handed over: a tarball, a shared checkout.
    let home = tempfile::tempdir().unwrap();
    let (theirs, mine) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let under =
        |state: &std::path::Path| own_builder(home.path()).state_dir(state).build().unwrap();
    assert_eq!(run(&under(theirs.path()), CLI_HELLO).await, "hello\n");
    let entry = cwasm_of(home.path(), CLI_HELLO);
    let their_seal = std::fs::read(entry.with_extension("seal")).unwrap();
    // No key of theirs is in the home; the key that sealed it is not mine.
    assert!(!home.path().join("cache.key").exists());
    assert!(theirs.path().join("cache.key").is_file());
    assert_eq!(run(&under(mine.path()), CLI_HELLO).await, "hello\n");
    let my_seal = std::fs::read(entry.with_extension("seal")).unwrap();
    assert_ne!(my_seal, their_seal, "their compiled entry was trusted");
    assert_ne!(
        std::fs::read(theirs.path().join("cache.key")).unwrap(),
        std::fs::read(mine.path().join("cache.key")).unwrap()
    );
}

#[test]
fn a_home_or_a_cache_owned_by_another_user_is_refused_with_the_fix() {
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        rustix::process::geteuid().as_raw(),
        0,
        "this test gives a home to another user, which needs root"
    );
    let home = tempfile::tempdir().unwrap();
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::chown(home.path(), Some(65534), Some(65534)).unwrap();
    let err = own_builder(home.path()).build().unwrap_err().to_string();
    assert!(err.contains("belongs to uid 65534, not to you"), "{err}");
    assert!(err.contains("use a home of your own"), "{err}");
    // A home of one's own whose cache another user planted.
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join("cache")).unwrap();
    std::os::unix::fs::chown(home.path().join("cache"), Some(65534), None).unwrap();
    let err = own_builder(home.path()).build().unwrap_err().to_string();
    assert!(err.contains("cache belongs to uid 65534"), "{err}");
}

#[test]
fn a_home_other_users_may_write_is_refused_and_a_new_one_is_the_users_alone() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let mode = |p: &std::path::Path, m: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
    };
    // Writable by anyone.
    let home = tempfile::tempdir().unwrap();
    mode(home.path(), 0o777);
    let err = own_builder(home.path()).build().unwrap_err().to_string();
    assert!(
        err.contains("may be written by other users (mode 777)"),
        "{err}"
    );
    assert!(err.contains("chmod go-w"), "{err}");
    // Writable by a group that is not the user's own (a shared project
    // folder's).
    mode(home.path(), 0o775);
    std::os::unix::fs::chown(home.path(), None, Some(65534)).unwrap();
    let err = own_builder(home.path()).build().unwrap_err().to_string();
    assert!(err.contains("mode 775"), "{err}");
    // The user's own group (a private group under umask 002) is the user.
    std::os::unix::fs::chown(home.path(), None, Some(rustix::process::getegid().as_raw())).unwrap();
    own_builder(home.path()).build().unwrap();
    // A home others may enter, holding a store others may write.
    mode(home.path(), 0o755);
    std::fs::create_dir_all(home.path().join("store")).unwrap();
    mode(&home.path().join("store"), 0o777);
    let err = own_builder(home.path()).build().unwrap_err().to_string();
    assert!(err.contains("store may be written by other users"), "{err}");
    // A home the engine makes is the user's alone.
    let parent = tempfile::tempdir().unwrap();
    let made = parent.path().join("new-home");
    own_builder(&made).build().unwrap();
    assert_eq!(std::fs::metadata(&made).unwrap().mode() & 0o777, 0o700);
}

#[tokio::test]
async fn a_tampered_composition_is_discarded_and_composed_again() {
    let home = tempfile::tempdir().unwrap();
    let grant = Grant::profile("minimal");
    let probe = || Artifact::from_file(DOCK_KV).unwrap();
    {
        let e = own_engine(home.path());
        e.dock(&probe(), &grant).unwrap();
    }
    let dir = home.path().join("cache/composed");
    let entry = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    // The guest alone, without its broker, in the composition's place.
    std::fs::write(&entry, std::fs::read(DOCK_KV).unwrap()).unwrap();
    let e = own_engine(home.path());
    let docked = e.dock(&probe(), &grant).unwrap();
    let linked = &docked.receipt().linked;
    assert!(
        linked.iter().any(|i| i == "workbooks:host/kv@0.1.0"),
        "{linked:?}"
    );
    assert!(
        docked
            .receipt()
            .linked
            .iter()
            .all(|i| !i.starts_with("workbooks:engine/kv@")),
        "{:?}",
        docked.receipt().linked
    );
    let out = e
        .run(&docked, SessionOptions::new("probe", "default"))
        .await
        .unwrap();
    assert_eq!(text(&out.stdout), "kv works\n");
}

/// The composition-index files of `home`, each with its sealed bytes.
fn composition_indexes(home: &std::path::Path) -> Vec<(std::path::PathBuf, Vec<u8>)> {
    std::fs::read_dir(home.join("cache/composed-index"))
        .unwrap()
        .map(|entry| {
            let path = entry.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect()
}

#[tokio::test]
async fn a_cached_composition_docks_without_reading_its_composed_bytes() {
    let home = tempfile::tempdir().unwrap();
    let grant = Grant::profile("minimal");
    let probe = || Artifact::from_file(DOCK_KV).unwrap();
    let first = own_engine(home.path()).dock(&probe(), &grant).unwrap();
    assert_eq!(composition_indexes(home.path()).len(), 1);
    // Bytes no seal holds in the composition's place: a dock that read
    // them would throw them away and write the composition back.
    let composed = std::fs::read_dir(home.path().join("cache/composed"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::write(&composed, b"not read").unwrap();
    let e = own_engine(home.path());
    let docked = e.dock(&probe(), &grant).unwrap();
    assert_eq!(std::fs::read(&composed).unwrap(), b"not read");
    assert_eq!(docked.receipt(), first.receipt());
    let out = e
        .run(&docked, SessionOptions::new("probe", "default"))
        .await
        .unwrap();
    assert_eq!(text(&out.stdout), "kv works\n");
}

#[tokio::test]
async fn a_composition_index_taken_from_another_composition_is_never_trusted() {
    let home = tempfile::tempdir().unwrap();
    let grant = Grant::profile("minimal");
    let kv = || Artifact::from_file(DOCK_KV).unwrap();
    let (kv_receipt, queue_receipt) = {
        let e = own_engine(home.path());
        let kv = e.dock(&kv(), &grant).unwrap().receipt().clone();
        let queue = e
            .dock(&Artifact::from_file(DOCK_QUEUE).unwrap(), &grant)
            .unwrap()
            .receipt()
            .clone();
        (kv, queue)
    };
    let kv_sha = kv_receipt.composed_sha256.clone().unwrap();
    let queue_sha = queue_receipt.composed_sha256.clone().unwrap();
    assert_ne!(kv_sha, queue_sha);
    let indexes = composition_indexes(home.path());
    let holds = |bytes: &[u8], sha: &str| String::from_utf8_lossy(bytes).contains(sha);
    let (kv_index, _) = indexes.iter().find(|(_, b)| holds(b, &kv_sha)).unwrap();
    let (_, queue_bytes) = indexes.iter().find(|(_, b)| holds(b, &queue_sha)).unwrap();
    // The queue composition's index, validly sealed, under the kv one's
    // name: it would dock the queue guest's code for the kv guest.
    std::fs::write(kv_index, queue_bytes).unwrap();
    let e = own_engine(home.path());
    let docked = e.dock(&kv(), &grant).unwrap();
    assert_eq!(docked.receipt(), &kv_receipt);
    // Damaged, it is refused the same way.
    std::fs::write(kv_index, b"{\"sha256\":\"00\",\"linked\":[]}").unwrap();
    let e = own_engine(home.path());
    assert_eq!(e.dock(&kv(), &grant).unwrap().receipt(), &kv_receipt);
    let out = e
        .run(
            &e.dock(&kv(), &grant).unwrap(),
            SessionOptions::new("probe", "default"),
        )
        .await
        .unwrap();
    assert_eq!(text(&out.stdout), "kv works\n");
}
