//! Imports of the peers' own files (`tests/peers`, as their repositories
//! ship them) and of files written to attack the reader.

use super::*;
use crate::grants::{GrantBook, Scope};
use std::sync::Arc;

fn peer(file: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/peers")
        .join(file)
}

fn for_tenant(t: &str) -> ImportFor {
    ImportFor {
        tenant: Some(t.into()),
        by: "test".into(),
        ..ImportFor::default()
    }
}

fn strings(s: &[&str]) -> Vec<String> {
    s.iter().map(|s| s.to_string()).collect()
}

#[test]
fn wassettes_weather_policy_is_its_host_over_http_and_https_and_its_variable() {
    let i = import(
        &peer("wassette/get-weather-dotnet.policy.yaml"),
        &for_tenant("acme"),
    )
    .unwrap();
    assert_eq!(i.format, Format::Wassette);
    let [r] = &i.records[..] else {
        panic!("{:?}", i.records)
    };
    assert_eq!(r.tenant, "acme");
    assert_eq!(
        r.net,
        Some(strings(&[
            "http://api.openweathermap.org:*",
            "https://api.openweathermap.org:*"
        ]))
    );
    assert_eq!(r.env, Some(strings(&["OPENWEATHER_API_KEY"])));
    // No storage section: no directory at all.
    assert_eq!(r.dirs, Some(vec![]));
    // The grant judges as the policy does: its host, not another.
    let book = Arc::new(GrantBook::new(None));
    let id = book.add(r.clone()).unwrap().id;
    let scoped = Scope::stored(book, &id).now().unwrap();
    scoped
        .judge("https", "api.openweathermap.org", 8443, "x")
        .unwrap();
    let refused = scoped
        .judge("https", "evil.example", 443, "https://evil.example")
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .contains(&format!("grant {id}: net scope allows"))
    );
    assert!(
        scoped
            .judge("tcp", "api.openweathermap.org", 443, "x")
            .is_err()
    );
}

#[test]
fn wassettes_filesystem_policy_is_its_directories_read_only() {
    let i = import(
        &peer("wassette/filesystem-rs.policy.yaml"),
        &for_tenant("t"),
    )
    .unwrap();
    assert_eq!(
        i.records[0].dirs,
        Some(strings(&[
            "/Users/USERNAME/github/wassette::/Users/USERNAME/github/wassette::ro",
            "/Users/USERNAME::/Users/USERNAME::ro",
            "/::/::ro",
        ]))
    );
    // No network section: no destination at all.
    assert_eq!(i.records[0].net, Some(vec![]));
}

#[test]
fn a_wassette_host_written_as_a_url_keeps_its_scheme_and_drops_its_slash() {
    let i = import(&peer("wassette/fetch-dotnet.policy.yaml"), &for_tenant("t")).unwrap();
    assert_eq!(i.records[0].net, Some(strings(&["https://example.com"])));
}

#[test]
fn wassettes_own_host_list_is_refused_rather_than_dropped() {
    let e = import(
        &peer("wassette/network-defaults.policy.yaml"),
        &for_tenant("t"),
    )
    .unwrap_err();
    assert!(matches!(e, ImportError::Unsupported { .. }), "{e}");
    assert!(e.to_string().contains("defaults"), "{e}");
}

#[test]
fn spins_middleware_manifest_is_a_grant_per_component_with_its_hosts_or_none() {
    let i = import(&peer("spin/http-middleware.spin.toml"), &for_tenant("web")).unwrap();
    assert_eq!(i.format, Format::Spin);
    let by_label = |id: &str| {
        i.records
            .iter()
            .find(|r| {
                r.label
                    .as_deref()
                    .is_some_and(|l| l.ends_with(&format!("component {id}")))
            })
            .unwrap_or_else(|| panic!("no grant for {id}: {:?}", i.records))
    };
    assert_eq!(i.records.len(), 3);
    assert_eq!(
        by_label("hello").net,
        Some(strings(&["https://random-data-api.fermyon.app"]))
    );
    for id in ["animal-fact", "yelling"] {
        let r = by_label(id);
        assert_eq!(r.net, Some(vec![]), "{id}");
        // No key_value_stores: no key.
        assert_eq!(r.prefixes.get("kv"), Some(&vec![]), "{id}");
        // Its source is not built here: no subject, and a note says so.
        assert_eq!(r.subject, None);
    }
    assert!(
        i.notes.iter().any(|n| n.contains("component yelling")),
        "{:?}",
        i.notes
    );
    let one = ImportFor {
        component: Some("hello".into()),
        ..for_tenant("web")
    };
    assert_eq!(
        import(&peer("spin/http-middleware.spin.toml"), &one)
            .unwrap()
            .records
            .len(),
        1
    );
    let missing = ImportFor {
        component: Some("nope".into()),
        ..for_tenant("web")
    };
    let e = import(&peer("spin/http-middleware.spin.toml"), &missing).unwrap_err();
    assert!(e.to_string().contains("animal-fact, hello, yelling"), "{e}");
}

#[test]
fn a_spin_component_s_ai_models_are_the_models_its_grant_names_and_none_listed_is_none() {
    let imported = import(&peer("spin/open-ai-rust.spin.toml"), &for_tenant("t")).unwrap();
    let models = imported.records[0].names.get("llm");
    assert_eq!(models, Some(&vec!["gpt-oss:20b".to_string()]));
    let imported = import(&peer("spin/http-middleware.spin.toml"), &for_tenant("t")).unwrap();
    for r in &imported.records {
        assert_eq!(r.names.get("llm"), Some(&Vec::new()), "{r:?}");
    }
}

#[test]
fn a_manifest_without_a_tenant_a_deny_list_or_a_spin_variable_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let untenanted = import(
        &peer("spin/http-middleware.spin.toml"),
        &ImportFor::default(),
    );
    assert!(untenanted.unwrap_err().to_string().contains("--tenant"));
    let deny = write(
        "deny.yaml",
        "version: \"1.0\"\npermissions:\n  network:\n    allow:\n      - host: a.example\n    deny:\n      - host: b.example\n",
    );
    let e = import(&deny, &for_tenant("t")).unwrap_err();
    assert!(e.to_string().contains("permissions.network.deny"), "{e}");
    let variable = write(
        "v.toml",
        "spin_manifest_version = 2\n[component.x]\nsource = \"x.wasm\"\nallowed_outbound_hosts = [\"https://{{ host }}\"]\n",
    );
    let e = import(&variable, &for_tenant("t")).unwrap_err();
    assert!(e.to_string().contains("Spin variable"), "{e}");
    let unknown = write(
        "u.yaml",
        "version: \"1.0\"\npermissions:\n  filesystem: {}\n",
    );
    assert!(matches!(
        import(&unknown, &for_tenant("t")),
        Err(ImportError::Parse { .. })
    ));
    let v1 = write("v1.toml", "spin_manifest_version = \"1\"\n");
    assert!(
        import(&v1, &for_tenant("t"))
            .unwrap_err()
            .to_string()
            .contains("version 2")
    );
}

#[test]
fn a_spin_component_whose_source_is_beside_the_manifest_is_the_grants_subject() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("x.wasm"), b"\0asm component bytes").unwrap();
    std::fs::create_dir(dir.path().join("static")).unwrap();
    let manifest = dir.path().join("spin.toml");
    std::fs::write(
        &manifest,
        "spin_manifest_version = 2\n[component.x]\nsource = \"x.wasm\"\nkey_value_stores = [\"default\"]\nfiles = [{ source = \"static\", destination = \"/www\" }]\n",
    )
    .unwrap();
    let r = &import(&manifest, &for_tenant("t")).unwrap().records[0];
    let sha = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(
        b"\0asm component bytes",
    ));
    assert_eq!(r.subject, Some(format!("sha256:{sha}")));
    // `default` is the tenant's store, unscoped.
    assert!(!r.prefixes.contains_key("kv"));
    assert_eq!(
        r.dirs,
        Some(vec![format!(
            "{}::/www::ro",
            dir.path().join("static").display()
        )])
    );
}

#[test]
fn an_exported_grant_reads_back_as_the_same_scopes_under_a_new_id() {
    let book = GrantBook::new(None);
    let mut r = GrantRecord::new("t", "op");
    r.net = Some(strings(&["https://api.example"]));
    r.names.insert("secrets".into(), strings(&["deploy-key"]));
    r.expires_ms = Some(1_900_000_000_000);
    let stored = book.add(r).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("g.json");
    std::fs::write(&file, serde_json::to_string(&stored).unwrap()).unwrap();
    let back = &import(&file, &ImportFor::default()).unwrap().records[0];
    assert_eq!(back.scopes_text(), stored.scopes_text());
    assert_eq!(back.tenant, "t");
    assert!(back.id.is_empty());
    assert!(back.label.as_deref().unwrap().contains(&stored.id));
}

#[test]
fn a_file_over_the_import_bound_is_refused_before_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.yaml");
    std::fs::write(&file, vec![b'#'; GRANT_IMPORT_MAX_BYTES + 1]).unwrap();
    assert!(matches!(
        import(&file, &for_tenant("t")),
        Err(ImportError::Read { .. })
    ));
}

#[test]
fn a_yaml_alias_bomb_is_refused_by_the_readers_budget_not_expanded() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from(
        "version: \"1.0\"\npermissions:\n  runtime:\n    l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n",
    );
    for level in 1..10 {
        let prev = level - 1;
        let refs = vec![format!("*l{prev}"); 10].join(", ");
        text.push_str(&format!("    l{level}: &l{level} [{refs}]\n"));
    }
    let file = dir.path().join("bomb.yaml");
    std::fs::write(&file, text).unwrap();
    let e = import(&file, &for_tenant("t")).unwrap_err();
    assert!(matches!(e, ImportError::Parse { .. }), "{e}");
}

#[test]
fn a_manifest_of_more_components_than_one_import_makes_is_refused_whole() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("spin_manifest_version = 2\n");
    for i in 0..=GRANT_IMPORT_MAX_GRANTS {
        text.push_str(&format!("[component.c{i}]\nsource = \"c{i}.wasm\"\n"));
    }
    let file = dir.path().join("many.toml");
    std::fs::write(&file, text).unwrap();
    let e = import(&file, &for_tenant("t")).unwrap_err();
    assert!(matches!(e, ImportError::Count { .. }), "{e}");
    // One of them, by name, imports.
    let one = ImportFor {
        component: Some("c7".into()),
        ..for_tenant("t")
    };
    assert_eq!(import(&file, &one).unwrap().records.len(), 1);
}
