//! The receipt of a docked component: what it was granted and what it got.

use crate::policy::{CapSet, Profile};
use serde::Serialize;

/// How one import of the guest is satisfied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ImportReceipt {
    /// The import name as the guest wrote it.
    pub name: String,
    /// The cap word it needs, or `base` for always-linked interfaces.
    pub cap: String,
    /// `host`, or `broker <name>` when a broker component serves it.
    pub served_by: String,
}

/// A broker component composed into the docked artifact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BrokerReceipt {
    /// The broker's package name.
    pub name: String,
    /// The guest-facing interface it serves.
    pub serves: String,
    /// The sha256 of its bytes.
    pub sha256: String,
    /// Whether an embedder supplied it in place of the shipped broker.
    pub replaced: bool,
}

/// What a docked component was granted and what it was linked with.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Receipt {
    /// The profile name the caller asked for.
    pub profile_requested: String,
    /// The profile in effect (unknown names resolve to compute).
    pub profile_effective: Profile,
    /// The caps in effect.
    pub caps: CapSet,
    /// Every import of the guest and what serves it.
    pub imports: Vec<ImportReceipt>,
    /// The imports the host linked into the final artifact (after brokers
    /// were composed in).
    pub linked: Vec<String>,
    /// Broker components composed with the guest.
    pub brokers: Vec<BrokerReceipt>,
    /// The sha256 of the guest's bytes.
    pub artifact_sha256: String,
    /// The sha256 of the composition, when brokers were composed in.
    pub composed_sha256: Option<String>,
    /// Who signed the artifact; `None` when unsigned.
    pub signer: Option<String>,
}

impl std::fmt::Display for Receipt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "profile   {} (requested {})",
            self.profile_effective, self.profile_requested
        )?;
        writeln!(f, "caps      {}", self.caps)?;
        writeln!(f, "artifact  sha256:{}", self.artifact_sha256)?;
        if let Some(c) = &self.composed_sha256 {
            writeln!(f, "composed  sha256:{c}")?;
        }
        for b in &self.brokers {
            writeln!(
                f,
                "broker    {} serves {} (sha256:{}){}",
                b.name,
                b.serves,
                &b.sha256[..16],
                if b.replaced {
                    ", replaced by the embedder"
                } else {
                    ""
                }
            )?;
        }
        writeln!(
            f,
            "signer    {}",
            self.signer.as_deref().unwrap_or("unsigned")
        )?;
        writeln!(f, "linked    {} imports", self.linked.len())?;
        for name in &self.linked {
            writeln!(f, "  {name}")?;
        }
        Ok(())
    }
}
