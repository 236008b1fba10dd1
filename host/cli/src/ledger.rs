//! `wbx ledger`: check an agent run's signed ledger, and prove one of its
//! step lines to someone who has only the proof and the verifier key.

use crate::{exit, fail};
use std::io::Read;
use std::path::PathBuf;
use workbooks::Keyring;
use workbooks_agent::ledger::{self, InclusionProof};

#[derive(Debug, clap::Subcommand)]
pub(crate) enum LedgerCommand {
    /// Check that every line of <workdir>/_steps.jsonl is in the signed
    /// tree and the signature holds: exit 0, or 1 naming the first line
    /// that is not.
    Verify {
        /// The run's workdir.
        workdir: PathBuf,
        /// The verifier key to trust (default: the tenant's, from this
        /// home's keyring).
        #[arg(long)]
        key: Option<String>,
    },
    /// Print the inclusion proof of one line (from 1) as JSON.
    Prove {
        /// The run's workdir.
        workdir: PathBuf,
        /// The line, counted from 1.
        line: u64,
        /// The verifier key to trust.
        #[arg(long)]
        key: Option<String>,
    },
    /// Check an inclusion proof offline (a file, or - for stdin).
    Check {
        /// The proof, as `prove` printed it.
        proof: String,
        /// The verifier key to trust (default: the one in the proof, which
        /// shows only that the proof is whole).
        #[arg(long)]
        key: Option<String>,
    },
}

pub(crate) fn run(cmd: LedgerCommand, home: PathBuf) -> u8 {
    let keyring = Keyring::new(Some(home.join(workbooks::SECRETS_DIR)), Default::default());
    match cmd {
        LedgerCommand::Verify { workdir, key } => {
            let json = crate::out::json();
            match ledger::verify(&keyring, &workdir, key.as_deref()) {
                Ok(sealed) if json => {
                    outln!(
                        "{}",
                        serde_json::json!({"ok": true, "lines": sealed.size, "root": sealed.root})
                    );
                    0
                }
                Ok(sealed) => {
                    outln!(
                        "ledger holds: {} lines, root {}, signed by {}",
                        sealed.size,
                        sealed.root,
                        sealed.vkey.split('+').next().unwrap_or_default()
                    );
                    0
                }
                // Under --json, `fail` writes the error object.
                Err(e) => fail("ledger", e, exit::FAILED),
            }
        }
        LedgerCommand::Prove { workdir, line, key } => {
            match ledger::prove(&keyring, &workdir, line, key.as_deref()) {
                Ok(proof) => match serde_json::to_string_pretty(&proof) {
                    Ok(j) => {
                        outln!("{j}");
                        0
                    }
                    Err(e) => fail("ledger", e, exit::ENGINE),
                },
                Err(e) => fail("ledger", e, exit::FAILED),
            }
        }
        LedgerCommand::Check { proof, key } => {
            let mut bytes = Vec::new();
            let read = if proof == "-" {
                std::io::stdin().read_to_end(&mut bytes).map(|_| ())
            } else {
                std::fs::read(&proof).map(|b| bytes = b)
            };
            if let Err(e) = read {
                return fail("ledger", format!("{proof}: {e}"), exit::USAGE);
            }
            let proof: InclusionProof = match serde_json::from_slice(&bytes) {
                Ok(p) => p,
                Err(e) => return fail("ledger", format!("not a proof: {e}"), exit::USAGE),
            };
            let vkey = key.unwrap_or_else(|| proof.vkey.clone());
            match ledger::check_proof(&proof, &vkey) {
                Ok(()) => {
                    outln!(
                        "line {} is in the signed tree of {} lines",
                        proof.line,
                        proof.tree_size
                    );
                    0
                }
                Err(e) => fail("ledger", e, exit::FAILED),
            }
        }
    }
}
