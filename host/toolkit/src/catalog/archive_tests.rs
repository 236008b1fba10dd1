//! Each archive kind gives up its entry, and each refuses a path that
//! leaves it, a link, an entry past the cap and a bomb.

use super::*;
use std::io::Write;

const WASM: &[u8] = b"\0asm\x01\0\0\0";

/// Appends `entries` (path, bytes) as regular files.
pub(in crate::catalog) fn files<W: Write>(tar: &mut tar::Builder<W>, entries: &[(&str, &[u8])]) {
    for (path, bytes) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append_data(&mut header, path, *bytes).unwrap();
    }
}

/// A gzip tar holding `entries` and a symlink `package/link.wasm` →
/// `../../etc/passwd`.
fn tgz(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    files(&mut tar, entries);
    let mut link = tar::Header::new_gnu();
    link.set_entry_type(tar::EntryType::Symlink);
    link.set_size(0);
    tar.append_link(&mut link, "package/link.wasm", "../../etc/passwd")
        .unwrap();
    tar.into_inner().unwrap().finish().unwrap()
}

/// A Debian package whose `data.tar.xz` holds `entries`.
fn deb(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut tar = tar::Builder::new(Vec::new());
    files(&mut tar, entries);
    let data = tar.into_inner().unwrap();
    let mut xz = Vec::new();
    lzma_rs::xz_compress(&mut std::io::Cursor::new(data), &mut xz).unwrap();
    let mut ar = ar::Builder::new(Vec::new());
    for (id, bytes) in [
        ("debian-binary", b"2.0\n".to_vec()),
        ("control.tar.xz", Vec::new()),
        ("data.tar.xz", xz),
    ] {
        let header = ar::Header::new(id.as_bytes().to_vec(), bytes.len() as u64);
        ar.append(&header, bytes.as_slice()).unwrap();
    }
    ar.into_inner().unwrap()
}

fn zipped(path: &str, bytes: &[u8]) -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    zip.start_file(path, zip::write::SimpleFileOptions::default())
        .unwrap();
    zip.write_all(bytes).unwrap();
    zip.finish().unwrap().into_inner()
}

#[test]
fn each_kind_gives_up_the_entry_at_the_rows_path() {
    let tgz = tgz(&[("package/README", b"hi"), ("./package/bin/x.wasm", WASM)]);
    assert_eq!(
        Archive::Tgz
            .extract(&tgz, "package/bin/x.wasm", 64)
            .unwrap(),
        WASM
    );
    let deb = deb(&[("./usr/lib/x.wasm", WASM)]);
    assert_eq!(
        Archive::Deb.extract(&deb, "usr/lib/x.wasm", 64).unwrap(),
        WASM
    );
    let zip = zipped("bin/x.wasm", WASM);
    assert_eq!(Archive::Zip.extract(&zip, "bin/x.wasm", 64).unwrap(), WASM);
}

#[test]
fn a_path_that_leaves_the_archive_is_refused_before_anything_is_read() {
    for path in ["../x.wasm", "/etc/passwd", "a/../../x", "", ".", "a\\..\\x"] {
        let err = Archive::Tgz
            .extract(b"not even gzip", path, 64)
            .unwrap_err();
        assert!(err.contains("leaves the archive"), "{path}: {err}");
    }
    // `a/../b` stays inside lexically but is refused too: no `..` at all.
    assert!(inside("a/../b").is_err());
    assert_eq!(inside("./package/x.wasm").unwrap(), ["package", "x.wasm"]);
}

#[test]
fn a_link_in_the_archive_is_refused_not_followed() {
    let tgz = tgz(&[("package/x.wasm", WASM)]);
    let err = Archive::Tgz
        .extract(&tgz, "package/link.wasm", 64)
        .unwrap_err();
    assert!(err.contains("not a regular file"), "{err}");
}

#[test]
fn an_entry_past_the_cap_is_refused() {
    let big = vec![7u8; 100];
    for (kind, archive, path) in [
        (Archive::Tgz, tgz(&[("p/x.wasm", &big)]), "p/x.wasm"),
        (Archive::Deb, deb(&[("p/x.wasm", &big)]), "p/x.wasm"),
        (Archive::Zip, zipped("p/x.wasm", &big), "p/x.wasm"),
    ] {
        let err = kind.extract(&archive, path, 99).unwrap_err();
        assert_eq!(err, "p/x.wasm is more than 99 bytes", "{kind:?}");
    }
}

#[test]
fn a_bomb_stops_at_the_unpacked_cap_before_its_entry() {
    let filler = vec![0u8; 1 << 20];
    let entries: &[(&str, &[u8])] = &[("p/filler", &filler), ("p/x.wasm", WASM)];
    let gzipped = tgz(entries);
    assert!(gzipped.len() < 16 << 10, "{}", gzipped.len());
    // xz is unpacked whole, into a buffer held to the same cap.
    let mut tar = tar::Builder::new(Vec::new());
    files(&mut tar, entries);
    let mut xz = Vec::new();
    lzma_rs::xz_compress(
        &mut std::io::Cursor::new(tar.into_inner().unwrap()),
        &mut xz,
    )
    .unwrap();
    for (kind, archive) in [(Archive::Tgz, gzipped), (Archive::Txz, xz)] {
        let err = kind
            .extract_within(&archive, "p/x.wasm", 64, 512 << 10)
            .unwrap_err();
        assert!(err.contains("CATALOG_MAX_UNPACKED"), "{kind:?}: {err}");
        assert_eq!(
            kind.extract_within(&archive, "p/x.wasm", 64, 2 << 20)
                .unwrap(),
            WASM
        );
    }
}

#[test]
fn a_missing_entry_and_a_file_that_is_no_package_are_named() {
    let tgz = tgz(&[("p/x.wasm", WASM)]);
    let err = Archive::Tgz.extract(&tgz, "p/y.wasm", 64).unwrap_err();
    assert_eq!(err, "p/y.wasm: not in the archive");
    let err = Archive::Deb
        .extract(b"!<arch>\n", "p/x.wasm", 64)
        .unwrap_err();
    assert!(err.contains("no data.tar"), "{err}");
    let err = Archive::Deb
        .extract(b"plain text", "p/x.wasm", 64)
        .unwrap_err();
    assert!(err.starts_with("not a Debian package"), "{err}");
}

#[test]
fn the_kind_follows_the_urls_file_name() {
    assert_eq!(
        Archive::of_url("https://x/p-1-py3-none-any.whl"),
        Some(Archive::Zip)
    );
    assert_eq!(
        Archive::of_url("https://x/-/p-1.0.0.tgz"),
        Some(Archive::Tgz)
    );
    assert_eq!(
        Archive::of_url("https://x/lua-5.4.7.tar.gz?x=1"),
        Some(Archive::Tgz)
    );
    assert_eq!(Archive::of_url("https://x/p_1_all.deb"), Some(Archive::Deb));
    assert_eq!(Archive::of_url("https://x/p.wasm"), None);
}

#[test]
fn a_tree_is_unpacked_below_its_root_only_and_without_its_links() {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut tar = tar::Builder::new(gz);
    files(
        &mut tar,
        &[
            ("lua-5.4/src/lua.c", b"int main;"),
            ("lua-5.4/src/sub/x.h", b"#define X"),
            ("lua-5.4/README", b"outside the root"),
        ],
    );
    // Entries a stranger's tarball may hold: a link out, and a path that
    // climbs out of the root (written raw: the builder refuses `..`).
    let mut link = tar::Header::new_gnu();
    link.set_entry_type(tar::EntryType::Symlink);
    link.set_size(0);
    tar.append_link(&mut link, "lua-5.4/src/escape", "/etc")
        .unwrap();
    let mut climb = tar::Header::new_gnu();
    climb.as_gnu_mut().unwrap().name[..24].copy_from_slice(b"lua-5.4/src/../../pwned\0");
    climb.set_size(1);
    climb.set_mode(0o644);
    climb.set_cksum();
    tar.append(&climb, &b"x"[..]).unwrap();
    let archive = tar.into_inner().unwrap().finish().unwrap();

    let dest = tempfile::tempdir().unwrap();
    let tree = dest.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    let files = Archive::Tgz
        .unpack_tree(&archive, "lua-5.4/src", &tree)
        .unwrap();
    assert_eq!(files, 2);
    assert_eq!(std::fs::read(tree.join("lua.c")).unwrap(), b"int main;");
    assert!(tree.join("sub/x.h").is_file());
    assert!(!tree.join("README").exists() && !dest.path().join("README").exists());
    assert!(
        std::fs::symlink_metadata(tree.join("escape")).is_err(),
        "a link was created"
    );
    assert!(!dest.path().join("pwned").exists() && !tree.join("pwned").exists());
}

#[test]
fn a_file_name_is_one_plain_component() {
    assert!(is_file_name("wasi_stubs.c") && is_file_name("./in"));
    for bad in ["", ".", "..", "../x", "a/b", "/etc/passwd", "a\\b"] {
        assert!(!is_file_name(bad), "{bad}");
    }
}
