//! Brokers: every brokered cap is served by a composed component over its
//! host primitive, and a replacement broker an embedder swaps in is checked
//! like a shipped one and held by the same host limits.

use crate::common::{artifact, engine, own_builder, own_engine, text};
use guest_artifacts::*;
use workbooks::commands::{ArgMode, Tier};
use workbooks::kv::{KV_MAX_KEY_BYTES, KV_MAX_VALUE_BYTES};
use workbooks::{Cap, Engine, EngineError, Grant, LineOptions, SessionOptions};

/// The probe of each brokered cap, the shipped broker composed in, and the
/// host primitive the composition imports in place of the engine interface.
const BROKERED: &[(&str, &str, &str, &str)] = &[
    (
        KV_OPS,
        "kv",
        "workbooks:kv-broker",
        "workbooks:host/kv@0.1.0",
    ),
    (
        SECRETS_OPS,
        "secrets",
        "workbooks:secrets-broker",
        "workbooks:host/secrets@0.1.0",
    ),
    (
        QUEUE_OPS,
        "queue",
        "workbooks:queue-broker",
        "workbooks:host/queue@0.1.0",
    ),
    (
        NET_BROWSE,
        "browse",
        "workbooks:browse-broker",
        "workbooks:host/http@0.1.0",
    ),
    (
        DOCK_COMMANDS,
        "commands",
        "workbooks:commands-broker",
        "workbooks:host/launch@0.1.0",
    ),
    (
        DOCK_EXEC,
        "exec",
        "workbooks:exec-broker",
        "workbooks:host/launch@0.1.0",
    ),
];

#[test]
fn every_brokered_cap_links_its_primitive_and_never_the_engine_interface() {
    for (probe, word, broker, primitive) in BROKERED {
        let docked = engine()
            .dock(&artifact(probe), &Grant::profile("network"))
            .unwrap();
        let r = docked.receipt();
        let interface = format!("workbooks:engine/{word}@0.1.0");
        assert!(
            r.brokers
                .iter()
                .any(|b| b.name == *broker && b.serves == interface && !b.replaced),
            "{probe}: {:?}",
            r.brokers
        );
        assert!(
            r.linked.iter().any(|l| l == primitive),
            "{probe}: {:?}",
            r.linked
        );
        assert!(
            !r.linked
                .iter()
                .any(|l| l.starts_with(&format!("workbooks:engine/{word}@"))),
            "{probe} links the engine interface itself: {:?}",
            r.linked
        );
        let line = r.imports.iter().find(|i| i.name == interface).unwrap();
        assert_eq!(line.served_by, format!("broker {broker}"));
    }
}

#[test]
fn vfs_and_net_are_served_by_the_host_with_no_broker() {
    for (probe, interface) in [
        (DOCK_VFS, "workbooks:engine/vfs@0.1.0"),
        (DOCK_NET, "workbooks:engine/net@0.1.0"),
    ] {
        let docked = engine()
            .dock(&artifact(probe), &Grant::profile("network"))
            .unwrap();
        let r = docked.receipt();
        assert!(r.brokers.is_empty(), "{probe}: {:?}", r.brokers);
        assert!(r.linked.iter().any(|l| l == interface), "{:?}", r.linked);
        assert!(!r.linked.iter().any(|l| l.starts_with("workbooks:host/")));
    }
}

#[test]
fn each_transport_is_served_by_its_own_broker_over_the_wire_primitive() {
    let docked = engine()
        .dock(&artifact(NET_ONESHOT), &Grant::profile("minimal"))
        .unwrap();
    let r = docked.receipt();
    let names: Vec<&str> = r.brokers.iter().map(|b| b.name.as_str()).collect();
    for word in ["tcp", "udp", "tls"] {
        assert!(
            names.contains(&format!("workbooks:{word}-broker").as_str()),
            "{names:?}"
        );
        assert!(
            !r.linked
                .iter()
                .any(|l| l.starts_with(&format!("workbooks:engine/{word}@")))
        );
    }
    let wires = r
        .linked
        .iter()
        .filter(|l| *l == "workbooks:host/exchange@0.1.0")
        .count();
    assert_eq!(wires, 1, "{:?}", r.linked);
}

fn namespaced_engine(home: &std::path::Path) -> Engine {
    let bytes = std::fs::read(TEST_KV_BROKER).unwrap();
    own_builder(home).broker(Cap::Kv, bytes).build().unwrap()
}

async fn kv_on(engine: &Engine, tenant: &str, args: &[&str]) -> String {
    let docked = engine
        .dock(&artifact(KV_OPS), &Grant::profile("minimal"))
        .unwrap();
    let mut opts = SessionOptions::new("kv-probe", tenant);
    opts.args = args.iter().map(|a| a.to_string()).collect();
    let out = engine.run(&docked, opts).await.unwrap();
    assert_eq!(out.exit_code, 0, "{}", text(&out.stderr));
    text(&out.stdout)
}

#[tokio::test]
async fn a_replacement_kv_broker_serves_the_guest_in_its_own_shape() {
    let home = tempfile::tempdir().unwrap();
    let engine = namespaced_engine(home.path());
    let docked = engine
        .dock(&artifact(KV_OPS), &Grant::profile("minimal"))
        .unwrap();
    let broker = &docked.receipt().brokers[0];
    assert_eq!(broker.name, "embedder:kv-broker");
    assert!(broker.replaced);
    let out = kv_on(&engine, "ns-a", &["set", "k", "v", "get", "k", "list", ""]).await;
    assert_eq!(out, "Ok(())\nv\n1 keys: k\n");
    drop((docked, engine));
    // The shipped broker on the same home sees the namespaced key.
    let shipped = own_engine(home.path());
    assert_eq!(kv_on(&shipped, "ns-a", &["get", "ns.k"]).await, "v\n");
}

#[tokio::test]
async fn a_command_in_a_child_process_composes_with_the_replaced_broker_too() {
    let home = tempfile::tempdir().unwrap();
    let engine = own_builder(home.path())
        .broker(Cap::Kv, std::fs::read(TEST_KV_BROKER).unwrap())
        .child_binary(crate::CHILD)
        .build()
        .unwrap();
    engine
        .registry()
        .register(
            "kv-child",
            std::fs::read(KV_OPS).unwrap(),
            ArgMode::Argv,
            Tier::OsProcess,
        )
        .unwrap();
    let opts = LineOptions {
        profile: "minimal".into(),
        tenant: "child-ns".into(),
        ..LineOptions::default()
    };
    let argv = ["set", "k", "v", "get", "k"].map(String::from).to_vec();
    let out = engine.commands().run("kv-child", argv, opts).await.unwrap();
    assert_eq!(text(&out.stdout), "Ok(())\nv\n", "{}", text(&out.stderr));
    drop(engine);
    // Had the child used the shipped broker, the key would sit unprefixed.
    let shipped = own_engine(home.path());
    assert_eq!(
        kv_on(&shipped, "child-ns", &["get", "ns.k", "get", "k"]).await,
        "v\nOk(None)\n"
    );
}

#[tokio::test]
async fn a_replacement_kv_broker_cannot_pass_the_hosts_value_or_key_limits() {
    let home = tempfile::tempdir().unwrap();
    let engine = namespaced_engine(home.path());
    // The broker doubles this value past the host's cap.
    let half_and_more = (KV_MAX_VALUE_BYTES / 2 + 1).to_string();
    let longest = "k".repeat(KV_MAX_KEY_BYTES);
    let out = kv_on(
        &engine,
        "limits",
        &["setn", "grow:big", &half_and_more, "setn", &longest, "1"],
    )
    .await;
    let mut lines = out.lines();
    assert_eq!(
        lines.next().unwrap(),
        format!("Err(Error::ValueTooLarge({KV_MAX_VALUE_BYTES}))")
    );
    // The guest's key fits; with the broker's prefix it does not.
    assert!(
        lines.next().unwrap().starts_with("Err(Error::InvalidKey("),
        "{out}"
    );
    drop(engine);
    let shipped = own_engine(home.path());
    assert_eq!(
        kv_on(&shipped, "limits", &["list", ""]).await,
        "0 keys: \n",
        "nothing was stored past a limit"
    );
}

#[tokio::test]
async fn a_replacement_kv_broker_cannot_reach_another_tenant_through_key_bytes() {
    let home = tempfile::tempdir().unwrap();
    let engine = namespaced_engine(home.path());
    kv_on(&engine, "victim", &["set", "secret", "victim-data"]).await;
    // The broker stores under `../secret`, `/secret` and `secret\0`.
    let out = kv_on(
        &engine,
        "attacker",
        &["set", "climb:secret", "x", "get", "climb:secret"],
    )
    .await;
    assert_eq!(
        out, "Ok(())\nx\n",
        "the hostile keys land in the attacker's own tree"
    );
    assert_eq!(
        kv_on(&engine, "victim", &["get", "secret"]).await,
        "victim-data\n"
    );
    drop(engine);
    let shipped = own_engine(home.path());
    assert_eq!(
        kv_on(&shipped, "victim", &["list", ""]).await,
        "1 keys: ns.secret\n",
        "the victim's tree holds only its own key"
    );
    assert_eq!(
        kv_on(&shipped, "attacker", &["list", "", "get", "../secret"]).await,
        "3 keys: ../secret,/secret,secret\0\nx\n",
    );
}

#[test]
fn a_replacement_broker_is_refused_unless_it_is_a_component_of_its_own_cap() {
    let home = tempfile::tempdir().unwrap();
    let kv_broker = std::fs::read(TEST_KV_BROKER).unwrap();
    let refused =
        |cap: Cap, bytes: Vec<u8>| match own_builder(home.path()).broker(cap, bytes).build() {
            Err(EngineError::Broker(e)) => e.to_string(),
            Err(other) => panic!("refused for another reason: {other}"),
            Ok(_) => panic!("a {cap} broker was accepted"),
        };
    // A kv broker offered for secrets imports storage, which is not a
    // secrets primitive.
    assert_eq!(
        refused(Cap::Secrets, kv_broker.clone()),
        "broker secrets: import workbooks:host/kv@0.1.0 refused (a secrets broker may import only base WASI and the host primitives of secrets)"
    );
    assert!(
        refused(Cap::Posix, kv_broker)
            .starts_with("broker posix: this cap has no broker component")
    );
    assert!(
        refused(Cap::Kv, b"\0asm\x01\0\0\0".to_vec())
            .starts_with("broker kv: not a valid component")
    );
    // A guest is not a broker: it exports no kv.
    let guest = std::fs::read(CLI_HELLO).unwrap();
    assert_eq!(
        refused(Cap::Kv, guest),
        "broker kv: does not export workbooks:engine/kv@0.1.0"
    );
}
