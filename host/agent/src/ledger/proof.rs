//! Inclusion proofs of one step line, checkable offline.

use super::{LedgerError, lines, open_note};
use serde::{Deserialize, Serialize};
use std::path::Path;
use tlog_tiles::{Hash, check_record, prove_record, record_hash};
use workbooks::Keyring;

/// That line `line` of a run's `_steps.jsonl` is in its signed tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InclusionProof {
    /// The line, counted from 1.
    pub line: u64,
    /// Its text as written (without its newline).
    pub text: String,
    /// Lines in the tree.
    pub tree_size: u64,
    /// The audit path, hex, from the leaf up (RFC 6962).
    pub path: Vec<String>,
    /// The signed checkpoint (a C2SP signed note).
    pub checkpoint: String,
    /// The verifier key that signed it.
    pub vkey: String,
}

/// The inclusion proof of `line` (from 1) of the run in `workdir`; the
/// ledger is verified first.
pub fn prove(
    keyring: &Keyring,
    workdir: &Path,
    line: u64,
    vkey: Option<&str>,
) -> Result<InclusionProof, LedgerError> {
    let checked = super::checked(keyring, workdir, vkey)?;
    let size = checked.sealed.size;
    if line == 0 || line > size {
        return Err(LedgerError::Broken(format!(
            "no line {line}: the ledger holds lines 1 to {size}"
        )));
    }
    let path = prove_record(size, line - 1, &checked.tree)
        .map_err(|e| LedgerError::Broken(e.to_string()))?;
    // Every line was checked against its leaf, so line `line` is there.
    let text = lines(&checked.steps)[(line - 1) as usize];
    Ok(InclusionProof {
        line,
        text: String::from_utf8_lossy(text).into_owned(),
        tree_size: size,
        path: path.iter().map(|h| hex::encode(h.0)).collect(),
        checkpoint: String::from_utf8_lossy(&checked.note).into_owned(),
        vkey: checked.sealed.vkey,
    })
}

/// Checks `proof` with no ledger at hand: the checkpoint's signature under
/// `vkey`, then the line's audit path up to the signed root.
pub fn check_proof(proof: &InclusionProof, vkey: &str) -> Result<(), LedgerError> {
    let checkpoint = open_note(proof.checkpoint.as_bytes(), vkey)?;
    if checkpoint.size() != proof.tree_size {
        return Err(LedgerError::Broken(format!(
            "the proof is for a tree of {} lines, the checkpoint signs {}",
            proof.tree_size,
            checkpoint.size()
        )));
    }
    let path = proof
        .path
        .iter()
        .map(|h| {
            hex::decode(h)
                .ok()
                .and_then(|b| <[u8; 32]>::try_from(b).ok())
                .map(Hash)
                .ok_or_else(|| LedgerError::Broken(format!("not a hash in the path: {h}")))
        })
        .collect::<Result<Vec<Hash>, _>>()?;
    let leaf = record_hash(proof.text.as_bytes());
    let n = proof
        .line
        .checked_sub(1)
        .ok_or_else(|| LedgerError::Broken("no line 0".into()))?;
    check_record(&path, proof.tree_size, *checkpoint.hash(), n, leaf).map_err(|_| {
        LedgerError::Broken(format!(
            "line {} is not in the signed tree under this proof",
            proof.line
        ))
    })
}
