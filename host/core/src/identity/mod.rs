//! Identities: a tenant's Ed25519 key as a `did:key`, and signatures that
//! verify from the DID alone.
//!
//! A `did:key` for Ed25519 is `did:key:z` + base58btc(0xed 0x01 ‖ the
//! 32-byte public key). Each tenant's key is the keyring secret
//! [`KEY_NAME`], made once on first use under the keyring's lock; an
//! operator may pin it with a seed instead (`WB_SIGNING_KEY`, base64 of 32
//! bytes). Verifying needs no keyring: the public key is decoded from the
//! DID, so a signature made elsewhere is checked with no shared state.

pub mod html;

use crate::cap::secrets::keyring::{Keyring, Secret, SecretKind};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;

/// The keyring name of a tenant's identity key.
pub const KEY_NAME: &str = "identity";

/// The multicodec prefix of an Ed25519 public key.
const ED25519_CODEC: [u8; 2] = [0xed, 0x01];

/// Why an identity could not be formed or a signature not checked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentityError {
    /// Not a `did:key` of an Ed25519 key.
    #[error("not an Ed25519 did:key: {0}")]
    NotDidKey(String),
    /// The signing key could not be read or made.
    #[error("identity key of tenant {tenant}: {why}")]
    Key {
        /// The tenant.
        tenant: String,
        /// Why.
        why: String,
    },
    /// `WB_SIGNING_KEY` is not base64 of 32 bytes.
    #[error("the signing key override must be base64 of a 32-byte seed")]
    BadSeed,
    /// The signature is not base64 of 64 bytes, or does not verify.
    #[error("the signature does not verify under {0}")]
    BadSignature(String),
}

/// A tenant's signing identity.
#[derive(Clone)]
pub struct Identity {
    /// `did:key:z6Mk…`.
    pub did: String,
    secret: Secret,
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity").field("did", &self.did).finish()
    }
}

/// The sha256 (hex) of `bytes`: what a signed manifest pins.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// The canonical JSON of a value a signature covers: object keys sorted
/// (`serde_json::Value` keeps them so), no spaces.
pub fn canonical_json(value: &impl serde::Serialize) -> Vec<u8> {
    serde_json::to_value(value)
        .map(|v| v.to_string().into_bytes())
        .unwrap_or_default()
}

/// Whether a secret a caller `given` (a bearer token, say) is `expected`,
/// in time that tells nothing of how much of it was right, nor of its
/// length: both are hashed and the digests compared in constant time.
pub fn secret_eq(given: &[u8], expected: &[u8]) -> bool {
    use sha2::Digest as _;
    use subtle::ConstantTimeEq as _;
    let (a, b) = (sha2::Sha256::digest(given), sha2::Sha256::digest(expected));
    a.as_slice().ct_eq(b.as_slice()).into()
}

/// The `did:key` of an Ed25519 public key.
pub fn did_key(public: &[u8; 32]) -> String {
    let mut bytes = ED25519_CODEC.to_vec();
    bytes.extend_from_slice(public);
    format!("did:key:z{}", bs58::encode(bytes).into_string())
}

/// The Ed25519 public key a `did:key` names.
pub fn public_key(did: &str) -> Result<[u8; 32], IdentityError> {
    let not = || IdentityError::NotDidKey(did.chars().take(80).collect());
    let encoded = did.strip_prefix("did:key:z").ok_or_else(not)?;
    let bytes = bs58::decode(encoded).into_vec().map_err(|_| not())?;
    let key = bytes.strip_prefix(&ED25519_CODEC[..]).ok_or_else(not)?;
    key.try_into().map_err(|_| not())
}

/// Checks a base64 Ed25519 `signature` of `message` by `did`.
pub fn verify(did: &str, message: &[u8], signature: &str) -> Result<(), IdentityError> {
    let public = public_key(did)?;
    let bad = || IdentityError::BadSignature(did.to_string());
    let key = ed25519_dalek::VerifyingKey::from_bytes(&public).map_err(|_| bad())?;
    let sig = BASE64.decode(signature.trim()).map_err(|_| bad())?;
    let sig = ed25519_dalek::Signature::from_slice(&sig).map_err(|_| bad())?;
    key.verify_strict(message, &sig).map_err(|_| bad())
}

impl Identity {
    /// The identity of `tenant`: from `seed` (base64 of 32 bytes) when the
    /// operator pins one, else the keyring's, made on first use.
    pub fn of_tenant(
        keyring: &Keyring,
        tenant: &str,
        seed: Option<&str>,
    ) -> Result<Self, IdentityError> {
        let key_err = |why: String| IdentityError::Key {
            tenant: tenant.to_string(),
            why,
        };
        let (secret, public) = match seed {
            Some(b64) => {
                let bytes = BASE64
                    .decode(b64.trim())
                    .map_err(|_| IdentityError::BadSeed)?;
                let secret =
                    Secret::new(SecretKind::Ed25519, bytes).map_err(|_| IdentityError::BadSeed)?;
                let public: [u8; 32] = secret
                    .ed25519_public_key()
                    .ok()
                    .and_then(|p| p.try_into().ok())
                    .ok_or(IdentityError::BadSeed)?;
                (secret, public)
            }
            None => keyring.ed25519_key(tenant, KEY_NAME).map_err(key_err)?,
        };
        Ok(Self {
            did: did_key(&public),
            secret,
        })
    }

    /// A base64 Ed25519 signature of `message`.
    pub fn sign(&self, message: &[u8]) -> Result<String, IdentityError> {
        let sig = self
            .secret
            .ed25519_sign(message)
            .map_err(|e| IdentityError::Key {
                tenant: String::new(),
                why: e.to_string(),
            })?;
        Ok(BASE64.encode(sig))
    }

    /// The `did:web` document of this key for `host`: the same key under a
    /// second name, so a signature verifies under either.
    pub fn did_web_document(&self, host: &str) -> serde_json::Value {
        let id = format!("did:web:{}", host.replace(':', "%3A"));
        let multibase = self.did.trim_start_matches("did:key:");
        let method = format!("{id}#{multibase}");
        serde_json::json!({
            "@context": ["https://www.w3.org/ns/did/v1", "https://w3id.org/security/multikey/v1"],
            "id": id,
            "alsoKnownAs": [self.did],
            "verificationMethod": [{
                "id": method,
                "type": "Multikey",
                "controller": id,
                "publicKeyMultibase": multibase,
            }],
            "authentication": [method],
            "assertionMethod": [method],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The W3C did:key test vector: the Ed25519 key of the all-zero seed,
    /// `4zvwRjXUKGfvwnParsHAS3HuSVzV5cA4McphgmoCtajS` in base58.
    const ZERO_SEED_DID: &str = "did:key:z6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp";

    #[test]
    fn the_published_vector_round_trips_and_a_seed_gives_its_did() {
        let public: [u8; 32] = bs58::decode("4zvwRjXUKGfvwnParsHAS3HuSVzV5cA4McphgmoCtajS")
            .into_vec()
            .unwrap()
            .try_into()
            .unwrap();
        assert_eq!(did_key(&public), ZERO_SEED_DID);
        assert_eq!(public_key(ZERO_SEED_DID).unwrap(), public);
        let keyring = Keyring::new(None, Default::default());
        let zero = BASE64.encode([0u8; 32]);
        let id = Identity::of_tenant(&keyring, "t", Some(&zero)).unwrap();
        assert_eq!(id.did, ZERO_SEED_DID);
        let sig = id.sign(b"manifest").unwrap();
        verify(ZERO_SEED_DID, b"manifest", &sig).unwrap();
        assert!(verify(ZERO_SEED_DID, b"manifest!", &sig).is_err());
    }

    #[test]
    fn secrets_compare_whole() {
        assert!(secret_eq(b"token", b"token"));
        assert!(!secret_eq(b"token", b"tokem"));
        assert!(!secret_eq(b"token", b"toke"));
        assert!(!secret_eq(b"", b"x"));
    }

    #[test]
    fn what_is_not_an_ed25519_did_key_is_refused() {
        for bad in [
            "did:web:example.org",
            "did:key:6MkiTBz1ymuepAQ4HEHYSF1H8quG5GLVVQR3djdX3mDooWp",
            "did:key:z0OIl",
            // A secp256k1 key (multicodec 0xe7 0x01).
            "did:key:zQ3shokFTS3brHcDQrn82RUDfCZESWL1ZdCEJwekUDPQiYBme",
        ] {
            assert!(public_key(bad).is_err(), "{bad}");
        }
        let keyring = Keyring::new(None, Default::default());
        assert_eq!(
            Identity::of_tenant(&keyring, "t", Some("c2hvcnQ=")).unwrap_err(),
            IdentityError::BadSeed
        );
    }

    #[test]
    fn a_tenants_key_is_made_once_and_is_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let keyring = Keyring::new(Some(dir.path().to_path_buf()), Default::default());
        let a = Identity::of_tenant(&keyring, "a", None).unwrap();
        assert_eq!(Identity::of_tenant(&keyring, "a", None).unwrap().did, a.did);
        assert_ne!(Identity::of_tenant(&keyring, "b", None).unwrap().did, a.did);
        let doc = a.did_web_document("example.org:8443");
        assert_eq!(doc["id"], "did:web:example.org%3A8443");
        assert_eq!(doc["alsoKnownAs"][0], a.did);
    }
}
