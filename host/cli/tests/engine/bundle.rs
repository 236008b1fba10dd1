//! Bundles: an instance's volumes and page ship into a signed `.wbundle`
//! and restore byte for byte into another instance; a bundle with a file
//! changed, added, removed or a manifest re-signed by someone else is
//! refused, and a refused restore writes nothing.

use crate::common::{own_engine, text, wbx};
use sha2::Digest as _;
use std::io::{Read, Write};
use workbooks::identity::Identity;
use workbooks::vfs::{Volume, Volumes};
use workbooks_toolkit::bundle::{self, BundleError};

const SEED_A: &str = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=";
const SEED_B: &str = "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=";

fn filled(volumes: &Volumes) {
    volumes
        .write(Volume::Workspace, "notes/today.md", b"# today\n")
        .unwrap();
    volumes
        .write(Volume::Workspace, "data.bin", &[0u8, 1, 2, 255])
        .unwrap();
    volumes
        .write(Volume::Memory, "facts.txt", b"the sky is blue")
        .unwrap();
}

fn shipped(volumes: &Volumes, id: &Identity) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    bundle::ship(
        volumes,
        Some(b"<html></html>"),
        &[],
        id,
        ("t", "a"),
        1,
        &mut out,
    )
    .unwrap();
    out.into_inner()
}

/// The bundle's entries, with `edit` applied to each (name, bytes); an
/// entry `edit` maps to None is dropped.
fn rewritten(
    bundle: &[u8],
    mut edit: impl FnMut(&str, Vec<u8>) -> Option<Vec<u8>>,
    extra: Option<(&str, &[u8])>,
) -> Vec<u8> {
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bundle)).unwrap();
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default();
    for i in 0..zip.len() {
        let mut f = zip.by_index(i).unwrap();
        let name = f.name().unwrap().into_owned();
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).unwrap();
        if let Some(bytes) = edit(&name, bytes) {
            out.start_file(name.as_str(), opts).unwrap();
            out.write_all(&bytes).unwrap();
        }
    }
    if let Some((name, bytes)) = extra {
        out.start_file(name, opts).unwrap();
        out.write_all(bytes).unwrap();
    }
    out.finish().unwrap().into_inner()
}

fn files_of(volumes: &Volumes) -> Vec<(Volume, String, Vec<u8>)> {
    Volume::ALL
        .into_iter()
        .flat_map(|v| volumes.files(v).map(move |f| f.map(|(p, b)| (v, p, b))))
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn a_bundle_restores_every_volume_and_the_page_byte_for_byte() {
    let home = tempfile::tempdir().unwrap();
    let engine = own_engine(home.path());
    let storage = engine.storage().unwrap();
    let source = storage.volumes("t", "a").unwrap();
    filled(&source);
    let id = Identity::of_tenant(engine.keyring(), "t", Some(SEED_A)).unwrap();
    let bytes = shipped(&source, &id);
    let target = storage.volumes("t", "b").unwrap();
    let restored = bundle::restore(
        std::io::Cursor::new(&bytes),
        &target,
        "b",
        Some(&id.did),
        None,
    )
    .unwrap();
    assert_eq!(restored.files, 3);
    assert_eq!(restored.page.as_deref(), Some(&b"<html></html>"[..]));
    assert_eq!(restored.manifest.signer, id.did);
    assert_eq!(files_of(&target), files_of(&source));
}

#[test]
fn a_tampered_bundle_is_refused_and_nothing_is_written() {
    let home = tempfile::tempdir().unwrap();
    let engine = own_engine(home.path());
    let storage = engine.storage().unwrap();
    let source = storage.volumes("t", "a").unwrap();
    filled(&source);
    let signer = Identity::of_tenant(engine.keyring(), "t", Some(SEED_A)).unwrap();
    let other = Identity::of_tenant(engine.keyring(), "u", Some(SEED_B)).unwrap();
    let good = shipped(&source, &signer);
    let manifest_of = |b: &[u8]| -> serde_json::Value {
        let mut zip = zip::ZipArchive::new(std::io::Cursor::new(b)).unwrap();
        let mut s = String::new();
        zip.by_name("manifest.json")
            .unwrap()
            .read_to_string(&mut s)
            .unwrap();
        serde_json::from_str(&s).unwrap()
    };
    // A file changed.
    let changed = rewritten(
        &good,
        |n, b| {
            Some(if n.ends_with("facts.txt") {
                b"the sky is pink".to_vec()
            } else {
                b
            })
        },
        None,
    );
    // A file added that the manifest does not list.
    let added = rewritten(
        &good,
        |_, b| Some(b),
        Some(("volumes/workspace/evil.sh", b"x")),
    );
    // A file removed.
    let removed = rewritten(&good, |n, b| (!n.ends_with("data.bin")).then_some(b), None);
    // The manifest edited to list the changed file, signature kept.
    let mut edited = manifest_of(&changed);
    for e in edited["manifest"]["entries"].as_array_mut().unwrap() {
        if e["path"].as_str().unwrap().ends_with("facts.txt") {
            e["sha256"] = serde_json::json!(hex::encode(sha2::Sha256::digest(b"the sky is pink")));
        }
    }
    // `bundle` with its manifest.json replaced by `manifest`.
    let with_manifest = |bundle: &[u8], manifest: &serde_json::Value| {
        rewritten(
            bundle,
            |n, b| {
                Some(if n == "manifest.json" {
                    serde_json::to_vec(manifest).unwrap()
                } else {
                    b
                })
            },
            None,
        )
    };
    let relisted = with_manifest(&changed, &edited);
    // The same edit re-signed by another key: valid, but not the pinned signer.
    let mut resigned = edited.clone();
    resigned["manifest"]["signer"] = serde_json::json!(other.did);
    let canonical = resigned["manifest"].to_string();
    resigned["signature"] = serde_json::json!(other.sign(canonical.as_bytes()).unwrap());
    let resigned = with_manifest(&changed, &resigned);
    // A path that leaves the volumes.
    let escaping = rewritten(
        &good,
        |_, b| Some(b),
        Some(("volumes/workspace/../../x", b"x")),
    );
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("changed", changed, "does not match its sha256"),
        ("added", added, "is not in the manifest"),
        ("removed", removed, "is missing"),
        ("relisted", relisted, "signature"),
        ("resigned", resigned, "not the pinned"),
        ("escaping", escaping, "is not in the manifest"),
    ];
    let target = storage.volumes("t", "b").unwrap();
    for (what, bytes, expect) in cases {
        let err = bundle::restore(
            std::io::Cursor::new(&bytes),
            &target,
            "b",
            Some(&signer.did),
            None,
        )
        .unwrap_err();
        assert!(
            matches!(err, BundleError::Tampered(_) | BundleError::Signature(_)),
            "{what}: {err}"
        );
        assert!(err.to_string().contains(expect), "{what}: {err}");
        assert!(files_of(&target).is_empty(), "{what} wrote files");
    }
    // Restoring over files already there is refused, and they stay.
    let err = bundle::restore(std::io::Cursor::new(&good), &source, "a", None, None).unwrap_err();
    assert!(matches!(err, BundleError::NotEmpty(_)), "{err}");
    assert_eq!(files_of(&source).len(), 3);
}

#[test]
fn wbx_bundle_ships_and_restores_and_refuses_a_wrong_pin() {
    let home = tempfile::tempdir().unwrap();
    {
        let engine = own_engine(home.path());
        filled(&engine.storage().unwrap().volumes("default", "nb").unwrap());
    }
    let o = wbx(
        home.path(),
        &["command", "register", "hello", guest_artifacts::CLI_HELLO],
        b"",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let o = wbx(home.path(), &["identity"], b"");
    let own_did = text(&o.stdout).lines().next().unwrap().to_string();
    assert!(own_did.starts_with("did:key:"), "{own_did}");
    let out = home.path().join("nb.wbundle");
    let page = home.path().join("page.html");
    std::fs::write(&page, "<p>hi</p>").unwrap();
    let o = wbx(
        home.path(),
        &[
            "bundle",
            "ship",
            "nb",
            "--command",
            "hello",
            "--page",
            page.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--json",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let shipped: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        shipped["files"], 5,
        "three volume files, the page, one command"
    );
    let sha = shipped["sha256"].as_str().unwrap().to_string();
    let wrong = "0".repeat(64);
    let o = wbx(
        home.path(),
        &[
            "bundle",
            "restore",
            out.to_str().unwrap(),
            "--id",
            "copy",
            "--sha256",
            &wrong,
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("artifact_integrity"),
        "{}",
        text(&o.stderr)
    );
    let page_out = home.path().join("restored.html");
    let o = wbx(
        home.path(),
        &[
            "bundle",
            "restore",
            out.to_str().unwrap(),
            "--id",
            "copy",
            "--sha256",
            &sha,
            "--page-out",
            page_out.to_str().unwrap(),
            "--commands",
            "--signer",
            &own_did,
            "--json",
        ],
        b"",
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let restored: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(restored["files"], 3);
    assert_eq!(restored["target"], "copy");
    // The bundle is this tenant's own: its command keeps its tier.
    assert_eq!(restored["commands"][0]["name"], "hello");
    assert_eq!(restored["commands"][0]["tier"], "instance");
    assert_eq!(std::fs::read_to_string(&page_out).unwrap(), "<p>hi</p>");
    // A second restore into the same instance is refused: it holds files now.
    let o = wbx(
        home.path(),
        &["bundle", "restore", out.to_str().unwrap(), "--id", "copy"],
        b"",
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("already holds files"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn shipped_commands_are_registered_again_one_tier_stronger_unless_the_bundle_is_ones_own() {
    use workbooks::commands::{ArgMode, Tier};
    let home = tempfile::tempdir().unwrap();
    let engine = own_engine(home.path());
    let storage = engine.storage().unwrap();
    let source = storage.volumes("t", "a").unwrap();
    filled(&source);
    let hello = std::fs::read(guest_artifacts::CLI_HELLO).unwrap();
    let entry = engine
        .registry()
        .register("hello", hello.clone(), ArgMode::Argv, Tier::Instance)
        .unwrap();
    let artifact = engine.registry().load(&entry).unwrap();
    let id = Identity::of_tenant(engine.keyring(), "t", Some(SEED_A)).unwrap();
    let ship = |entry: &workbooks::commands::Entry| {
        let mut out = std::io::Cursor::new(Vec::new());
        bundle::ship(
            &source,
            None,
            &[(entry.clone(), artifact.clone())],
            &id,
            ("t", "a"),
            1,
            &mut out,
        )
        .unwrap();
        out.into_inner()
    };
    let bytes = ship(&entry);
    for (own, tier) in [(true, Tier::Instance), (false, Tier::OsProcess)] {
        let other = tempfile::tempdir().unwrap();
        let there = own_engine(other.path());
        let target = there.storage().unwrap().volumes("t", "b").unwrap();
        let install = bundle::Install {
            registry: there.registry(),
            own,
        };
        let restored = bundle::restore(
            std::io::Cursor::new(&bytes),
            &target,
            "b",
            Some(&id.did),
            Some(install),
        )
        .unwrap();
        assert_eq!(restored.commands.len(), 1);
        let got = there.registry().get("hello").unwrap().unwrap();
        assert_eq!(got.tier, tier, "own: {own}");
        assert_eq!(got.sha256, entry.sha256);
    }
    // A command shipped under a built-in's name is refused before anything
    // is written.
    let mut grep = entry.clone();
    grep.name = "grep".into();
    let bytes = ship(&grep);
    let other = tempfile::tempdir().unwrap();
    let there = own_engine(other.path());
    let target = there.storage().unwrap().volumes("t", "b").unwrap();
    let install = bundle::Install {
        registry: there.registry(),
        own: true,
    };
    let err = bundle::restore(
        std::io::Cursor::new(&bytes),
        &target,
        "b",
        Some(&id.did),
        Some(install),
    )
    .unwrap_err();
    assert!(matches!(err, BundleError::Command { .. }), "{err}");
    assert!(err.to_string().contains("reserved"), "{err}");
    assert!(files_of(&target).is_empty());
    assert!(there.registry().get("grep").unwrap().is_none());
}

#[test]
fn a_strangers_bundle_never_replaces_a_command_nor_registers_one_unasked() {
    use workbooks::commands::{ArgMode, Tier};
    // Mallory ships `greet` (her bytes) and `qjs` (not the catalog's).
    let home = tempfile::tempdir().unwrap();
    let engine = own_engine(home.path());
    let source = engine.storage().unwrap().volumes("m", "a").unwrap();
    filled(&source);
    let mallory = Identity::of_tenant(engine.keyring(), "m", Some(SEED_B)).unwrap();
    let theirs = |name: &str| {
        let mut entry = engine
            .registry()
            .register(
                "theirs",
                std::fs::read(guest_artifacts::CLI_HELLO).unwrap(),
                ArgMode::Argv,
                Tier::Instance,
            )
            .unwrap();
        let artifact = engine.registry().load(&entry).unwrap();
        // Shipped under whatever name they like.
        entry.name = name.to_string();
        let mut out = std::io::Cursor::new(Vec::new());
        bundle::ship(
            &source,
            None,
            &[(entry, artifact)],
            &mallory,
            ("m", "a"),
            1,
            &mut out,
        )
        .unwrap();
        out.into_inner()
    };
    let greet = theirs("greet");
    // The operator's home, where `greet` is the operator's own.
    let ours = tempfile::tempdir().unwrap();
    let there = own_engine(ours.path());
    let mine = std::fs::read(guest_artifacts::CLI_CAT).unwrap();
    there
        .registry()
        .register("greet", mine, ArgMode::Argv, Tier::Instance)
        .unwrap();
    let before = there.registry().get("greet").unwrap().unwrap();
    let install = || {
        Some(bundle::Install {
            registry: there.registry(),
            own: false,
        })
    };
    let target = there.storage().unwrap().volumes("t", "b").unwrap();
    // Registering needs a pinned signer.
    let err =
        bundle::restore(std::io::Cursor::new(&greet), &target, "b", None, install()).unwrap_err();
    assert!(err.to_string().contains("needs a pinned signer"), "{err}");
    // Pinned, it still never replaces the operator's command; nothing is
    // written.
    let err = bundle::restore(
        std::io::Cursor::new(&greet),
        &target,
        "b",
        Some(&mallory.did),
        install(),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("`greet`: is registered already"),
        "{err}"
    );
    assert!(files_of(&target).is_empty());
    assert_eq!(there.registry().get("greet").unwrap().unwrap(), before);
    // Without being asked, its files are restored and its commands left.
    let restored = bundle::restore(std::io::Cursor::new(&greet), &target, "b", None, None).unwrap();
    assert!(restored.commands.is_empty());
    assert_eq!(there.registry().get("greet").unwrap().unwrap(), before);
    // A catalog name holds only the catalog's pin.
    let renamed = theirs("qjs");
    let fresh = there.storage().unwrap().volumes("t", "c").unwrap();
    let err = bundle::restore(
        std::io::Cursor::new(&renamed),
        &fresh,
        "c",
        Some(&mallory.did),
        install(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("`qjs`"), "{err}");
    assert!(there.registry().get("qjs").unwrap().is_none());
    assert!(files_of(&fresh).is_empty());
    // The very bytes the operator registered, shipped by a stranger (so
    // registered one tier stronger), are refused before anything is
    // written too: the operator's entry would change its tier.
    let same_bytes = there
        .registry()
        .register(
            "hello",
            std::fs::read(guest_artifacts::CLI_HELLO).unwrap(),
            ArgMode::Argv,
            Tier::Instance,
        )
        .unwrap();
    let hello = theirs("hello");
    let other = there.storage().unwrap().volumes("t", "d").unwrap();
    let err = bundle::restore(
        std::io::Cursor::new(&hello),
        &other,
        "d",
        Some(&mallory.did),
        install(),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("`hello`: is registered already"),
        "{err}"
    );
    assert!(files_of(&other).is_empty(), "a refused restore wrote files");
    assert_eq!(there.registry().get("hello").unwrap().unwrap(), same_bytes);
}

#[test]
fn a_bundle_with_more_entries_than_the_cap_is_refused_before_any_is_read() {
    let home = tempfile::tempdir().unwrap();
    let engine = own_engine(home.path());
    let target = engine.storage().unwrap().volumes("t", "b").unwrap();
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    for i in 0..=workbooks_toolkit::limits::BUNDLE_MAX_ENTRIES + 1 {
        out.start_file(
            format!("volumes/workspace/{i}"),
            zip::write::SimpleFileOptions::default(),
        )
        .unwrap();
    }
    let bytes = out.finish().unwrap().into_inner();
    let err = bundle::restore(std::io::Cursor::new(&bytes), &target, "b", None, None).unwrap_err();
    assert!(matches!(err, BundleError::TooLarge(_)), "{err}");
    assert!(files_of(&target).is_empty());
}

/// A central directory entry for `name` whose data is the local entry at
/// `offset` (method, crc and sizes as that entry has them).
fn central_entry(
    name: &str,
    f: &zip::read::ZipFile<'_, impl std::io::Read>,
    offset: u32,
) -> Vec<u8> {
    let mut e = Vec::new();
    e.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
    e.extend_from_slice(&20u16.to_le_bytes()); // made by
    e.extend_from_slice(&20u16.to_le_bytes()); // needed
    e.extend_from_slice(&0u16.to_le_bytes()); // flags
    let method: u16 = match f.compression() {
        zip::CompressionMethod::Stored => 0,
        _ => 8,
    };
    e.extend_from_slice(&method.to_le_bytes());
    e.extend_from_slice(&0u16.to_le_bytes()); // time
    e.extend_from_slice(&0x21u16.to_le_bytes()); // date: 1980-01-01
    e.extend_from_slice(&f.crc32().to_le_bytes());
    e.extend_from_slice(&(f.compressed_size() as u32).to_le_bytes());
    e.extend_from_slice(&(f.size() as u32).to_le_bytes());
    e.extend_from_slice(&(name.len() as u16).to_le_bytes());
    e.extend_from_slice(&[0; 8]); // extra, comment, disk, internal attributes
    e.extend_from_slice(&0u32.to_le_bytes()); // external attributes
    e.extend_from_slice(&offset.to_le_bytes());
    e.extend_from_slice(name.as_bytes());
    e
}

/// An attacker's bundle: a manifest they signed listing `copies` files
/// of `each` zero bytes, and an archive whose directory names one
/// deflated stream of them `copies` times (each entry's bytes are the
/// same bytes of the archive).
fn overlapping_bundle(copies: usize, each: usize) -> Vec<u8> {
    let keyring = workbooks::Keyring::new(None, Default::default());
    let attacker = Identity::of_tenant(&keyring, "mallory", Some(SEED_B)).unwrap();
    let zeros = vec![0u8; each];
    let sha = hex::encode(sha2::Sha256::digest(&zeros));
    let names: Vec<String> = (0..copies)
        .map(|i| format!("volumes/workspace/f{i}"))
        .collect();
    let manifest = bundle::BundleManifest {
        format: bundle::FORMAT.into(),
        tenant: "mallory".into(),
        instance: "bomb".into(),
        signer: attacker.did.clone(),
        created_at: 1,
        entries: names
            .iter()
            .map(|n| bundle::BundleEntry {
                path: n.clone(),
                size: each as u64,
                sha256: sha.clone(),
            })
            .collect(),
        commands: Vec::new(),
    };
    let signature = attacker
        .sign(&workbooks::identity::canonical_json(&manifest))
        .unwrap();
    let signed = serde_json::json!({"manifest": manifest, "signature": signature});
    // One real entry of each kind, written by the zip crate.
    let mut out = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let deflated = zip::write::SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated);
    out.start_file(names[0].as_str(), deflated).unwrap();
    out.write_all(&zeros).unwrap();
    let stored =
        zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    out.start_file("manifest.json", stored).unwrap();
    out.write_all(signed.to_string().as_bytes()).unwrap();
    let real = out.finish().unwrap().into_inner();
    // The same local entries, under a directory of the attacker's.
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(real.clone())).unwrap();
    let start = zip.central_directory_start() as usize;
    let mut bytes = real[..start].to_vec();
    let mut directory = Vec::new();
    let kernel = zip.by_index_raw(0).unwrap();
    let kernel_at = kernel.header_start() as u32;
    for name in &names {
        directory.extend(central_entry(name, &kernel, kernel_at));
    }
    drop(kernel);
    let m = zip.by_index_raw(1).unwrap();
    directory.extend(central_entry("manifest.json", &m, m.header_start() as u32));
    let count = (copies + 1) as u16;
    let directory_at = bytes.len() as u32;
    bytes.extend_from_slice(&directory);
    bytes.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    bytes.extend_from_slice(&[0; 4]); // this disk, the directory's disk
    bytes.extend_from_slice(&count.to_le_bytes());
    bytes.extend_from_slice(&count.to_le_bytes());
    bytes.extend_from_slice(&(directory.len() as u32).to_le_bytes());
    bytes.extend_from_slice(&directory_at.to_le_bytes());
    bytes.extend_from_slice(&0u16.to_le_bytes()); // comment
    bytes
}

#[test]
fn entries_that_share_the_archives_bytes_are_refused_before_any_is_inflated() {
    let home = tempfile::tempdir().unwrap();
    let engine = own_engine(home.path());
    let target = engine.storage().unwrap().volumes("t", "b").unwrap();
    // 40 names for one 8 MiB stream: 320 MiB of inflation from a bundle
    // of a few kilobytes, every entry matching its listed size and hash.
    let bomb = overlapping_bundle(40, 8 << 20);
    assert!(bomb.len() < 64 << 10, "{} bytes", bomb.len());
    let err = bundle::restore(std::io::Cursor::new(&bomb), &target, "b", None, None).unwrap_err();
    assert!(
        err.to_string().contains("share bytes of the archive"),
        "{err}"
    );
    assert!(files_of(&target).is_empty());
    // More listed than the cap in all is refused by the listing alone.
    let bomb = overlapping_bundle(70, 8 << 20);
    let err = bundle::restore(std::io::Cursor::new(&bomb), &target, "b", None, None).unwrap_err();
    assert!(matches!(err, BundleError::TooLarge(_)), "{err}");
    assert!(files_of(&target).is_empty());
}

#[test]
fn an_entry_declaring_another_size_than_its_listing_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let engine = own_engine(home.path());
    let source = engine.storage().unwrap().volumes("t", "a").unwrap();
    filled(&source);
    let keyring = workbooks::Keyring::new(None, Default::default());
    let id = Identity::of_tenant(&keyring, "t", Some(SEED_A)).unwrap();
    let good = shipped(&source, &id);
    // The data file's bytes are kept but it is written again under the
    // zip crate's own header: its declared size is now 5, the listing 4.
    let bad = rewritten(
        &good,
        |name, bytes| {
            Some(if name == "volumes/workspace/data.bin" {
                b"extra".to_vec()
            } else {
                bytes
            })
        },
        None,
    );
    let target = engine.storage().unwrap().volumes("t", "b").unwrap();
    let err = bundle::restore(std::io::Cursor::new(&bad), &target, "b", None, None).unwrap_err();
    assert!(
        err.to_string()
            .contains("declares 5 bytes; the manifest lists 4"),
        "{err}"
    );
    assert!(files_of(&target).is_empty());
}
