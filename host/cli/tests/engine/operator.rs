//! What an operator's own settings can make the host read or keep: a
//! configuration file that never ends (read only by a command that
//! connects), a tenant name that is a path.

use crate::common::{text, wbx, wbx_env};
use guest_artifacts::CLI_HELLO;

/// A pull from nowhere in particular: it reads the roots file just before
/// it connects, so the file's errors come first.
const PULL: [&str; 2] = ["pull", "oci://127.0.0.1:9/tools/none:1"];

#[test]
fn a_tls_roots_file_is_not_read_by_a_command_that_never_connects_and_never_read_whole() {
    let home = tempfile::tempdir().unwrap();
    let endless = [("WB_TLS_CA_FILE", "/dev/zero")];
    let o = wbx_env(home.path(), &["exec", CLI_HELLO], b"", &endless);
    assert_eq!(text(&o.stdout), "hello\n", "{}", text(&o.stderr));
    let o = wbx_env(home.path(), &PULL, b"", &endless);
    assert_eq!(o.status.code(), Some(64), "{}", text(&o.stderr));
    let said = "the TLS roots file /dev/zero: longer than the 1048576 bytes";
    assert!(text(&o.stderr).contains(said), "{}", text(&o.stderr));
}

/// `WB_TLS_CA_FILE` is read as PEM: a file holding a key beside its
/// certificate is used (the key is passed over), one with no certificate
/// or with a section that is not PEM is a usage error naming the file and
/// saying which.
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
        let o = wbx_env(home.path(), &PULL, b"", &env);
        match refused {
            // Read and used: the pull goes on to the floor, which refuses
            // loopback.
            None => assert!(
                text(&o.stderr).contains("refused by the egress floor"),
                "{name}: {}",
                text(&o.stderr)
            ),
            Some(why) => {
                assert_eq!(o.status.code(), Some(64), "{name}: {}", text(&o.stderr));
                let said = format!("the TLS roots file {}: {why}", path.display());
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
