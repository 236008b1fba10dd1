//! `push`: a component into a registry as a wasm artifact, signed.

use crate::artifact::{Descriptor, OCI_MANIFEST_MEDIA_TYPE, digest_of, wasm_artifact};
use crate::limits::{OCI_MAX_LAYER_BYTES, OCI_MAX_OVERHEAD_BYTES, OCI_MAX_SIGNATURES};
use crate::signature::{self, EMPTY_CONFIG, EMPTY_MEDIA_TYPE, SIGNATURE_MEDIA_TYPE, Signature};
use crate::transport::Session;
use crate::{OciError, OciRef, Transport};
use oci_client::RegistryOperation;
use reqwest::header::HeaderValue;
use workbooks::identity::Identity;

/// What a push did.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Pushed {
    /// The reference pushed to.
    pub reference: String,
    /// The manifest digest: what `…@sha256:` pins.
    pub digest: String,
    /// The wasm's sha256 (hex).
    pub sha256: String,
    /// The wasm's size.
    pub size: u64,
    /// The did that signed it, unless unsigned.
    pub signer: Option<String>,
    /// The signature manifest's tag, when signed.
    pub signature_tag: Option<String>,
}

/// Pushes `wasm` to `reference` (a tag; `latest` when none), signed by
/// `signer` unless `None`.
pub async fn push(
    transport: &Transport,
    wasm: &[u8],
    reference: &str,
    signer: Option<&Identity>,
) -> Result<Pushed, OciError> {
    let r = OciRef::parse(reference)?;
    if r.digest().is_some() {
        return Err(OciError::BadReference {
            reference: reference.to_string(),
            why: "a push names a tag; the digest is what it prints".into(),
        });
    }
    let title = r.repository().rsplit('/').next().unwrap_or("component");
    let (config, manifest) = wasm_artifact(wasm, reference, title)?;
    let s = transport
        .session(&r, OCI_MAX_OVERHEAD_BYTES, RegistryOperation::Push)
        .await?;
    put_blob(&s, &r, wasm).await?;
    put_blob(&s, &r, &config).await?;
    let body = manifest.to_bytes();
    let digest = digest_of(&body);
    put_manifest(&s, &r, body.clone()).await?;
    let subject = Descriptor::of(OCI_MANIFEST_MEDIA_TYPE, &body);
    let signature_tag = match signer {
        Some(id) => Some(sign(&s, &r, subject, id).await?),
        None => None,
    };
    Ok(Pushed {
        reference: r.to_string(),
        digest,
        sha256: workbooks::identity::sha256_hex(wasm),
        size: wasm.len() as u64,
        signer: signer.map(|i| i.did.clone()),
        signature_tag,
    })
}

/// Uploads `bytes` unless the registry holds them already.
async fn put_blob(s: &Session, r: &OciRef, bytes: &[u8]) -> Result<(), OciError> {
    debug_assert!(bytes.len() as u64 <= OCI_MAX_LAYER_BYTES);
    let digest = digest_of(bytes);
    if s.bounded(s.client.blob_exists(&r.inner, &digest)).await? {
        return Ok(());
    }
    s.bounded(s.client.push_blob(&r.inner, bytes.to_vec(), &digest))
        .await
        .map(drop)
}

async fn put_manifest(s: &Session, r: &OciRef, body: Vec<u8>) -> Result<(), OciError> {
    s.bounded(s.client.push_manifest_raw(
        &r.inner,
        body,
        HeaderValue::from_static(OCI_MANIFEST_MEDIA_TYPE),
    ))
    .await
    .map(drop)
}

/// Adds `id`'s signature over `subject` to the signature manifest under
/// the fallback tag (keeping the signatures already there), pushed with
/// `subject` set so a registry with the referrers API lists it too.
async fn sign(
    s: &Session,
    r: &OciRef,
    subject: Descriptor,
    id: &Identity,
) -> Result<String, OciError> {
    let blob = Signature::make(id, &subject.digest)?.to_bytes();
    let ours = Descriptor::of(SIGNATURE_MEDIA_TYPE, &blob);
    let tag = signature::fallback_tag(&subject.digest);
    let tagged = r.at_tag(&tag);
    s.bounded(
        s.client
            .auth(&tagged.inner, &s.auth, RegistryOperation::Pull),
    )
    .await?;
    let mut layers: Vec<Descriptor> = match s
        .bounded(
            s.client
                .pull_manifest_raw(&tagged.inner, &s.auth, &[OCI_MANIFEST_MEDIA_TYPE]),
        )
        .await
    {
        Ok((body, _)) => serde_json::from_slice::<crate::artifact::Manifest>(&body)
            .ok()
            .filter(|m| {
                m.subject
                    .as_ref()
                    .is_some_and(|d| d.digest == subject.digest)
            })
            .map(|m| m.layers)
            .unwrap_or_default()
            .into_iter()
            .filter(|l| l.media_type == SIGNATURE_MEDIA_TYPE && l.digest != ours.digest)
            .collect(),
        Err(OciError::NotFound { .. }) => Vec::new(),
        Err(e) => return Err(e),
    };
    layers.truncate(OCI_MAX_SIGNATURES - 1);
    layers.push(ours);
    put_blob(s, r, EMPTY_CONFIG).await?;
    put_blob(s, r, &blob).await?;
    let manifest = signature::manifest(subject, layers);
    debug_assert_eq!(manifest.config.media_type, EMPTY_MEDIA_TYPE);
    put_manifest(s, &tagged, manifest.to_bytes()).await?;
    Ok(tag)
}
