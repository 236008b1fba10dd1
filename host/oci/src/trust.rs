//! Which signers a pull requires.
//!
//! Three sources, united: `--signer DID` on the command, `WB_OCI_SIGNERS`
//! (comma-separated dids) and the home's trust file `<home>/oci/trust.json`
//! (`{"signers": ["did:key:…"]}`). When the union is empty a pull checks
//! no signature; when it is not, every pull (and so every `oci://` run)
//! needs a signature by one of them over the manifest digest it pulled.

use crate::OciError;
use std::path::Path;

/// The trust file, under the home.
pub const TRUST_FILE: &str = "oci/trust.json";

/// The signers a pull requires (empty: none required).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trust {
    signers: Vec<String>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TrustFile {
    signers: Vec<String>,
}

impl Trust {
    /// Exactly `signers`, each checked to be an Ed25519 did:key.
    pub fn of(signers: impl IntoIterator<Item = String>) -> Result<Trust, OciError> {
        let mut t = Trust::default();
        for did in signers {
            t.add(did)?;
        }
        Ok(t)
    }

    /// The home's policy: its trust file and `WB_OCI_SIGNERS`, with
    /// `extra` (the command's `--signer`s).
    pub fn of_home(home: &Path, extra: &[String]) -> Result<Trust, OciError> {
        let mut t = Trust::of(extra.iter().cloned())?;
        let file = home.join(TRUST_FILE);
        match std::fs::read(&file) {
            Ok(bytes) => {
                let parsed: TrustFile = serde_json::from_slice(&bytes)
                    .map_err(|e| OciError::Trust(format!("{}: {e}", file.display())))?;
                for did in parsed.signers {
                    t.add(did)?;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(OciError::io(file.display(), e)),
        }
        if let Ok(list) = std::env::var("WB_OCI_SIGNERS") {
            for did in list.split(',').map(str::trim).filter(|d| !d.is_empty()) {
                t.add(did.to_string())?;
            }
        }
        Ok(t)
    }

    fn add(&mut self, did: String) -> Result<(), OciError> {
        workbooks::identity::public_key(&did)
            .map_err(|e| OciError::Trust(format!("signer {did}: {e}")))?;
        if !self.signers.contains(&did) {
            self.signers.push(did);
        }
        Ok(())
    }

    /// Whether any signature is required.
    pub fn requires_signature(&self) -> bool {
        !self.signers.is_empty()
    }

    /// The required signers.
    pub fn signers(&self) -> &[String] {
        &self.signers
    }

    /// The first of `found` (verified signers) this policy accepts.
    pub fn accepts<'a>(&self, found: &'a [String]) -> Option<&'a String> {
        found.iter().find(|d| self.signers.contains(d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signer_that_is_not_a_did_key_is_refused_by_name() {
        let err = Trust::of(["did:web:example.com".to_string()]).unwrap_err();
        assert!(err.to_string().contains("did:web:example.com"), "{err}");
    }

    #[test]
    fn the_trust_file_adds_to_the_given_signers() {
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(home.path().join("oci")).unwrap();
        let a = workbooks::identity::did_key(&[1; 32]);
        let b = workbooks::identity::did_key(&[2; 32]);
        std::fs::write(
            home.path().join(TRUST_FILE),
            serde_json::json!({ "signers": [b] }).to_string(),
        )
        .unwrap();
        let t = Trust::of_home(home.path(), std::slice::from_ref(&a)).unwrap();
        assert_eq!(t.signers(), [a.clone(), b.clone()]);
        assert_eq!(t.accepts(std::slice::from_ref(&b)), Some(&b));
        assert_eq!(t.accepts(&[workbooks::identity::did_key(&[3; 32])]), None);
        std::fs::write(home.path().join(TRUST_FILE), "{\"signer\": []}").unwrap();
        assert!(matches!(
            Trust::of_home(home.path(), &[]),
            Err(OciError::Trust(_))
        ));
    }
}
