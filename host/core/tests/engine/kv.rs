//! kv: tenant isolation, limits, persistence across instances and engine
//! restarts.

use crate::common::{ok_stdout, own_engine, run_with};
use guest_artifacts::*;
use workbooks::{Engine, Grant, SessionOptions};

guest_artifacts::foreach_kv!(assert_test_exists);

async fn kv(tenant: &str, args: &[&str]) -> String {
    let mut opts = SessionOptions::new("kv-probe", tenant);
    // Every put is flushed to disk before it returns; filling a tenant
    // takes longer than the profile's 5 s.
    opts.timeout = Some(std::time::Duration::from_secs(120));
    opts.args = args.iter().map(|a| a.to_string()).collect();
    ok_stdout(run_with(KV_OPS, &Grant::profile("minimal"), opts).await)
}

#[tokio::test]
async fn kv_ops() {
    let out = kv(
        "kv-ops",
        &[
            "set", "a", "1", "set", "b", "2", "get", "a", "exists", "b", "list", "", "del", "a",
            "del", "a", "get", "a",
        ],
    )
    .await;
    assert_eq!(
        out,
        "Ok(())\nOk(())\n1\nOk(true)\n2 keys: a,b\nOk(true)\nOk(false)\nOk(None)\n"
    );
}

#[tokio::test]
async fn tenants_never_see_each_others_keys() {
    kv("tenant-a", &["set", "shared-name", "from-a"]).await;
    assert_eq!(
        kv("tenant-b", &["get", "shared-name", "list", ""]).await,
        "Ok(None)\n0 keys: \n"
    );
    assert_eq!(kv("tenant-a", &["get", "shared-name"]).await, "from-a\n");
}

#[tokio::test]
async fn values_are_capped_at_one_mebibyte() {
    let out = kv(
        "kv-size",
        &["setn", "big", "1048576", "setn", "bigger", "1048577"],
    )
    .await;
    assert_eq!(out, "Ok(())\nErr(Error::ValueTooLarge(1048576))\n");
}

#[tokio::test]
async fn keys_are_validated() {
    let out = kv(
        "kv-keys",
        &[
            "set",
            "",
            "x",
            "set",
            &"k".repeat(513),
            "x",
            "set",
            "nul\0key",
            "x",
        ],
    )
    .await;
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].contains("InvalidKey") && lines[0].contains("empty"),
        "{out}"
    );
    assert!(
        lines[1].contains("InvalidKey") && lines[1].contains("512"),
        "{out}"
    );
    assert!(
        lines[2].contains("InvalidKey") && lines[2].contains("NUL"),
        "{out}"
    );
}

#[tokio::test]
async fn a_tenant_holds_at_most_ten_thousand_keys() {
    let out = kv(
        "kv-count",
        &[
            "fill",
            "10000",
            "k",
            "setn",
            "one-more",
            "1",
            "set",
            "k5",
            "overwrite-ok",
            "del",
            "k0",
            "set",
            "now-fits",
            "1",
        ],
    )
    .await;
    assert_eq!(
        out,
        "filled 10000\nErr(Error::TooManyKeys(10000))\nOk(())\nOk(true)\nOk(())\n"
    );
}

#[tokio::test]
async fn keys_survive_an_engine_restart() {
    let home = tempfile::tempdir().unwrap();
    let artifact = crate::common::artifact(KV_OPS);
    let grant = Grant::profile("minimal");
    let run = |engine: Engine, args: &'static [&'static str]| {
        let artifact = artifact.clone();
        let grant = grant.clone();
        async move {
            let docked = engine.dock(&artifact, &grant).unwrap();
            let mut opts = SessionOptions::new("restart", "durable");
            opts.args = args.iter().map(|a| a.to_string()).collect();
            ok_stdout(Ok(engine.run(&docked, opts).await.unwrap()))
        }
    };
    let first = own_engine(home.path());
    assert_eq!(
        run(first, &["set", "kept", "across-restart"]).await,
        "Ok(())\n"
    );
    // The first engine is gone (dropped above) and its database closed.
    let second = own_engine(home.path());
    assert_eq!(run(second, &["get", "kept"]).await, "across-restart\n");
}
