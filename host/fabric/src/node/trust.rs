//! Who may put work on the bus, and whose results count.
//!
//! A task is signed by its submitter (the tenant's did:key, Ed25519) over
//! its canonical JSON, which carries a fresh nonce and an expiry; the
//! envelope on the bus holds those exact bytes, the signer and the
//! signature. A worker runs a task only when the signer is one it pins
//! ([`Trust`]), for a tenant and profile that signer may use, before the
//! expiry, and once (the nonce is claimed in a bucket every worker shares;
//! a redelivery of the same message is not a replay). Its result is signed
//! by the worker over the result's canonical JSON, which names the sha256
//! of the task bytes it answers; a submitter takes a result only from a
//! worker it pins, for exactly the task it signed.
//!
//! Threat: anyone who can publish on the bus. Before signing, a task read
//! off the stream, rewritten to another tenant and profile and published
//! again, ran on a worker; a result key created first by anyone was the
//! result. Now such a task is refused by name (an audit line on the worker
//! and a signed refusal under its key) and such a result is ignored.

use super::{NODE_CLOCK_SKEW, NODE_MAX_TASK_LIFETIME};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use workbooks::identity::{self, Identity, IdentityError};

/// A signed thing on the bus: the canonical JSON of a task or a result,
/// kept as the exact bytes that were signed, the signer and the signature.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Envelope {
    /// The signer's did:key.
    pub signer: String,
    /// Base64 Ed25519 signature of `body`'s bytes.
    pub signature: String,
    /// The signed canonical JSON.
    pub body: String,
}

impl Envelope {
    /// `value`'s canonical JSON, signed by `identity`.
    pub fn sign(identity: &Identity, value: &impl Serialize) -> Result<Envelope, IdentityError> {
        let body = String::from_utf8(identity::canonical_json(value))
            .map_err(|e| IdentityError::BadSignature(e.to_string()))?;
        Ok(Envelope {
            signer: identity.did.clone(),
            signature: identity.sign(body.as_bytes())?,
            body,
        })
    }

    /// The body, once its signature is checked against the signer named.
    pub fn verified<T: serde::de::DeserializeOwned>(&self) -> Result<T, Refusal> {
        identity::verify(&self.signer, self.body.as_bytes(), &self.signature)
            .map_err(|_| Refusal::BadSignature)?;
        serde_json::from_str(&self.body).map_err(|e| Refusal::Malformed(e.to_string()))
    }

    /// The sha256 (hex) of the signed bytes: what a result names.
    pub fn body_sha256(&self) -> String {
        identity::sha256_hex(self.body.as_bytes())
    }
}

/// Why a worker refused a task, by name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// Not a signed envelope of a task.
    #[error("malformed: {0}")]
    Malformed(String),
    /// The signature does not verify under the signer it names.
    #[error("bad_signature")]
    BadSignature,
    /// The signer is not one this worker pins.
    #[error("unknown_signer: {0}")]
    UnknownSigner(String),
    /// The signer may not submit for this tenant.
    #[error("tenant_not_allowed: {signer} may not submit for tenant {tenant}")]
    TenantNotAllowed {
        /// The signer.
        signer: String,
        /// The tenant the task names.
        tenant: String,
    },
    /// The signer may not use this profile.
    #[error("profile_not_allowed: {signer} may not use profile {profile}")]
    ProfileNotAllowed {
        /// The signer.
        signer: String,
        /// The profile the task names.
        profile: String,
    },
    /// Past its expiry.
    #[error("expired: at {expires}, now {now}")]
    Expired {
        /// The task's expiry (Unix seconds).
        expires: u64,
        /// This worker's clock.
        now: u64,
    },
    /// An expiry further off than any task may have.
    #[error("expiry_too_far: {expires} is more than {max_s} s from now ({now})")]
    ExpiryTooFar {
        /// The task's expiry.
        expires: u64,
        /// This worker's clock.
        now: u64,
        /// The longest life a task may have.
        max_s: u64,
    },
    /// Its nonce was claimed by another message already.
    #[error("replayed: nonce {0} was used")]
    Replayed(String),
}

impl Refusal {
    /// The audit reason: the name alone.
    pub fn reason(&self) -> &'static str {
        match self {
            Refusal::Malformed(_) => "task_malformed",
            Refusal::BadSignature => "task_bad_signature",
            Refusal::UnknownSigner(_) => "task_unknown_signer",
            Refusal::TenantNotAllowed { .. } => "task_tenant_not_allowed",
            Refusal::ProfileNotAllowed { .. } => "task_profile_not_allowed",
            Refusal::Expired { .. } => "task_expired",
            Refusal::ExpiryTooFar { .. } => "task_expiry_too_far",
            Refusal::Replayed(_) => "task_replayed",
        }
    }
}

/// What one pinned submitter may do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Submitter {
    /// Its did:key.
    pub did: String,
    /// The tenants it may submit for (`*` for any).
    pub tenants: BTreeSet<String>,
    /// The profiles its tasks may run under (`*` for any); `compute`
    /// when none is named.
    #[serde(default = "compute_only")]
    pub profiles: BTreeSet<String>,
}

fn compute_only() -> BTreeSet<String> {
    ["compute".to_string()].into()
}

/// The submitters a worker runs tasks for; none by default, so a worker
/// with no trust runs nothing.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Trust {
    /// Every pinned submitter.
    pub submitters: Vec<Submitter>,
}

/// Why a trust list could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// The file could not be read.
    #[error("trust file {path}: {why}")]
    File {
        /// The file.
        path: String,
        /// Why.
        why: String,
    },
    /// A `--trust` entry is not `DID@TENANTS[/PROFILES]`.
    #[error(
        "--trust {0}: write DID@TENANT[,TENANT…][/PROFILE[,PROFILE…]] (for example did:key:z6Mk…@acme/compute,minimal)"
    )]
    Spec(String),
    /// A DID is not an Ed25519 did:key.
    #[error(transparent)]
    Did(#[from] IdentityError),
}

impl Trust {
    /// Reads a trust file: `{"submitters": [{"did", "tenants", "profiles"}]}`.
    pub fn from_file(path: &Path) -> Result<Trust, TrustError> {
        let file = |why: String| TrustError::File {
            path: path.display().to_string(),
            why,
        };
        let bytes = std::fs::read(path).map_err(|e| file(e.to_string()))?;
        let trust: Trust = serde_json::from_slice(&bytes).map_err(|e| file(e.to_string()))?;
        for s in &trust.submitters {
            identity::public_key(&s.did)?;
        }
        Ok(trust)
    }

    /// Adds `DID@TENANT[,TENANT…][/PROFILE[,PROFILE…]]`.
    pub fn add_spec(&mut self, spec: &str) -> Result<(), TrustError> {
        let bad = || TrustError::Spec(spec.to_string());
        let (did, rest) = spec.split_once('@').ok_or_else(bad)?;
        identity::public_key(did)?;
        let (tenants, profiles) = match rest.split_once('/') {
            Some((t, p)) => (t, Some(p)),
            None => (rest, None),
        };
        let list = |s: &str| -> BTreeSet<String> {
            s.split(',')
                .map(str::trim)
                .filter(|w| !w.is_empty())
                .map(str::to_string)
                .collect()
        };
        let tenants = list(tenants);
        if tenants.is_empty() {
            return Err(bad());
        }
        self.submitters.push(Submitter {
            did: did.to_string(),
            tenants,
            profiles: profiles.map(list).unwrap_or_else(compute_only),
        });
        Ok(())
    }

    /// Checks that `signer` may submit for `tenant` under `profile`.
    pub fn admits(&self, signer: &str, tenant: &str, profile: &str) -> Result<(), Refusal> {
        let entries: Vec<&Submitter> = self.submitters.iter().filter(|s| s.did == signer).collect();
        if entries.is_empty() {
            return Err(Refusal::UnknownSigner(signer.to_string()));
        }
        let any = |set: &BTreeSet<String>, v: &str| set.contains("*") || set.contains(v);
        if !entries.iter().any(|s| any(&s.tenants, tenant)) {
            return Err(Refusal::TenantNotAllowed {
                signer: signer.to_string(),
                tenant: tenant.to_string(),
            });
        }
        if !entries
            .iter()
            .any(|s| any(&s.tenants, tenant) && any(&s.profiles, profile))
        {
            return Err(Refusal::ProfileNotAllowed {
                signer: signer.to_string(),
                profile: profile.to_string(),
            });
        }
        Ok(())
    }
}

/// Checks a task's expiry against `now` (Unix seconds) and the longest
/// life a task may have.
pub(crate) fn check_expiry(expires: u64, now: u64) -> Result<(), Refusal> {
    let (max_s, skew) = (NODE_MAX_TASK_LIFETIME.as_secs(), NODE_CLOCK_SKEW.as_secs());
    if now > expires.saturating_add(skew) {
        return Err(Refusal::Expired { expires, now });
    }
    if expires.saturating_sub(now) > max_s + skew {
        return Err(Refusal::ExpiryTooFar {
            expires,
            now,
            max_s,
        });
    }
    Ok(())
}

/// The pinned workers a submitter takes results from, by DID.
pub(crate) fn pinned(workers: &[String]) -> Result<BTreeMap<String, ()>, IdentityError> {
    workers
        .iter()
        .map(|w| identity::public_key(w).map(|_| (w.clone(), ())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use workbooks::Keyring;

    fn id(seed: u8) -> Identity {
        use base64::Engine as _;
        let seed = base64::engine::general_purpose::STANDARD.encode([seed; 32]);
        Identity::of_tenant(&Keyring::new(None, Default::default()), "t", Some(&seed)).unwrap()
    }

    #[test]
    fn an_envelope_edited_after_signing_does_not_verify() {
        let alice = id(1);
        let env = Envelope::sign(&alice, &serde_json::json!({"tenant": "acme", "n": 1})).unwrap();
        let body: serde_json::Value = env.verified().unwrap();
        assert_eq!(body["tenant"], "acme");
        let mut edited = env.clone();
        edited.body = edited.body.replace("acme", "victim");
        assert_eq!(
            edited.verified::<serde_json::Value>(),
            Err(Refusal::BadSignature)
        );
        let mut resigned = env.clone();
        resigned.signer = id(2).did;
        assert_eq!(
            resigned.verified::<serde_json::Value>(),
            Err(Refusal::BadSignature)
        );
    }

    #[test]
    fn a_submitter_gets_only_its_tenants_and_profiles() {
        let (alice, bob) = (id(1).did, id(2).did);
        let mut trust = Trust::default();
        trust
            .add_spec(&format!("{alice}@acme,beta/compute,minimal"))
            .unwrap();
        trust.add_spec(&format!("{bob}@*")).unwrap();
        assert_eq!(trust.admits(&alice, "acme", "minimal"), Ok(()));
        assert!(matches!(
            trust.admits(&alice, "victim", "minimal"),
            Err(Refusal::TenantNotAllowed { .. })
        ));
        assert!(matches!(
            trust.admits(&alice, "acme", "posix"),
            Err(Refusal::ProfileNotAllowed { .. })
        ));
        // Any tenant, but compute only when no profile is named.
        assert_eq!(trust.admits(&bob, "anyone", "compute"), Ok(()));
        assert!(trust.admits(&bob, "anyone", "network").is_err());
        assert!(matches!(
            trust.admits(&id(3).did, "acme", "compute"),
            Err(Refusal::UnknownSigner(_))
        ));
        for bad in [
            "did:key:z6Mk",
            "no-at-sign",
            &format!("{alice}@"),
            &format!("{alice}@/compute"),
        ] {
            assert!(Trust::default().add_spec(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn an_expiry_past_or_too_far_is_refused_beyond_the_clock_skew() {
        let (life, skew) = (NODE_MAX_TASK_LIFETIME.as_secs(), NODE_CLOCK_SKEW.as_secs());
        let now = 1_000_000;
        assert!(check_expiry(now + 50, now).is_ok());
        // A worker's clock a little behind or ahead of the submitter's.
        assert!(check_expiry(now + life + skew, now).is_ok());
        assert!(check_expiry(now - skew, now).is_ok());
        assert!(matches!(
            check_expiry(now - skew - 1, now),
            Err(Refusal::Expired { .. })
        ));
        assert!(matches!(
            check_expiry(now + life + skew + 1, now),
            Err(Refusal::ExpiryTooFar { .. })
        ));
    }
}
