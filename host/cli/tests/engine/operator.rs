//! What an operator's own settings can make the host read or keep: a
//! configuration file that never ends, a tenant name that is a path.

use crate::common::{text, wbx, wbx_env};
use guest_artifacts::CLI_HELLO;

#[test]
fn a_tls_roots_file_that_never_ends_is_refused_by_its_cap_not_read_whole() {
    let home = tempfile::tempdir().unwrap();
    let o = wbx_env(
        home.path(),
        &["exec", CLI_HELLO],
        b"",
        &[("WB_TLS_CA_FILE", "/dev/zero")],
    );
    assert_eq!(o.status.code(), Some(64), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("WB_TLS_CA_FILE: longer than the 1048576 bytes"),
        "{}",
        text(&o.stderr)
    );
}

/// `WB_TLS_CA_FILE` is read as PEM: a file holding a key beside its
/// certificate runs (the key is passed over), one with no certificate or
/// with a section that is not PEM is a usage error saying which.
#[test]
fn a_tls_roots_file_is_read_as_pem_and_a_broken_one_is_named() {
    let home = tempfile::tempdir().unwrap();
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let key = cert.key_pair.serialize_pem();
    let files = [
        ("both.pem", format!("{key}{}", cert.cert.pem()), None),
        (
            "key.pem",
            key.clone(),
            Some("no PEM certificate in the file"),
        ),
        (
            "broken.pem",
            "-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n".into(),
            Some("a certificate is not PEM"),
        ),
    ];
    for (name, pem, refused) in files {
        let path = home.path().join(name);
        std::fs::write(&path, pem).unwrap();
        let env = [("WB_TLS_CA_FILE", path.to_str().unwrap())];
        let o = wbx_env(home.path(), &["exec", CLI_HELLO], b"", &env);
        match refused {
            None => assert_eq!(text(&o.stdout), "hello\n", "{name}: {}", text(&o.stderr)),
            Some(why) => {
                assert_eq!(o.status.code(), Some(64), "{name}: {}", text(&o.stderr));
                let said = format!("WB_TLS_CA_FILE: {why}");
                assert!(
                    text(&o.stderr).contains(&said),
                    "{name}: {}",
                    text(&o.stderr)
                );
            }
        }
    }
}

#[test]
fn a_tenant_name_that_is_a_path_is_not_revoked() {
    let home = tempfile::tempdir().unwrap();
    for name in ["../../x", "a/b", ""] {
        let o = wbx(home.path(), &["revoke", name], b"");
        assert_eq!(o.status.code(), Some(64), "{name}: {}", text(&o.stderr));
        assert!(
            text(&o.stderr).contains("invalid tenant name"),
            "{name}: {}",
            text(&o.stderr)
        );
    }
    // A good name still is, and it is the only one listed.
    let o = wbx(home.path(), &["revoke", "acme"], b"");
    assert_eq!(text(&o.stdout), "revoked acme\n", "{}", text(&o.stderr));
    let o = wbx(home.path(), &["audit", "--json"], b"");
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["revoked"], serde_json::json!(["acme"]), "{v}");
}
