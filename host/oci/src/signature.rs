//! did:key signatures over a manifest digest.
//!
//! A signature is a small JSON blob, `{"did", "digest", "signature"}`,
//! where `signature` is the Ed25519 signature (base64) by the did's key of
//! [`message`]`(digest)`. The blobs are the layers of one signature
//! manifest whose `subject` is the signed manifest, so a registry with the
//! referrers API lists it; the same manifest is tagged `sha256-<hex>.sig`
//! for registries without it. Each signer adds a layer; a pull reads every
//! layer and keeps the dids whose signatures verify over the digest it
//! pulled. A signature names its digest: one copied onto other bytes does
//! not verify.

use crate::OciError;
use crate::artifact::{Descriptor, Manifest};
use serde::{Deserialize, Serialize};

/// The artifact type and layer media type of a signature.
pub const SIGNATURE_MEDIA_TYPE: &str = "application/vnd.workbooks.signature.v1+json";
/// The empty config of a manifest that carries no config.
pub(crate) const EMPTY_MEDIA_TYPE: &str = "application/vnd.oci.empty.v1+json";
/// The empty config's bytes.
pub(crate) const EMPTY_CONFIG: &[u8] = b"{}";

/// One signer's signature over one digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    /// The signer, `did:key:z6Mk…`.
    pub did: String,
    /// The signed manifest digest, `sha256:…`.
    pub digest: String,
    /// base64 Ed25519 over [`message`]`(digest)`.
    pub signature: String,
}

/// What is signed: a domain tag and the manifest digest, so a signature
/// made for anything else never verifies here.
pub fn message(digest: &str) -> Vec<u8> {
    format!("workbooks-oci-signature-v1\n{digest}").into_bytes()
}

impl Signature {
    /// `identity`'s signature over `digest`.
    pub fn make(identity: &workbooks::identity::Identity, digest: &str) -> Result<Self, OciError> {
        let signature = identity
            .sign(&message(digest))
            .map_err(|e| OciError::Sign(e.to_string()))?;
        Ok(Signature {
            did: identity.did.clone(),
            digest: digest.to_string(),
            signature,
        })
    }

    /// The blob's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a signature serialises")
    }

    /// The signer of `blob`, when it is a signature over `digest` that
    /// verifies under its own did.
    pub fn verified_signer(blob: &[u8], digest: &str) -> Option<String> {
        let sig: Signature = serde_json::from_slice(blob).ok()?;
        if sig.digest != digest {
            return None;
        }
        workbooks::identity::verify(&sig.did, &message(digest), &sig.signature).ok()?;
        Some(sig.did)
    }
}

/// The fallback tag of the signatures of `digest`: `sha256-<hex>.sig`.
pub fn fallback_tag(digest: &str) -> String {
    format!("{}.sig", digest.replace(':', "-"))
}

/// The signature manifest over `subject` carrying `layers` (each a
/// signature blob's descriptor).
pub(crate) fn manifest(subject: Descriptor, layers: Vec<Descriptor>) -> Manifest {
    let mut m = Manifest::new(Descriptor::of(EMPTY_MEDIA_TYPE, EMPTY_CONFIG), layers);
    m.artifact_type = Some(SIGNATURE_MEDIA_TYPE.to_string());
    m.subject = Some(subject);
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use workbooks::identity::Identity;

    fn identity(dir: &std::path::Path, tenant: &str) -> Identity {
        let keyring = workbooks::Keyring::new(Some(dir.to_path_buf()), Default::default());
        Identity::of_tenant(&keyring, tenant, None).unwrap()
    }

    #[test]
    fn a_signature_verifies_over_its_own_digest_only() {
        let dir = tempfile::tempdir().unwrap();
        let me = identity(dir.path(), "acme");
        let d1 = format!("sha256:{}", "1".repeat(64));
        let d2 = format!("sha256:{}", "2".repeat(64));
        let sig = Signature::make(&me, &d1).unwrap();
        assert_eq!(
            Signature::verified_signer(&sig.to_bytes(), &d1),
            Some(me.did.clone())
        );
        // Copied onto other bytes: the digest it names is not theirs.
        assert_eq!(Signature::verified_signer(&sig.to_bytes(), &d2), None);
        // Its digest rewritten: the signature no longer verifies.
        let forged = Signature {
            digest: d2.clone(),
            ..sig.clone()
        };
        assert_eq!(Signature::verified_signer(&forged.to_bytes(), &d2), None);
        // Claimed by another did: it does not verify under that key.
        let other = identity(dir.path(), "other");
        let claimed = Signature {
            did: other.did.clone(),
            ..sig
        };
        assert_eq!(Signature::verified_signer(&claimed.to_bytes(), &d1), None);
    }

    #[test]
    fn the_fallback_tag_is_the_digest_with_a_dash_and_sig() {
        let d = format!("sha256:{}", "ab".repeat(32));
        assert_eq!(fallback_tag(&d), format!("sha256-{}.sig", "ab".repeat(32)));
    }
}
