#![expect(clippy::unwrap_used, reason = "tests fail loudly by design")]

//! Push, pull and verify against a real registry: the CNCF distribution
//! server (Debian's `docker-registry`) on loopback, storage in a temp dir.

use std::sync::Arc;
use workbooks::identity::Identity;
use workbooks::{Cidr, Keyring, NetGuard};
use workbooks_oci::testing::DistributionServer;
use workbooks_oci::{Credentials, OciError, Transport, Trust, pull, push};

fn loopback_opened() -> NetGuard {
    NetGuard::new(
        vec![Cidr::parse("127.0.0.1/32").unwrap()],
        Arc::new(workbooks::egress::SystemResolver),
    )
}

fn transport() -> Transport {
    Transport::new(loopback_opened(), Vec::new(), Credentials::default())
}

/// Pulls through the opened floor.
async fn get(
    home: &std::path::Path,
    reference: &str,
    trust: &Trust,
) -> Result<workbooks_oci::Pulled, OciError> {
    pull(&transport(), home, reference, trust).await
}

/// Pushes through the opened floor.
async fn put(
    wasm: &[u8],
    reference: &str,
    signer: Option<&Identity>,
) -> Result<workbooks_oci::Pushed, OciError> {
    push(&transport(), wasm, reference, signer).await
}

fn signer(byte: u8) -> Identity {
    use base64::Engine as _;
    let seed = base64::engine::general_purpose::STANDARD.encode([byte; 32]);
    Identity::of_tenant(&Keyring::new(None, Default::default()), "t", Some(&seed)).unwrap()
}

/// A valid component, distinct per `name`.
fn component(name: &str) -> Vec<u8> {
    wat::parse_str(format!(
        r#"(component (core module (func (export "{name}"))))"#
    ))
    .unwrap()
}

fn store_files(home: &std::path::Path) -> usize {
    std::fs::read_dir(home.join("store")).map_or(0, |d| d.count())
}

#[tokio::test]
async fn a_pushed_component_pulls_back_by_tag_and_then_by_digest_with_the_registry_gone() {
    let server = DistributionServer::start();
    let wasm = component("hello");
    let me = signer(1);
    let pushed = put(&wasm, &server.reference("tools/hello:v1"), Some(&me))
        .await
        .unwrap();
    assert!(
        pushed.digest.starts_with("sha256:") && pushed.signer.as_deref() == Some(me.did.as_str())
    );
    let home = tempfile::tempdir().unwrap();
    let trust = Trust::of([me.did.clone()]).unwrap();
    let got = get(home.path(), &server.reference("tools/hello:v1"), &trust)
        .await
        .unwrap();
    assert_eq!(
        (got.digest.as_str(), got.cached),
        (pushed.digest.as_str(), false)
    );
    assert_eq!(std::fs::read(&got.path).unwrap(), wasm);
    assert_eq!(got.signers, vec![me.did.clone()]);
    let by_digest = server.reference(&format!("tools/hello@{}", pushed.digest));
    drop(server);
    let again = get(home.path(), &by_digest, &trust).await.unwrap();
    assert!(again.cached);
    assert_eq!(again.path, got.path);
}

#[tokio::test]
async fn a_loopback_registry_is_refused_until_the_operator_opens_it() {
    let server = DistributionServer::start();
    let closed = Transport::new(NetGuard::default(), Vec::new(), Credentials::default());
    let err = push(&closed, &component("x"), &server.reference("x:1"), None)
        .await
        .unwrap_err();
    assert!(matches!(err, OciError::Floor { .. }), "{err}");
    assert!(
        err.to_string().contains("WB_OPERATOR_ALLOW=127.0.0.1/32"),
        "{err}"
    );
    let home = tempfile::tempdir().unwrap();
    let err = pull(
        &closed,
        home.path(),
        &server.reference("x:1"),
        &Trust::default(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, OciError::Floor { .. }), "{err}");
}

#[tokio::test]
async fn a_blob_altered_in_the_registry_storage_is_refused_and_nothing_is_stored() {
    let server = DistributionServer::start();
    let wasm = component("original");
    put(&wasm, &server.reference("x:1"), None).await.unwrap();
    let layer = format!("sha256:{}", workbooks::identity::sha256_hex(&wasm));
    let evil = component("evil!!!!");
    assert_eq!(evil.len(), wasm.len());
    std::fs::write(server.blob_file(&layer), &evil).unwrap();
    let home = tempfile::tempdir().unwrap();
    let err = get(home.path(), &server.reference("x:1"), &Trust::default())
        .await
        .unwrap_err();
    assert!(matches!(err, OciError::DigestMismatch { .. }), "{err}");
    assert_eq!(store_files(home.path()), 0);
}

#[tokio::test]
async fn an_unsigned_or_strangers_artifact_is_refused_when_signers_are_required() {
    let server = DistributionServer::start();
    let (me, stranger) = (signer(1), signer(2));
    put(&component("a"), &server.reference("x:unsigned"), None)
        .await
        .unwrap();
    put(
        &component("b"),
        &server.reference("x:stranger"),
        Some(&stranger),
    )
    .await
    .unwrap();
    let trust = Trust::of([me.did.clone()]).unwrap();
    let home = tempfile::tempdir().unwrap();
    for (tag, found) in [
        ("unsigned", "no signature"),
        ("stranger", stranger.did.as_str()),
    ] {
        let err = get(home.path(), &server.reference(&format!("x:{tag}")), &trust)
            .await
            .unwrap_err();
        assert!(matches!(err, OciError::Unsigned { .. }), "{tag}: {err}");
        assert!(err.to_string().contains(found), "{tag}: {err}");
    }
    assert_eq!(store_files(home.path()), 0);
    // Pulled once without a policy, the record does not satisfy a later one.
    get(
        home.path(),
        &server.reference("x:stranger"),
        &Trust::default(),
    )
    .await
    .unwrap();
    let err = get(home.path(), &server.reference("x:stranger"), &trust)
        .await
        .unwrap_err();
    assert!(matches!(err, OciError::Unsigned { .. }), "{err}");
    // A second signer adds a signature; the first one stays.
    put(&component("b"), &server.reference("x:stranger"), Some(&me))
        .await
        .unwrap();
    let both = Trust::of([me.did.clone(), stranger.did.clone()]).unwrap();
    let fresh = tempfile::tempdir().unwrap();
    let got = get(fresh.path(), &server.reference("x:stranger"), &both)
        .await
        .unwrap();
    assert_eq!(got.signers.len(), 2, "{:?}", got.signers);
}

#[tokio::test]
async fn a_moved_tag_gives_the_new_bytes_and_the_recorded_digest_the_old() {
    let server = DistributionServer::start();
    let (v1, v2) = (component("one"), component("two"));
    let first = put(&v1, &server.reference("x:stable"), None).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let none = Trust::default();
    get(home.path(), &server.reference("x:stable"), &none)
        .await
        .unwrap();
    put(&v2, &server.reference("x:stable"), None).await.unwrap();
    let moved = get(home.path(), &server.reference("x:stable"), &none)
        .await
        .unwrap();
    assert_eq!(std::fs::read(&moved.path).unwrap(), v2);
    let pinned = get(
        home.path(),
        &server.reference(&format!("x@{}", first.digest)),
        &none,
    )
    .await
    .unwrap();
    assert_eq!(std::fs::read(&pinned.path).unwrap(), v1);
}

#[tokio::test]
async fn a_registry_requiring_credentials_refuses_none_and_wrong_ones() {
    let server = DistributionServer::start_with(&[("ann", "s3cret")]);
    let with = |user: &str, pw: &str| {
        Transport::new(
            loopback_opened(),
            Vec::new(),
            Credentials::default().with_user(&server.registry(), user.into(), pw.into()),
        )
    };
    let wasm = component("x");
    let reference = server.reference("private/x:1");
    for t in [transport(), with("ann", "wrong"), with("bob", "s3cret")] {
        let err = push(&t, &wasm, &reference, None).await.unwrap_err();
        assert!(matches!(err, OciError::Unauthorized { .. }), "{err}");
    }
    push(&with("ann", "s3cret"), &wasm, &reference, None)
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let err = get(home.path(), &reference, &Trust::default())
        .await
        .unwrap_err();
    assert!(matches!(err, OciError::Unauthorized { .. }), "{err}");
    let got = pull(
        &with("ann", "s3cret"),
        home.path(),
        &reference,
        &Trust::default(),
    )
    .await
    .unwrap();
    assert_eq!(std::fs::read(got.path).unwrap(), wasm);
}

#[tokio::test]
async fn an_image_that_is_not_a_wasm_artifact_is_refused_by_name() {
    use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
    let server = DistributionServer::start();
    let client = oci_client::Client::new(ClientConfig {
        protocol: ClientProtocol::HttpsExcept(vec![server.registry()]),
        ..ClientConfig::default()
    });
    let image: oci_client::Reference = format!("{}/image:1", server.registry()).parse().unwrap();
    let layer = ImageLayer::oci_v1(b"a tarball".to_vec(), None);
    let config = Config::oci_v1(b"{}".to_vec(), None);
    client
        .push(
            &image,
            &[layer],
            config,
            &oci_client::secrets::RegistryAuth::Anonymous,
            None,
        )
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let err = get(home.path(), &server.reference("image:1"), &Trust::default())
        .await
        .unwrap_err();
    assert!(matches!(err, OciError::NotWasm { .. }), "{err}");
    assert!(err.to_string().contains("config media type"), "{err}");
    let err = get(
        home.path(),
        &server.reference("absent:1"),
        &Trust::default(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, OciError::NotFound { .. }), "{err}");
    assert_eq!(store_files(home.path()), 0);
}

#[tokio::test]
async fn a_client_that_cannot_be_built_fails_rather_than_connecting_without_the_floor() {
    // The protocol crate's `Client::new` would fall back to a default
    // client with no proxy: with the floor closed, that one would reach
    // this loopback registry directly and push.
    let server = DistributionServer::start();
    let closed = Transport::new(
        NetGuard::default(),
        vec![b"not a certificate".to_vec()],
        Credentials::default(),
    );
    let err = push(&closed, &component("x"), &server.reference("x:1"), None)
        .await
        .unwrap_err();
    assert!(
        matches!(err, OciError::Registry { .. } | OciError::Floor { .. }),
        "{err}"
    );
    let home = tempfile::tempdir().unwrap();
    let err = get(home.path(), &server.reference("x:1"), &Trust::default())
        .await
        .unwrap_err();
    assert!(
        matches!(err, OciError::NotFound { .. }),
        "nothing was pushed: {err}"
    );
}
