//! The signed ledger of an agent run, attacked as someone with write
//! access to the workdir would: edit, remove, reorder or append a step
//! line, rewrite the leaves to match, forge the checkpoint, sign with
//! another key; and inclusion proofs checked with nothing but the proof.

use crate::agent::{run, task};
use crate::common::{text, wbx};
use crate::model_server::{self, tool_calls};
use std::path::Path;
use workbooks::{Keyring, SECRETS_DIR};
use workbooks_agent::AgentRecord;
use workbooks_agent::ledger::{self, LedgerError};

/// A finished run of three tool calls (two in step 1, one in step 2).
async fn sealed_run() -> (AgentRecord, tempfile::TempDir) {
    let script = vec![
        tool_calls(&[
            ("a", "vfs_write", r#"{"path":"a.txt","content":"one"}"#),
            ("b", "shell", r#"{"pipeline":"cat a.txt"}"#),
        ]),
        tool_calls(&[("c", "vfs_read", r#"{"path":"a.txt"}"#)]),
        model_server::text("sealed"),
    ];
    let (record, _, home) = run(script, task("seal")).await;
    (record, home)
}

fn keyring(home: &Path) -> Keyring {
    Keyring::new(Some(home.join(SECRETS_DIR)), Default::default())
}

fn broken(e: Result<ledger::Sealed, LedgerError>) -> String {
    match e {
        Err(LedgerError::Broken(why)) => why,
        other => panic!("not broken: {other:?}"),
    }
}

fn steps(record: &AgentRecord) -> Vec<String> {
    std::fs::read_to_string(record.workdir.join(ledger::STEPS))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn write_steps(record: &AgentRecord, lines: &[String]) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(record.workdir.join(ledger::STEPS), text).unwrap();
}

#[tokio::test]
async fn a_finished_run_is_sealed_and_its_ledger_verifies_from_the_cli() {
    let (record, home) = sealed_run().await;
    let sealed = record.ledger.clone().expect("sealed");
    assert_eq!(sealed.size, 3);
    assert!(
        sealed.vkey.starts_with("workbooks/default+"),
        "{}",
        sealed.vkey
    );
    let again = ledger::verify(&keyring(home.path()), &record.workdir, None).unwrap();
    assert_eq!(again, sealed);
    let workdir = record.workdir.to_str().unwrap();
    let out = wbx(home.path(), &["ledger", "verify", workdir], b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("ledger holds: 3 lines"),
        "{}",
        text(&out.stdout)
    );
}

#[tokio::test]
async fn every_edit_of_the_trace_is_caught_and_the_first_bad_line_named() {
    let (record, home) = sealed_run().await;
    let keys = keyring(home.path());
    let original = steps(&record);
    let verify = || ledger::verify(&keys, &record.workdir, None);

    let mut edited = original.clone();
    edited[1] = edited[1].replace("\"exit_code\":0", "\"exit_code\":7");
    assert_ne!(edited[1], original[1]);
    write_steps(&record, &edited);
    assert!(broken(verify()).starts_with("line 2 of _steps.jsonl is not the line"));

    write_steps(&record, &[original[0].clone(), original[2].clone()]);
    assert!(broken(verify()).starts_with("line 2 of _steps.jsonl is not the line"));

    write_steps(
        &record,
        &[
            original[1].clone(),
            original[0].clone(),
            original[2].clone(),
        ],
    );
    assert!(broken(verify()).starts_with("line 1 of _steps.jsonl is not the line"));

    write_steps(&record, &original[..2]);
    assert!(broken(verify()).contains("ends at line 2; the ledger holds 3"));

    let mut appended = original.clone();
    appended.push(original[2].clone());
    write_steps(&record, &appended);
    assert!(broken(verify()).starts_with("line 4 of _steps.jsonl is not in the ledger"));

    // Leaves rewritten to match an edited line no longer hash to the root.
    write_steps(&record, &edited);
    let kept = std::fs::read_to_string(record.workdir.join(ledger::LEAVES)).unwrap();
    let mut leaves: Vec<String> = kept.lines().map(str::to_string).collect();
    leaves[1] = hex::encode(tlog_leaf(edited[1].as_bytes()));
    std::fs::write(
        record.workdir.join(ledger::LEAVES),
        leaves.join("\n") + "\n",
    )
    .unwrap();
    assert_eq!(
        broken(verify()),
        "ledger.leaves does not hash to the signed root"
    );
    leaves.pop();
    std::fs::write(
        record.workdir.join(ledger::LEAVES),
        leaves.join("\n") + "\n",
    )
    .unwrap();
    let e = broken(verify());
    assert_eq!(
        e,
        "ledger.leaves holds 2 leaves; the signed checkpoint holds 3"
    );
    std::fs::write(record.workdir.join(ledger::LEAVES), &kept).unwrap();

    // A checkpoint whose root was rewritten no longer carries its signature.
    write_steps(&record, &original);
    let note = std::fs::read_to_string(record.workdir.join(ledger::CHECKPOINT)).unwrap();
    let mut forged: Vec<String> = note.lines().map(str::to_string).collect();
    forged[1] = "4".into();
    std::fs::write(
        record.workdir.join(ledger::CHECKPOINT),
        forged.join("\n") + "\n",
    )
    .unwrap();
    assert!(broken(verify()).starts_with("the signature does not hold"));
    std::fs::write(record.workdir.join(ledger::CHECKPOINT), &note).unwrap();

    // The untouched run verifies again, and fails under another key.
    let sealed = ledger::verify(&keys, &record.workdir, None).unwrap();
    let other_home = tempfile::tempdir().unwrap();
    let other = ledger::tenant_vkey(&keyring(other_home.path()), "default").unwrap();
    assert_ne!(other, sealed.vkey);
    let e = broken(ledger::verify(&keys, &record.workdir, Some(&other)));
    assert!(e.starts_with("the signature does not hold"), "{e}");

    // The CLI names the line and exits 1.
    write_steps(&record, &edited);
    let out = wbx(
        home.path(),
        &["ledger", "verify", record.workdir.to_str().unwrap()],
        b"",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("line 2 of _steps.jsonl"),
        "{}",
        text(&out.stderr)
    );
}

/// RFC 6962's leaf hash: SHA-256 of 0x00 and the line.
fn tlog_leaf(line: &[u8]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update([0u8]);
    h.update(line);
    h.finalize().into()
}

#[tokio::test]
async fn an_inclusion_proof_checks_offline_and_only_for_its_own_line_and_key() {
    let (record, home) = sealed_run().await;
    let keys = keyring(home.path());
    let proof = ledger::prove(&keys, &record.workdir, 2, None).unwrap();
    assert_eq!(proof.text, steps(&record)[1]);
    ledger::check_proof(&proof, &proof.vkey).unwrap();
    let mut other_line = proof.clone();
    other_line.text = steps(&record)[0].clone();
    assert!(ledger::check_proof(&other_line, &proof.vkey).is_err());
    let mut moved = proof.clone();
    moved.line = 3;
    assert!(ledger::check_proof(&moved, &proof.vkey).is_err());
    let other_home = tempfile::tempdir().unwrap();
    let other = ledger::tenant_vkey(&keyring(other_home.path()), "default").unwrap();
    assert!(ledger::check_proof(&proof, &other).is_err());
    assert!(ledger::prove(&keys, &record.workdir, 4, None).is_err());

    // From the CLI: prove, then check with nothing but the proof and key.
    let workdir = record.workdir.to_str().unwrap();
    let out = wbx(home.path(), &["ledger", "prove", workdir, "3"], b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let elsewhere = tempfile::tempdir().unwrap();
    let key = proof.vkey.clone();
    let checked = wbx(
        elsewhere.path(),
        &["ledger", "check", "-", "--key", &key],
        &out.stdout,
    );
    assert!(checked.status.success(), "{}", text(&checked.stderr));
    assert_eq!(
        text(&checked.stdout),
        "line 3 is in the signed tree of 3 lines\n"
    );
    let refused = wbx(
        elsewhere.path(),
        &["ledger", "check", "-", "--key", &other],
        &out.stdout,
    );
    assert_eq!(refused.status.code(), Some(1));
}

#[tokio::test]
async fn a_run_that_called_no_tool_seals_an_empty_ledger_that_verifies() {
    let (record, _, home) = run(vec![model_server::text("nothing to do")], task("idle")).await;
    assert_eq!(record.ledger.as_ref().map(|l| l.size), Some(0));
    assert!(!record.workdir.join(ledger::STEPS).exists());
    let sealed = ledger::verify(&keyring(home.path()), &record.workdir, None).unwrap();
    assert_eq!(sealed.size, 0);
    // A line added where there was none is caught.
    std::fs::write(record.workdir.join(ledger::STEPS), "{\"step\":1}\n").unwrap();
    let e = broken(ledger::verify(&keyring(home.path()), &record.workdir, None));
    assert_eq!(e, "line 1 of _steps.jsonl is not in the ledger (appended)");
}

#[tokio::test]
async fn a_line_the_runs_own_tools_slip_into_the_trace_is_not_sealed() {
    let forge = r#"{"pipeline":"echo '{\"step\":1,\"tool\":\"forged\"}' >> _steps.jsonl"}"#;
    let script = vec![
        tool_calls(&[("f", "shell", forge)]),
        tool_calls(&[("d", "done", r#"{"result":"clean"}"#)]),
    ];
    let (record, _, home) = run(script, task("forge the trace")).await;
    assert_eq!(record.result, "clean");
    let lines = steps(&record);
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert!(lines[0].contains("forged"), "{lines:?}");
    // The ledger holds the two lines the host wrote, not the third.
    assert_eq!(record.ledger.as_ref().map(|l| l.size), Some(2));
    let e = broken(ledger::verify(&keyring(home.path()), &record.workdir, None));
    assert!(
        e.starts_with("line 1 of _steps.jsonl is not the line"),
        "{e}"
    );
}
