//! `wbx --broker` takes a replacement broker and refuses a bad one. (The
//! brokers themselves: the core's tests.)

use crate::common::{text, wbx};
use guest_artifacts::*;

#[test]
fn wbx_takes_a_replacement_broker_and_refuses_a_bad_one() {
    let home = tempfile::tempdir().unwrap();
    let broker = format!("kv={TEST_KV_BROKER}");
    let out = wbx(
        home.path(),
        &[
            "--broker",
            &broker,
            "exec",
            "--profile",
            "minimal",
            KV_OPS,
            "--",
            "set",
            "a",
            "1",
            "list",
            "",
        ],
        b"",
    );
    assert_eq!(
        text(&out.stdout),
        "Ok(())\n1 keys: a\n",
        "{}",
        text(&out.stderr)
    );
    let out = wbx(
        home.path(),
        &[
            "--broker",
            &broker,
            "inspect",
            KV_OPS,
            "--profile",
            "minimal",
        ],
        b"",
    );
    assert!(
        text(&out.stdout).contains("embedder:kv-broker serves workbooks:engine/kv@0.1.0"),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let out = wbx(
        home.path(),
        &[
            "--broker",
            &format!("secrets={TEST_KV_BROKER}"),
            "exec",
            KV_OPS,
        ],
        b"",
    );
    assert_ne!(out.status.code(), Some(0));
    assert!(
        text(&out.stderr).contains("broker secrets: import workbooks:host/kv@0.1.0 refused"),
        "{}",
        text(&out.stderr)
    );
    let out = wbx(home.path(), &["--broker", "kv", "exec", KV_OPS], b"");
    assert_eq!(out.status.code(), Some(64), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("--broker kv: expected CAP=FILE.wasm"));
}
