use super::*;

fn manifest_with(config: &str, layers: &[(&str, u64)]) -> Vec<u8> {
    let d = |m: &str, size: u64| serde_json::json!({ "mediaType": m, "digest": format!("sha256:{}", "a".repeat(64)), "size": size });
    serde_json::json!({
        "schemaVersion": 2,
        "mediaType": OCI_MANIFEST_MEDIA_TYPE,
        "config": d(config, 10),
        "layers": layers.iter().map(|(m, s)| d(m, *s)).collect::<Vec<_>>(),
    })
    .to_string()
    .into_bytes()
}

#[test]
fn a_wasm_artifact_manifest_gives_its_one_layer() {
    let body = manifest_with(WASM_CONFIG_MEDIA_TYPE, &[(WASM_LAYER_MEDIA_TYPE, 100)]);
    assert_eq!(wasm_layer("r", &body).unwrap().size, 100);
}

#[test]
fn manifests_that_are_not_one_wasm_layer_are_refused_by_name() {
    let cases = [
        (
            manifest_with("application/vnd.oci.image.config.v1+json", &[(WASM_LAYER_MEDIA_TYPE, 1)]),
            "config media type",
        ),
        (
            manifest_with(
                WASM_CONFIG_MEDIA_TYPE,
                &[(WASM_LAYER_MEDIA_TYPE, 1), (WASM_LAYER_MEDIA_TYPE, 1)],
            ),
            "2 layers",
        ),
        (manifest_with(WASM_CONFIG_MEDIA_TYPE, &[]), "0 layers"),
        (
            manifest_with(WASM_CONFIG_MEDIA_TYPE, &[("application/vnd.oci.image.layer.v1.tar+gzip", 1)]),
            "layer media type",
        ),
        (
            serde_json::json!({ "schemaVersion": 2, "mediaType": OCI_INDEX_MEDIA_TYPE, "manifests": [] })
                .to_string()
                .into_bytes(),
            "image index",
        ),
        (b"<html>".to_vec(), "not JSON"),
    ];
    for (body, why) in cases {
        let err = wasm_layer("oci://r/x:1", &body).unwrap_err();
        assert!(
            matches!(&err, OciError::NotWasm { .. }) && err.to_string().contains(why),
            "{why}: {err}"
        );
    }
    let huge = manifest_with(
        WASM_CONFIG_MEDIA_TYPE,
        &[(WASM_LAYER_MEDIA_TYPE, OCI_MAX_LAYER_BYTES + 1)],
    );
    assert!(matches!(
        wasm_layer("r", &huge),
        Err(OciError::TooLarge { .. })
    ));
}

#[test]
fn a_pushed_artifact_describes_the_component_it_carries() {
    let wasm = wat::parse_str(
        r#"(component (import "wasi:cli/environment@0.2.0" (instance)) (core module $m) (core instance (instantiate $m)))"#,
    )
    .unwrap();
    let (config, manifest) = wasm_artifact(&wasm, "x", "hello").unwrap();
    let title = manifest.layers[0].annotations.as_ref().unwrap();
    assert_eq!(title["org.opencontainers.image.title"], "hello.wasm");
    let config: serde_json::Value = serde_json::from_slice(&config).unwrap();
    assert_eq!(config["os"], "wasip2");
    assert_eq!(
        config["component"]["imports"][0],
        "wasi:cli/environment@0.2.0"
    );
    assert_eq!(config["layerDigests"][0], manifest.layers[0].digest);
    assert_eq!(manifest.config.media_type, WASM_CONFIG_MEDIA_TYPE);
    assert!(wasm_layer("x", &manifest.to_bytes()).is_ok());
    assert!(matches!(
        wasm_artifact(b"\0asm\x0d\0\x01\0garbage", "bad", "bad"),
        Err(OciError::Invalid { .. })
    ));
}

#[test]
fn the_created_time_is_a_calendar_date() {
    assert_eq!(civil(0), (1970, 1, 1));
    assert_eq!(civil(19_723), (2024, 1, 1));
    assert_eq!(civil(20_513), (2026, 3, 1));
}

#[test]
fn the_same_bytes_always_make_the_same_manifest() {
    let wasm = wat::parse_str("(component)").unwrap();
    let (_, a) = wasm_artifact(&wasm, "x", "t").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let (_, b) = wasm_artifact(&wasm, "x", "t").unwrap();
    assert_eq!(a.to_bytes(), b.to_bytes());
}
