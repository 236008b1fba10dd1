//! Signed HTML artifacts: a manifest embedded in the page as
//! `<script type="application/workbooks-c2pa+json" id="wb-c2pa-manifest">`,
//! holding the sha256 of the page without that element, the signer's
//! did:key and the time, with an Ed25519 signature over the manifest's
//! canonical JSON (keys sorted, no spaces).
//!
//! Verifying has two halves: `asset_integrity` (the page still hashes to
//! the manifest's value, which needs no key) and `signature` (the
//! manifest verifies under the DID it names, decoded from the DID alone).
//! A page is `valid` when both hold. This is the did:key scheme, not a
//! COSE/X.509 C2PA claim.

use super::{Identity, IdentityError, canonical_json, sha256_hex};
use serde::{Deserialize, Serialize};

/// The element's opening tag.
const OPEN: &str = r#"<script type="application/workbooks-c2pa+json" id="wb-c2pa-manifest">"#;
const CLOSE: &str = "</script>";

/// What is signed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct PageManifest {
    /// `workbooks-c2pa/1`.
    pub format: String,
    /// The sha256 (hex) of the page without the manifest element.
    pub asset_sha256: String,
    /// The signer's did:key.
    pub signer: String,
    /// When it was signed (Unix seconds).
    pub signed_at: u64,
}

/// The embedded element's content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Embedded {
    manifest: PageManifest,
    signature: String,
}

/// What checking a page found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PageCheck {
    /// The manifest verifies under its signer's DID.
    pub signature: bool,
    /// The page hashes to the manifest's value.
    pub asset_integrity: bool,
    /// Both.
    pub valid: bool,
    /// The signer named, if a manifest was found.
    pub signer: Option<String>,
    /// Why it is not valid, if it is not.
    pub why: Option<String>,
}

/// The page without its manifest element, and the element's content.
fn split(page: &str) -> Option<(String, &str)> {
    let start = page.find(OPEN)?;
    let body = start + OPEN.len();
    let end = body + page[body..].find(CLOSE)?;
    let mut asset = String::with_capacity(page.len());
    asset.push_str(&page[..start]);
    asset.push_str(&page[end + CLOSE.len()..]);
    Some((asset, &page[body..end]))
}

/// `page` signed by `identity` at `now`: any earlier manifest is replaced;
/// the new one goes before `</head>`, else `</body>`, else at the end.
pub fn sign_page(page: &str, identity: &Identity, now: u64) -> Result<String, IdentityError> {
    let asset = split(page).map_or_else(|| page.to_string(), |(a, _)| a);
    let manifest = PageManifest {
        format: "workbooks-c2pa/1".into(),
        asset_sha256: sha256_hex(asset.as_bytes()),
        signer: identity.did.clone(),
        signed_at: now,
    };
    let signature = identity.sign(&canonical_json(&manifest))?;
    let embedded = serde_json::to_string(&Embedded {
        manifest,
        signature,
    })
    .unwrap_or_default();
    let element = format!("{OPEN}{embedded}{CLOSE}");
    let lower = asset.to_ascii_lowercase();
    let at = lower
        .find("</head>")
        .or_else(|| lower.find("</body>"))
        .unwrap_or(asset.len());
    Ok(format!("{}{element}{}", &asset[..at], &asset[at..]))
}

/// Checks a signed page.
pub fn verify_page(page: &str) -> PageCheck {
    let not = |why: &str, signer: Option<String>| PageCheck {
        signature: false,
        asset_integrity: false,
        valid: false,
        signer,
        why: Some(why.to_string()),
    };
    let Some((asset, content)) = split(page) else {
        return not("no wb-c2pa-manifest element", None);
    };
    let Ok(embedded) = serde_json::from_str::<Embedded>(content) else {
        return not("the manifest element is not a workbooks manifest", None);
    };
    let m = &embedded.manifest;
    let asset_integrity = sha256_hex(asset.as_bytes()) == m.asset_sha256;
    let signature = super::verify(&m.signer, &canonical_json(m), &embedded.signature).is_ok();
    let why = match (signature, asset_integrity) {
        (true, true) => None,
        (false, _) => Some("the signature does not verify under the signer's did:key".into()),
        (true, false) => Some("the page changed after it was signed".into()),
    };
    PageCheck {
        signature,
        asset_integrity,
        valid: signature && asset_integrity,
        signer: Some(m.signer.clone()),
        why,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Keyring;
    use base64::Engine as _;

    fn identity(seed: u8) -> Identity {
        let seed = base64::engine::general_purpose::STANDARD.encode([seed; 32]);
        Identity::of_tenant(&Keyring::new(None, Default::default()), "t", Some(&seed)).unwrap()
    }

    const PAGE: &str =
        "<html><head><title>Roster</title></head><body><p>Seven on shift.</p></body></html>\n";

    #[test]
    fn a_signed_page_verifies_and_signing_again_replaces_the_manifest() {
        let signed = sign_page(PAGE, &identity(1), 1_700_000_000).unwrap();
        assert!(signed.contains(&format!("{OPEN}{{\"manifest\"")));
        assert!(signed.find(OPEN).unwrap() < signed.find("</head>").unwrap());
        let check = verify_page(&signed);
        assert!(check.valid, "{check:?}");
        let again = sign_page(&signed, &identity(2), 1_700_000_001).unwrap();
        assert_eq!(again.matches(OPEN).count(), 1);
        assert_eq!(verify_page(&again).signer, Some(identity(2).did));
        assert_eq!(split(&again).unwrap().0, PAGE);
    }

    #[test]
    fn an_edited_page_a_forged_manifest_and_a_bare_page_are_each_named() {
        let signed = sign_page(PAGE, &identity(1), 1_700_000_000).unwrap();
        let edited = signed.replace("Seven", "Eight");
        let check = verify_page(&edited);
        assert_eq!(
            (check.signature, check.asset_integrity, check.valid),
            (true, false, false)
        );
        // The hash rewritten to match the edit: the signature no longer holds.
        let (asset, content) = split(&edited).unwrap();
        let mut e: Embedded = serde_json::from_str(content).unwrap();
        e.manifest.asset_sha256 = sha256_hex(asset.as_bytes());
        let forged = edited.replace(content, &serde_json::to_string(&e).unwrap());
        let check = verify_page(&forged);
        assert_eq!(
            (check.signature, check.asset_integrity, check.valid),
            (false, true, false)
        );
        // Another key claiming the signer's name.
        e.manifest.signer = identity(3).did;
        let claimed = edited.replace(content, &serde_json::to_string(&e).unwrap());
        assert!(!verify_page(&claimed).signature);
        assert_eq!(
            verify_page(PAGE).why.as_deref(),
            Some("no wb-c2pa-manifest element")
        );
    }
}
