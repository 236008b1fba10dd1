//! `pull`: a wasm artifact out of a registry into the store, every digest
//! checked, signatures verified when signers are required.

use crate::artifact::{ACCEPTED, OCI_MANIFEST_MEDIA_TYPE, digest_of, wasm_layer};
use crate::limits::{
    OCI_MAX_LAYER_BYTES, OCI_MAX_MANIFEST_BYTES, OCI_MAX_OVERHEAD_BYTES, OCI_MAX_SIGNATURE_BYTES,
    OCI_MAX_SIGNATURES,
};
use crate::local::{self, Pulled};
use crate::signature::{self, SIGNATURE_MEDIA_TYPE, Signature};
use crate::transport::Session;
use crate::{OciError, OciRef, Transport, Trust};
use futures::StreamExt;
use oci_client::RegistryOperation;
use std::path::Path;

/// Pulls `reference` into `home`'s store, unless the digest it names (or
/// its tag resolves to) is recorded there already with the signers
/// `trust` requires. Nothing is stored unless every check passed.
pub async fn pull(
    transport: &Transport,
    home: &Path,
    reference: &str,
    trust: &Trust,
) -> Result<Pulled, OciError> {
    let r = OciRef::parse(reference)?;
    if let Some(d) = r.digest()
        && let Some(p) = cached(home, d, trust)
    {
        return Ok(Pulled {
            reference: r.to_string(),
            ..p
        });
    }
    // The manifest and signatures are read within the overhead budget; the
    // layer's declared size is added once the manifest is accepted.
    let s = transport
        .session(&r, OCI_MAX_OVERHEAD_BYTES, RegistryOperation::Pull)
        .await?;
    if r.digest().is_none() {
        let d = s
            .bounded(s.client.fetch_manifest_digest(&r.inner, &s.auth))
            .await?;
        if let Some(p) = cached(home, &d, trust) {
            return Ok(Pulled {
                reference: r.to_string(),
                ..p
            });
        }
    }
    let (body, digest) = s
        .bounded(s.client.pull_manifest_raw(&r.inner, &s.auth, ACCEPTED))
        .await?;
    let digest = checked_manifest(&r, &body, &digest)?;
    let layer = wasm_layer(&r.to_string(), &body)?;
    let signers = if trust.requires_signature() {
        let found = signers(&s, &r, &digest).await?;
        if trust.accepts(&found).is_none() {
            return Err(OciError::Unsigned {
                reference: r.to_string(),
                found: if found.is_empty() {
                    "no signature verifies over its digest".into()
                } else {
                    format!("signed only by {}", found.join(", "))
                },
                wanted: trust.signers().join(", "),
            });
        }
        found
    } else {
        Vec::new()
    };
    s.gate.allow(layer.size);
    let at = r.at_digest(&digest);
    let wasm = read_blob(&s, &at, &layer.digest, layer.size, OCI_MAX_LAYER_BYTES).await?;
    let artifact = workbooks::Artifact::from_bytes(wasm).map_err(|e| OciError::Invalid {
        reference: r.to_string(),
        why: e.to_string(),
    })?;
    let got = format!("sha256:{}", artifact.sha256_hex());
    if got != layer.digest {
        return Err(OciError::DigestMismatch {
            what: format!("{r}: the wasm layer"),
            expected: layer.digest.clone(),
            got,
        });
    }
    let path = workbooks::commands::Registry::new(home)
        .stash(&artifact)
        .map_err(|e| OciError::io("the store", e))?;
    let pulled = Pulled {
        reference: r.to_string(),
        digest,
        sha256: artifact.sha256_hex(),
        size: layer.size,
        signers,
        path,
        cached: false,
    };
    local::record(home, &pulled)?;
    Ok(pulled)
}

/// The record of `digest` when it satisfies `trust`.
fn cached(home: &Path, digest: &str, trust: &Trust) -> Option<Pulled> {
    let p = local::recorded(home, digest)?;
    (!trust.requires_signature() || trust.accepts(&p.signers).is_some()).then_some(p)
}

/// Holds the manifest to its cap and to the digest that named it.
fn checked_manifest(r: &OciRef, body: &[u8], digest: &str) -> Result<String, OciError> {
    if body.len() > OCI_MAX_MANIFEST_BYTES {
        return Err(OciError::TooLarge {
            what: format!("{r}: the manifest ({} bytes)", body.len()),
            limit: OCI_MAX_MANIFEST_BYTES as u64,
        });
    }
    let got = digest_of(body);
    for expected in [Some(digest), r.digest()].into_iter().flatten() {
        if expected != got {
            return Err(OciError::DigestMismatch {
                what: format!("{r}: the manifest"),
                expected: expected.to_string(),
                got,
            });
        }
    }
    Ok(got)
}

/// Reads the blob `digest` of `r`, exactly `size` bytes and at most `cap`;
/// `oci-client`'s stream checks the digest as the bytes arrive.
async fn read_blob(
    s: &Session,
    r: &OciRef,
    digest: &str,
    size: u64,
    cap: u64,
) -> Result<Vec<u8>, OciError> {
    let too_large = |what: String| OciError::TooLarge { what, limit: cap };
    if size > cap {
        return Err(too_large(format!("{r}: blob {digest} ({size} bytes)")));
    }
    let mut stream = s
        .bounded(s.client.pull_blob_stream(&r.inner, digest))
        .await?
        .stream;
    let mut bytes = Vec::with_capacity(size as usize);
    let read = async {
        while let Some(chunk) = stream.next().await {
            let chunk = chunk.map_err(|e| s.named(e.into()))?;
            if (bytes.len() + chunk.len()) as u64 > size {
                return Err(too_large(format!(
                    "{r}: blob {digest} (longer than its {size} bytes)"
                )));
            }
            bytes.extend_from_slice(&chunk);
        }
        Ok(())
    };
    s.in_time(read).await?;
    Ok(bytes)
}

/// The signers whose signatures verify over `digest`: from the referrers
/// API, and from the fallback tag.
async fn signers(s: &Session, r: &OciRef, digest: &str) -> Result<Vec<String>, OciError> {
    let subject = r.at_digest(digest);
    let mut manifests: Vec<OciRef> = s
        .bounded(
            s.client
                .pull_referrers(&subject.inner, Some(SIGNATURE_MEDIA_TYPE)),
        )
        .await
        .map(|index| {
            index
                .manifests
                .into_iter()
                .filter(|m| m.artifact_type.as_deref() == Some(SIGNATURE_MEDIA_TYPE))
                .map(|m| r.at_digest(&m.digest))
                .collect()
        })
        .unwrap_or_default();
    manifests.truncate(OCI_MAX_SIGNATURES);
    // The fallback tag first: its manifest carries every signature pushed.
    manifests.insert(0, r.at_tag(&signature::fallback_tag(digest)));
    let mut found = Vec::new();
    // Each signer's push repeats the signatures before it: a blob read
    // once is not read or counted again.
    let mut seen = std::collections::HashSet::new();
    for m in &manifests {
        let body = match s
            .bounded(
                s.client
                    .pull_manifest_raw(&m.inner, &s.auth, &[OCI_MANIFEST_MEDIA_TYPE]),
            )
            .await
        {
            Ok((body, _)) if body.len() <= OCI_MAX_MANIFEST_BYTES => body,
            Ok(_) | Err(OciError::NotFound { .. }) => continue,
            Err(e) => return Err(e),
        };
        let Ok(manifest) = serde_json::from_slice::<crate::artifact::Manifest>(&body) else {
            continue;
        };
        if manifest.subject.as_ref().is_none_or(|d| d.digest != digest) {
            continue;
        }
        for layer in manifest
            .layers
            .iter()
            .filter(|l| l.media_type == SIGNATURE_MEDIA_TYPE)
        {
            if !seen.insert(layer.digest.clone()) {
                continue;
            }
            if seen.len() > OCI_MAX_SIGNATURES {
                return Ok(found);
            }
            let Ok(blob) = read_blob(
                s,
                m,
                &layer.digest,
                layer.size,
                OCI_MAX_SIGNATURE_BYTES as u64,
            )
            .await
            else {
                continue;
            };
            if let Some(did) = Signature::verified_signer(&blob, digest)
                && !found.contains(&did)
            {
                found.push(did);
            }
        }
    }
    Ok(found)
}
