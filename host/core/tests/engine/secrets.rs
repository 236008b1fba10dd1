//! secrets: sign with held keys; no way to read them; tenant isolation.

use crate::common::own_builder;
use guest_artifacts::*;
use workbooks::{Artifact, Engine, Grant, Secret, SecretKind, SessionOptions};

guest_artifacts::foreach_secrets!(assert_test_exists);

const HMAC_KEY: &[u8] = b"never-leaves-the-host";

const SEED: [u8; 32] = [7; 32];

fn engine(home: &tempfile::TempDir) -> Engine {
    own_builder(home.path())
        .secret(
            "acme",
            "mac",
            Secret::new(SecretKind::Hmac, HMAC_KEY.to_vec()).unwrap(),
        )
        .secret(
            "acme",
            "signer",
            Secret::new(SecretKind::Ed25519, SEED.to_vec()).unwrap(),
        )
        .build()
        .unwrap()
}

async fn s(e: &Engine, tenant: &str, args: &[&str]) -> String {
    let docked = e
        .dock(
            &Artifact::from_file(SECRETS_OPS).unwrap(),
            &Grant::profile("minimal"),
        )
        .unwrap();
    let mut opts = SessionOptions::new("secrets", tenant);
    opts.args = args.iter().map(|a| a.to_string()).collect();
    let out = e.run(&docked, opts).await.unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn secrets_ops() {
    use ed25519_dalek::Verifier;
    let home = tempfile::tempdir().unwrap();
    let e = engine(&home);
    let out = s(
        &e,
        "acme",
        &[
            "hmac", "mac", "payload", "sign", "signer", "payload", "pub", "signer",
        ],
    )
    .await;
    let lines: Vec<&str> = out.lines().collect();
    let expected_mac = Secret::new(SecretKind::Hmac, HMAC_KEY.to_vec())
        .unwrap()
        .hmac_sha256(b"payload")
        .unwrap();
    assert_eq!(lines[0], hex::encode(expected_mac));
    let key = ed25519_dalek::SigningKey::from_bytes(&SEED).verifying_key();
    assert_eq!(lines[2], hex::encode(key.to_bytes()));
    let sig = ed25519_dalek::Signature::from_slice(&hex::decode(lines[1]).unwrap()).unwrap();
    key.verify(b"payload", &sig).unwrap();
    // The key bytes appear in no output.
    for secret in [hex::encode(HMAC_KEY), hex::encode(SEED)] {
        assert!(!out.contains(&secret));
    }
}

#[tokio::test]
async fn another_tenant_cannot_use_a_secret_and_errors_name_only_the_secret() {
    let home = tempfile::tempdir().unwrap();
    let e = engine(&home);
    assert_eq!(
        s(&e, "other", &["hmac", "mac", "x"]).await,
        "error Error::NotFound(\"mac\")\n"
    );
    assert_eq!(
        s(&e, "acme", &["sign", "mac", "x"]).await,
        "error Error::WrongKind(\"hmac\")\n"
    );
    assert_eq!(
        s(&e, "acme", &["hmac", "signer", "x"]).await,
        "error Error::WrongKind(\"ed25519\")\n"
    );
    let audit = std::fs::read_to_string(home.path().join("audit.jsonl")).unwrap();
    assert!(audit.contains("secret_not_found"));
    assert!(!audit.contains(&hex::encode(HMAC_KEY)) && !audit.contains("never-leaves"));
}
