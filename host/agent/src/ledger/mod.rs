//! The ledger of an agent run: an RFC 6962 Merkle tree over the raw lines
//! of `<workdir>/_steps.jsonl`, and a checkpoint of it in the C2SP
//! signed-note format (`tlog-checkpoint` body), signed with the tenant's
//! Ed25519 key `ledger` from the home's keyring.
//!
//! Files, beside the trace: `ledger.note` (the signed checkpoint),
//! `ledger.leaves` (each line's leaf hash, hex, one per line, so a broken
//! line can be named) and `ledger.vkey` (the verifier key, for checking
//! elsewhere).
//!
//! Threat: someone with write access to the workdir edits, removes,
//! reorders or appends step lines after the run, or rewrites the leaves
//! to match. The leaves must hash to the signed root, and every line to
//! its leaf; the signature must hold under the tenant's key (taken from
//! the keyring, or given by the verifier, never trusted from the files
//! being checked). The key's private half never leaves the keyring.

mod proof;

pub use proof::{InclusionProof, check_proof, prove};

use signed_note::{Note, Signer, StandardVerifier, VerifierList};
use std::path::{Path, PathBuf};
use tlog_tiles::{
    Checkpoint, Hash, HashReader, record_hash, stored_hashes_for_record_hash, tree_hash,
};
use workbooks::{Keyring, Secret};

/// The trace the ledger covers.
pub const STEPS: &str = "_steps.jsonl";
/// The signed checkpoint.
pub const CHECKPOINT: &str = "ledger.note";
/// The leaf hashes, one hex line per step line.
pub const LEAVES: &str = "ledger.leaves";
/// The verifier key, `name+id+key`.
pub const VKEY: &str = "ledger.vkey";
/// The tenant's Ed25519 secret that signs its ledgers.
pub const KEY: &str = "ledger";

/// Why a ledger could not be written or read.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// A file could not be read or written.
    #[error("ledger: {path}: {error}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// The tenant's key could not be had.
    #[error("ledger: the signing key of tenant {tenant}: {why}")]
    Key {
        /// The tenant.
        tenant: String,
        /// Why.
        why: String,
    },
    /// The ledger does not hold: the first thing found wrong.
    #[error("ledger: {0}")]
    Broken(String),
}

/// The stored hashes of a tree, by stored-hash index.
#[derive(Default)]
pub(crate) struct Tree(Vec<Hash>);

impl HashReader for Tree {
    fn read_hashes(&self, indexes: &[u64]) -> Result<Vec<Hash>, tlog_tiles::Error> {
        indexes
            .iter()
            .map(|&i| {
                usize::try_from(i)
                    .ok()
                    .and_then(|i| self.0.get(i).copied())
                    .ok_or(tlog_tiles::Error::IndexesNotInTree)
            })
            .collect()
    }
}

impl Tree {
    /// The tree of `leaves`, in order.
    pub(crate) fn of(leaves: &[Hash]) -> Result<Tree, tlog_tiles::Error> {
        let mut tree = Tree::default();
        for (n, leaf) in leaves.iter().enumerate() {
            let more = stored_hashes_for_record_hash(n as u64, *leaf, &tree)?;
            tree.0.extend(more);
        }
        Ok(tree)
    }

    pub(crate) fn root(&self, size: u64) -> Result<Hash, tlog_tiles::Error> {
        tree_hash(size, self)
    }
}

/// The step lines of a trace as written (without their newlines).
pub(crate) fn lines(text: &[u8]) -> Vec<&[u8]> {
    let mut lines: Vec<&[u8]> = text.split(|b| *b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    lines
}

fn read(path: PathBuf) -> Result<Vec<u8>, LedgerError> {
    std::fs::read(&path).map_err(|error| LedgerError::Io { path, error })
}

/// The trace of `workdir`; a run that called no tool has none, and its
/// ledger holds no line.
pub(crate) fn read_steps(workdir: &Path) -> Result<Vec<u8>, LedgerError> {
    match std::fs::read(workdir.join(STEPS)) {
        Ok(t) => Ok(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(error) => Err(LedgerError::Io {
            path: workdir.join(STEPS),
            error,
        }),
    }
}

/// Replaces `path` whole, never through a link planted where it stands.
fn write(path: PathBuf, bytes: &[u8]) -> Result<(), LedgerError> {
    workbooks::files::write_atomic(&path, bytes).map_err(|error| LedgerError::Io { path, error })
}

/// The note key name of a tenant's ledgers.
fn key_name(tenant: &str) -> String {
    format!("workbooks/{tenant}")
}

/// Signs notes with a keyring secret.
struct KeySigner {
    name: String,
    id: u32,
    secret: Secret,
}

impl Signer for KeySigner {
    fn name(&self) -> &str {
        &self.name
    }

    fn key_id(&self) -> u32 {
        self.id
    }

    fn sign(&self, msg: &[u8]) -> Result<Vec<u8>, signature::Error> {
        self.secret
            .ed25519_sign(msg)
            .map_err(|_| signature::Error::new())
    }
}

/// The verifier key of `tenant`'s ledger key, making the key on first use.
pub fn tenant_vkey(keyring: &Keyring, tenant: &str) -> Result<String, LedgerError> {
    Ok(signer(keyring, tenant)?.1)
}

fn signer(keyring: &Keyring, tenant: &str) -> Result<(KeySigner, String), LedgerError> {
    let key_err = |why: String| LedgerError::Key {
        tenant: tenant.to_string(),
        why,
    };
    let (secret, public) = keyring.ed25519_key(tenant, KEY).map_err(key_err)?;
    let verifying =
        ed25519_dalek::VerifyingKey::from_bytes(&public).map_err(|e| key_err(e.to_string()))?;
    let name = key_name(tenant);
    let vkey = signed_note::new_ed25519_verifier_key(&name, &verifying);
    let encoded = [&[1u8][..], &public[..]].concat();
    let id = signed_note::key_id(&name, &encoded);
    Ok((KeySigner { name, id, secret }, vkey))
}

/// What a sealed or verified ledger covers.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Sealed {
    /// Lines in the tree.
    pub size: u64,
    /// The root, base64 as in the checkpoint.
    pub root: String,
    /// The verifier key.
    pub vkey: String,
}

/// Writes the ledger of run `run_id` of `tenant` into `workdir`: leaves,
/// checkpoint, signature, verifier key, over `lines`: the step lines the
/// host wrote (never read back from the workdir, where the run's own
/// tools may have written too).
pub fn seal(
    keyring: &Keyring,
    tenant: &str,
    run_id: &str,
    workdir: &Path,
    lines: &[String],
) -> Result<Sealed, LedgerError> {
    let leaves: Vec<Hash> = lines.iter().map(|l| record_hash(l.as_bytes())).collect();
    let broken = |e: tlog_tiles::Error| LedgerError::Broken(e.to_string());
    let tree = Tree::of(&leaves).map_err(broken)?;
    let size = leaves.len() as u64;
    let root = tree.root(size).map_err(broken)?;
    let origin = format!("{}/runs/{run_id}", key_name(tenant));
    let checkpoint = Checkpoint::new(&origin, size, root, "")
        .map_err(|_| LedgerError::Broken(format!("bad origin {origin}")))?;
    let (signer, vkey) = signer(keyring, tenant)?;
    let mut note =
        Note::new(&checkpoint.to_bytes(), &[]).map_err(|e| LedgerError::Broken(e.to_string()))?;
    note.add_sigs(&[&signer])
        .map_err(|e| LedgerError::Broken(e.to_string()))?;
    let hexes: String = leaves.iter().map(|h| hex::encode(h.0) + "\n").collect();
    write(workdir.join(LEAVES), hexes.as_bytes())?;
    write(workdir.join(CHECKPOINT), &note.to_bytes())?;
    write(workdir.join(VKEY), format!("{vkey}\n").as_bytes())?;
    Ok(Sealed {
        size,
        root: root.to_string(),
        vkey,
    })
}

/// The checkpoint of a signed note, if `vkey` signed it.
pub(crate) fn open_note(note: &[u8], vkey: &str) -> Result<Checkpoint, LedgerError> {
    let verifier = StandardVerifier::new(vkey.trim())
        .map_err(|e| LedgerError::Broken(format!("bad verifier key: {e}")))?;
    let note = Note::from_bytes(note)
        .map_err(|e| LedgerError::Broken(format!("{CHECKPOINT} is not a signed note: {e}")))?;
    note.verify(&VerifierList::new(vec![Box::new(verifier)]))
        .map_err(|e| LedgerError::Broken(format!("the signature does not hold: {e}")))?;
    Checkpoint::from_bytes(note.text())
        .map_err(|_| LedgerError::Broken(format!("{CHECKPOINT} is not a checkpoint")))
}

/// The verifier key to trust for `note`: `given`, else the key of the
/// tenant the checkpoint names, from the keyring (never `ledger.vkey`).
fn trusted_vkey(
    keyring: &Keyring,
    note: &[u8],
    given: Option<&str>,
) -> Result<String, LedgerError> {
    if let Some(v) = given {
        return Ok(v.to_string());
    }
    let origin = String::from_utf8_lossy(note.split(|b| *b == b'\n').next().unwrap_or_default())
        .into_owned();
    let tenant = origin
        .strip_prefix("workbooks/")
        .and_then(|rest| rest.split('/').next())
        .filter(|t| workbooks::storage::validate_name("tenant", t).is_ok())
        .ok_or_else(|| LedgerError::Broken(format!("{CHECKPOINT} names no tenant: {origin}")))?;
    if keyring.get(tenant, KEY).is_none() {
        return Err(LedgerError::Key {
            tenant: tenant.to_string(),
            why: "no ledger key in this home's keyring; pass the verifier key".into(),
        });
    }
    tenant_vkey(keyring, tenant)
}

/// Checks the ledger of `workdir`: the signature (under `vkey`, else the
/// tenant's key in `keyring`), the leaves against the signed root, every
/// line against its leaf. The first thing wrong is the error.
pub fn verify(
    keyring: &Keyring,
    workdir: &Path,
    vkey: Option<&str>,
) -> Result<Sealed, LedgerError> {
    checked(keyring, workdir, vkey).map(|c| c.sealed)
}

/// A ledger that held, with what checking it read and built.
pub(crate) struct Checked {
    pub(crate) sealed: Sealed,
    pub(crate) note: Vec<u8>,
    pub(crate) tree: Tree,
    pub(crate) steps: Vec<u8>,
}

/// [`verify`], keeping the note, the tree and the trace it read.
pub(crate) fn checked(
    keyring: &Keyring,
    workdir: &Path,
    vkey: Option<&str>,
) -> Result<Checked, LedgerError> {
    let note = read(workdir.join(CHECKPOINT))?;
    let vkey = trusted_vkey(keyring, &note, vkey)?;
    let checkpoint = open_note(&note, &vkey)?;
    let leaves = read_leaves(workdir)?;
    let tree = Tree::of(&leaves).map_err(|e| LedgerError::Broken(e.to_string()))?;
    let size = leaves.len() as u64;
    let root = tree
        .root(size)
        .map_err(|e| LedgerError::Broken(e.to_string()))?;
    if size != checkpoint.size() {
        return Err(LedgerError::Broken(format!(
            "{LEAVES} holds {size} leaves; the signed checkpoint holds {}",
            checkpoint.size()
        )));
    }
    if root != *checkpoint.hash() {
        return Err(LedgerError::Broken(format!(
            "{LEAVES} does not hash to the signed root"
        )));
    }
    let steps = read_steps(workdir)?;
    let lines = lines(&steps);
    for (i, leaf) in leaves.iter().enumerate() {
        match lines.get(i) {
            Some(line) if record_hash(line) == *leaf => {}
            Some(_) => {
                return Err(LedgerError::Broken(format!(
                    "line {} of {STEPS} is not the line the ledger holds (edited, removed or reordered)",
                    i + 1
                )));
            }
            None => {
                return Err(LedgerError::Broken(format!(
                    "{STEPS} ends at line {}; the ledger holds {size} (lines removed)",
                    lines.len()
                )));
            }
        }
    }
    if lines.len() > leaves.len() {
        return Err(LedgerError::Broken(format!(
            "line {} of {STEPS} is not in the ledger (appended)",
            leaves.len() + 1
        )));
    }
    let sealed = Sealed {
        size,
        root: root.to_string(),
        vkey,
    };
    Ok(Checked {
        sealed,
        note,
        tree,
        steps,
    })
}

fn read_leaves(workdir: &Path) -> Result<Vec<Hash>, LedgerError> {
    let text = read(workdir.join(LEAVES))?;
    String::from_utf8_lossy(&text)
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let bytes = hex::decode(l.trim())
                .ok()
                .and_then(|b| <[u8; 32]>::try_from(b).ok());
            bytes.map(Hash).ok_or_else(|| {
                LedgerError::Broken(format!("{LEAVES} line {} is not a hash", i + 1))
            })
        })
        .collect()
}
