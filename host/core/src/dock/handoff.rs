//! Handing a docking to a child process: the compiled code of a guest (or
//! of its composition with its brokers) as this engine docked it, so a
//! container-tier child docks the same guest without a compile cache, a
//! home, or compiling anything under its ceilings.
//!
//! The parent writes the code to a memfd it seals against every change
//! (write, grow, shrink, and further seals) and the child inherits it; the
//! child maps it from `/proc/self/fd/N`. Invariant: the child trusts only
//! what its parent handed it, and nothing it could change: it holds no
//! writable path to the code, and a sealed memfd refuses writes through
//! every descriptor, `/proc/self/fd` reopened ones included. The child
//! still docks as any engine does (the import pre-check, the grant, the
//! linker); the handoff only spares it the composing and compiling.

use super::composed::{self, Index};
use super::{DockError, Docked, Guest};
use crate::artifact::{Artifact, ArtifactKind};
use std::os::fd::OwnedFd;
use std::sync::Arc;

/// What a child is told of a handed docking (the code comes as a
/// descriptor): part of the tiers' one request, so the protocol crate
/// declares it.
pub use workbooks_wire::child::{HandedComposition, Handoff};

/// A docking as children are handed it: what they are told, and the
/// compiled code and the guest's bytes, each in a sealed memfd. Made once
/// per docking and shared by every child of it (a sealed memfd cannot be
/// changed by any of them).
#[derive(Debug)]
pub(crate) struct Sealed {
    /// What a child is told (its descriptor number left for the caller).
    pub(crate) handoff: Handoff,
    /// The compiled code.
    pub(crate) code: OwnedFd,
    /// The guest's own bytes.
    pub(crate) guest: OwnedFd,
}

/// `bytes` in a memfd sealed against every change: no write, no growing,
/// no shrinking, no further seal, through any descriptor.
pub(crate) fn sealed_memfd(name: &str, bytes: &[u8]) -> std::io::Result<OwnedFd> {
    use rustix::fs::{MemfdFlags, SealFlags, fcntl_add_seals, memfd_create};
    let fd = memfd_create(name, MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING)?;
    let mut file = std::fs::File::from(fd);
    std::io::Write::write_all(&mut file, bytes)?;
    let fd = OwnedFd::from(file);
    fcntl_add_seals(
        &fd,
        SealFlags::WRITE | SealFlags::SHRINK | SealFlags::GROW | SealFlags::SEAL,
    )?;
    Ok(fd)
}

impl Docked {
    /// This docking of `guest` as children are handed it, made on first
    /// use.
    pub(crate) fn sealed(&self, guest: &Artifact) -> Result<Arc<Sealed>, DockError> {
        if let Some(sealed) = self.sealed.get() {
            return Ok(sealed.clone());
        }
        let (handoff, bytes) = self.handoff()?;
        let io = |e: std::io::Error| DockError::Compile(format!("cannot seal the handoff: {e}"));
        let made = Arc::new(Sealed {
            handoff,
            code: sealed_memfd("wb-compiled", &bytes).map_err(io)?,
            guest: sealed_memfd("wb-guest", guest.bytes()).map_err(io)?,
        });
        let _ = self.sealed.set(made.clone());
        Ok(self.sealed.get().cloned().unwrap_or(made))
    }

    /// The compiled code, as a child maps it.
    #[cfg(feature = "compile")]
    fn serialized(&self) -> Result<Vec<u8>, DockError> {
        let serialized = match &self.guest {
            Guest::Component { pre, .. } => pre.component().serialize(),
            Guest::Module { pre, .. } => pre.module().serialize(),
        };
        serialized.map_err(|e| DockError::Compile(format!("{e:#}")))
    }

    /// A build without the compiler (`wbr`) cannot write compiled code
    /// out, so it hands none: the container tier needs `wbx`.
    #[cfg(not(feature = "compile"))]
    fn serialized(&self) -> Result<Vec<u8>, DockError> {
        Err(DockError::Compile(
            "handing compiled code to a container needs the compiler; this build (wbr) has none: use wbx".into(),
        ))
    }

    /// What a child needs to dock this guest as it was docked here (its
    /// descriptor left 0, for the caller to set), and the compiled code.
    pub(crate) fn handoff(&self) -> Result<(Handoff, Vec<u8>), DockError> {
        let bytes = self.serialized()?;
        let receipt = &self.receipt;
        let composition = match &receipt.composed_sha256 {
            None => None,
            Some(sha256) => {
                let hash = |hex: &str| -> Result<[u8; 32], DockError> {
                    hex::decode(hex)
                        .ok()
                        .and_then(|b| b.try_into().ok())
                        .ok_or_else(|| DockError::Compose(format!("not a sha256: {hex}")))
                };
                let brokers = receipt
                    .brokers
                    .iter()
                    .map(|b| hash(&b.sha256))
                    .collect::<Result<Vec<_>, _>>()?;
                Some(HandedComposition {
                    key: composed::key(
                        super::compose::COMPOSER,
                        &hash(&receipt.artifact_sha256)?,
                        &brokers,
                    ),
                    sha256: sha256.clone(),
                    linked: receipt.linked.clone(),
                })
            }
        };
        let handoff = Handoff {
            fd: 0,
            compiled: composition
                .as_ref()
                .map_or_else(|| receipt.artifact_sha256.clone(), |c| c.sha256.clone()),
            module: matches!(self.guest, Guest::Module { .. }),
            concurrent: self.flavor == crate::flavor::Flavor::Concurrent,
            composition,
        };
        Ok((handoff, bytes))
    }
}

/// The kind of what was compiled.
pub(crate) fn kind(handoff: &Handoff) -> ArtifactKind {
    if handoff.module {
        ArtifactKind::Module
    } else {
        ArtifactKind::Component
    }
}

/// The engine the code was compiled for.
pub(crate) fn flavor(handoff: &Handoff) -> crate::flavor::Flavor {
    if handoff.concurrent {
        crate::flavor::Flavor::Concurrent
    } else {
        crate::flavor::Flavor::Sync
    }
}

/// The compiled artifact's sha256, as bytes.
pub(crate) fn compiled_sha(handoff: &Handoff) -> Option<[u8; 32]> {
    hex::decode(&handoff.compiled).ok()?.try_into().ok()
}

/// The index the composition cache keeps for a handed composition.
pub(crate) fn handed_index(c: &HandedComposition) -> Index {
    Index {
        sha256: c.sha256.clone(),
        linked: c.linked.clone(),
    }
}
