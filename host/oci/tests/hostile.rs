#![expect(clippy::unwrap_used, reason = "tests fail loudly by design")]

//! A hostile registry: one that answers the protocol to steer the host
//! elsewhere or to make it read without end. Each test serves exactly one
//! attack from a small server on loopback.

use sha2::{Digest, Sha256};
use std::sync::Arc;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use workbooks::{Cidr, NetGuard};
use workbooks_oci::{Credentials, OciError, Transport, Trust, pull};

fn digest(bytes: &[u8]) -> String {
    format!("sha256:{}", hex::encode(Sha256::digest(bytes)))
}

/// A wasm manifest whose one layer is `size` bytes of `layer_digest`.
fn manifest(layer_digest: &str, size: u64) -> Vec<u8> {
    serde_json::json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": { "mediaType": workbooks_oci::WASM_CONFIG_MEDIA_TYPE, "digest": digest(b"{}"), "size": 2 },
        "layers": [{ "mediaType": workbooks_oci::WASM_LAYER_MEDIA_TYPE, "digest": layer_digest, "size": size }],
    })
    .to_string()
    .into_bytes()
}

/// What the registry sends for the manifest and for the blob.
#[derive(Clone)]
enum Attack {
    /// The manifest is served; the blob redirects to `location`.
    Redirect(&'static str),
    /// The manifest is this body.
    Manifest(Vec<u8>),
    /// The manifest never ends (a chunked body).
    EndlessManifest,
    /// The blob is longer than the manifest says.
    LongBlob,
    /// Every answer is right, and each comes after this pause.
    Slow(std::time::Duration),
}

/// Serves `attack` on a loopback port; its `oci://` base.
async fn hostile(attack: Attack) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("127.0.0.1:{}", listener.local_addr().unwrap().port());
    tokio::spawn(async move {
        while let Ok((mut conn, _)) = listener.accept().await {
            let attack = attack.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut b = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if conn.read(&mut b).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(b[0]);
                }
                let line = String::from_utf8_lossy(&head)
                    .lines()
                    .next()
                    .unwrap_or("")
                    .to_string();
                let small = b"tiny".to_vec();
                let body = match &attack {
                    Attack::Manifest(m) => m.clone(),
                    Attack::LongBlob => manifest(&digest(&small), small.len() as u64),
                    _ => manifest(&digest(&small), small.len() as u64),
                };
                if let Attack::Slow(pause) = attack {
                    tokio::time::sleep(pause).await;
                }
                let is_head = line.starts_with("HEAD");
                let reply: Vec<u8> = if line.contains("/manifests/") {
                    if matches!(attack, Attack::EndlessManifest) && !is_head {
                        let _ = conn
                            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/vnd.oci.image.manifest.v1+json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n")
                            .await;
                        let chunk = format!("{:x}\r\n{}\r\n", 1 << 16, " ".repeat(1 << 16));
                        loop {
                            if conn.write_all(chunk.as_bytes()).await.is_err() {
                                return;
                            }
                        }
                    }
                    let mut r = format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/vnd.oci.image.manifest.v1+json\r\ndocker-content-digest: {}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                        digest(&body),
                        body.len()
                    )
                    .into_bytes();
                    if !is_head {
                        r.extend_from_slice(&body);
                    }
                    r
                } else if line.contains("/blobs/") {
                    match &attack {
                        Attack::Redirect(to) => format!(
                            "HTTP/1.1 307 Temporary Redirect\r\nlocation: {to}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                        )
                        .into_bytes(),
                        Attack::Slow(_) => {
                            let mut r = format!(
                                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                                small.len()
                            )
                            .into_bytes();
                            r.extend_from_slice(&small);
                            r
                        }
                        _ => {
                            let long = vec![b'x'; 1 << 20];
                            let mut r = format!(
                                "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                                long.len()
                            )
                            .into_bytes();
                            r.extend_from_slice(&long);
                            r
                        }
                    }
                } else {
                    b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}".to_vec()
                };
                let _ = conn.write_all(&reply).await;
            });
        }
    });
    base
}

fn transport() -> Transport {
    let guard = NetGuard::new(
        vec![Cidr::parse("127.0.0.1/32").unwrap()],
        Arc::new(workbooks::egress::SystemResolver),
    );
    Transport::new(guard, Vec::new(), Credentials::default())
}

async fn pulled(attack: Attack) -> (OciError, tempfile::TempDir) {
    let base = hostile(attack).await;
    let home = tempfile::tempdir().unwrap();
    let err = pull(
        &transport(),
        home.path(),
        &format!("oci://{base}/x:1"),
        &Trust::default(),
    )
    .await
    .unwrap_err();
    assert!(!home.path().join("store").exists(), "something was stored");
    (err, home)
}

#[tokio::test]
async fn a_blob_redirected_to_the_metadata_endpoint_is_refused_by_the_floor() {
    for to in [
        "http://169.254.169.254/latest/meta-data/",
        "https://10.0.0.1/blob",
        "http://[::ffff:169.254.169.254]/x",
    ] {
        let (err, _) = pulled(Attack::Redirect(to)).await;
        assert!(matches!(err, OciError::Floor { .. }), "{to}: {err}");
        assert!(
            err.to_string().contains("refused by the egress floor"),
            "{to}: {err}"
        );
    }
}

#[tokio::test]
async fn a_plain_http_redirect_off_this_machine_is_refused_even_when_opened() {
    // The operator opened 127.0.0.1 only; a public address passes the
    // floor, but plain HTTP is spoken only to loopback.
    let (err, _) = pulled(Attack::Redirect("http://93.184.215.14/blob")).await;
    assert!(err.to_string().contains("plain HTTP"), "{err}");
}

#[tokio::test]
async fn a_manifest_over_four_mib_is_refused_by_name() {
    let mut body = manifest(&digest(b"tiny"), 4);
    body.pop();
    body.extend(std::iter::repeat_n(b' ', 5 << 20));
    body.push(b'}');
    let (err, _) = pulled(Attack::Manifest(body)).await;
    assert!(matches!(err, OciError::TooLarge { .. }), "{err}");
    assert!(err.to_string().contains("manifest"), "{err}");
}

#[tokio::test]
async fn an_endless_manifest_is_cut_at_the_byte_budget() {
    let (err, _) = pulled(Attack::EndlessManifest).await;
    assert!(matches!(err, OciError::TooLarge { .. }), "{err}");
}

#[tokio::test]
async fn a_blob_longer_than_its_manifest_says_is_refused() {
    let (err, _) = pulled(Attack::LongBlob).await;
    assert!(
        matches!(
            err,
            OciError::TooLarge { .. } | OciError::DigestMismatch { .. }
        ),
        "{err}"
    );
}

#[tokio::test]
async fn a_registry_answering_each_step_in_time_is_cut_at_the_whole_pulls_budget() {
    // Each answer comes 0.7 s late, well within a step's share, yet the
    // pull takes four or more steps: the one budget of 2 s ends it.
    let base = hostile(Attack::Slow(std::time::Duration::from_millis(700))).await;
    let home = tempfile::tempdir().unwrap();
    let err = pull(
        &transport().with_budget(std::time::Duration::from_secs(2)),
        home.path(),
        &format!("oci://{base}/x:1"),
        &Trust::default(),
    )
    .await
    .unwrap_err();
    assert!(matches!(err, OciError::Timeout { secs: 2, .. }), "{err}");
    assert!(!home.path().join("store").exists(), "something was stored");
}
