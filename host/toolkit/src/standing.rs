//! Whose toolkit it is: first-party only when the operator says so.
//!
//! A toolkit is **first-party** (its command registered at `instance`)
//! only on the operator's word: it lies under a root the operator vouches
//! for (`WB_FIRST_PARTY_TOOLKITS`, or [`Vouch::roots`]), or its manifest
//! is signed (`#+AUTHOR_DID`, `#+SIGNATURE`) by a did:key the operator
//! trusts (`WB_TRUSTED_SIGNERS`, or [`Vouch::signers`]). A toolkit that
//! says `#+TRUST: third-party` is **third-party**: it must carry its
//! author's signature, and runs one tier stronger (`os_process`). Any
//! other is **unattested**, and runs one tier stronger too.
//!
//! Threat: a toolkit from somewhere else (a download, a colleague's
//! folder, a repository's `toolkits/`) that simply left out `#+TRUST`
//! counted as first-party, and its command ran in the engine's process.
//! Silence is no longer a claim; neither is `#+TRUST: first-party` on its
//! own.

use super::Toolkit;
use std::path::PathBuf;
use workbooks::commands::Tier;

/// What the operator vouches for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Vouch {
    /// Roots whose toolkits are the operator's.
    pub roots: Vec<PathBuf>,
    /// did:keys whose signed manifests are the operator's.
    pub signers: Vec<String>,
}

impl Vouch {
    /// `WB_FIRST_PARTY_TOOLKITS` (roots, `:`-separated) and
    /// `WB_TRUSTED_SIGNERS` (did:keys, `,`-separated).
    pub fn from_env() -> Vouch {
        let roots = std::env::var_os("WB_FIRST_PARTY_TOOLKITS")
            .map(|v| {
                std::env::split_paths(&v)
                    .filter(|p| !p.as_os_str().is_empty())
                    .collect()
            })
            .unwrap_or_default();
        let signers = std::env::var("WB_TRUSTED_SIGNERS")
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        Vouch { roots, signers }
    }

    /// Why the operator vouches for `tk`, if it does.
    pub(crate) fn covers(&self, tk: &Toolkit) -> Option<String> {
        if let Ok(dir) = tk.dir.canonicalize() {
            for root in &self.roots {
                if root.canonicalize().is_ok_and(|r| dir.starts_with(&r)) {
                    return Some(format!("under the first-party root {}", root.display()));
                }
            }
        }
        let m = &tk.manifest;
        let did = m.kw("AUTHOR_DID")?;
        let signature = m.kw("SIGNATURE")?;
        (self.signers.iter().any(|s| s == did)
            && workbooks::identity::verify(did, &m.signed_bytes(), signature).is_ok())
        .then(|| format!("signed by the trusted signer {did}"))
    }
}

/// Whose a toolkit is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// The operator's, and why.
    FirstParty(String),
    /// Declared `#+TRUST: third-party`.
    ThirdParty,
    /// Neither: nobody vouched for it.
    Unattested,
}

impl Standing {
    /// Of `tk`, as the root that found it was vouched.
    pub fn of(tk: &Toolkit) -> Standing {
        if tk.manifest.kw("TRUST") == Some("third-party") {
            return Standing::ThirdParty;
        }
        match &tk.vouched {
            Some(why) => Standing::FirstParty(why.clone()),
            None => Standing::Unattested,
        }
    }

    /// The tier its command is registered at.
    pub fn tier(&self) -> Tier {
        match self {
            Standing::FirstParty(_) => Tier::Instance,
            Standing::ThirdParty | Standing::Unattested => Tier::OsProcess,
        }
    }

    /// `first-party`, `third-party` or `unattested`.
    pub fn word(&self) -> &'static str {
        match self {
            Standing::FirstParty(_) => "first-party",
            Standing::ThirdParty => "third-party",
            Standing::Unattested => "unattested",
        }
    }
}
