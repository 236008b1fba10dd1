//! `wbx secret`: a key set from the CLI is one the engine signs with and
//! never shows. (The secrets cap itself: the core's tests.)

use crate::common::{text, wbx};
use guest_artifacts::*;
use workbooks::{Secret, SecretKind};

#[test]
fn wbx_secret_set_keeps_a_key_the_engine_can_sign_with_but_never_shows() {
    let home = tempfile::tempdir().unwrap();
    let out = wbx(
        home.path(),
        &["secret", "set", "acme", "cli-mac", "--kind", "hmac"],
        b"cli-key-bytes",
    );
    assert!(out.status.success());
    assert!(!text(&out.stdout).contains("cli-key-bytes"));
    let list = wbx(home.path(), &["secret", "list", "acme"], b"");
    assert_eq!(text(&list.stdout), "cli-mac\tHmac\n");
    let json = wbx(home.path(), &["secret", "list", "acme", "--json"], b"");
    assert_eq!(
        text(&json.stdout),
        "[{\"bindings\":[],\"kind\":\"hmac\",\"name\":\"cli-mac\"}]\n"
    );
    let out = wbx(
        home.path(),
        &[
            "exec",
            "--profile",
            "minimal",
            "--tenant",
            "acme",
            SECRETS_OPS,
            "--",
            "hmac",
            "cli-mac",
            "m",
        ],
        b"",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = text(&out.stdout);
    let expected = Secret::new(SecretKind::Hmac, b"cli-key-bytes".to_vec())
        .unwrap()
        .hmac_sha256(b"m")
        .unwrap();
    assert_eq!(out.trim(), hex::encode(expected));
}
