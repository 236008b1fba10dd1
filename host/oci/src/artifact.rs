//! The wasm OCI artifact: the layout `wkg`, `wash` and Wassette read.
//!
//! A manifest (`application/vnd.oci.image.manifest.v1+json`) whose config
//! is `application/vnd.wasm.config.v0+json` (what the component imports and
//! exports, its layer digests) and whose one layer is the wasm itself,
//! `application/wasm`. A pulled manifest is held to exactly that: an image
//! index, another config type, another layer type or several layers are
//! refused by name.

use crate::OciError;
use crate::limits::OCI_MAX_LAYER_BYTES;
use serde::{Deserialize, Serialize};

/// The config media type of a wasm artifact.
pub const WASM_CONFIG_MEDIA_TYPE: &str = "application/vnd.wasm.config.v0+json";
/// The layer media type of a wasm artifact.
pub const WASM_LAYER_MEDIA_TYPE: &str = "application/wasm";
/// An OCI image manifest.
pub(crate) const OCI_MANIFEST_MEDIA_TYPE: &str = "application/vnd.oci.image.manifest.v1+json";
/// An OCI image index (refused as a component, named in the error).
pub(crate) const OCI_INDEX_MEDIA_TYPE: &str = "application/vnd.oci.image.index.v1+json";
/// A Docker manifest list (refused the same way).
pub(crate) const DOCKER_LIST_MEDIA_TYPE: &str =
    "application/vnd.docker.distribution.manifest.list.v2+json";
/// A Docker image manifest (accepted to be refused by its config type).
pub(crate) const DOCKER_MANIFEST_MEDIA_TYPE: &str =
    "application/vnd.docker.distribution.manifest.v2+json";

/// The manifest types a pull accepts, to refuse the ones that are not ours
/// by name rather than by a 404.
pub(crate) const ACCEPTED: &[&str] = &[
    OCI_MANIFEST_MEDIA_TYPE,
    OCI_INDEX_MEDIA_TYPE,
    DOCKER_MANIFEST_MEDIA_TYPE,
    DOCKER_LIST_MEDIA_TYPE,
];

/// A content descriptor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Descriptor {
    pub media_type: String,
    pub digest: String,
    pub size: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<std::collections::BTreeMap<String, String>>,
}

impl Descriptor {
    pub(crate) fn of(media_type: &str, bytes: &[u8]) -> Descriptor {
        Descriptor {
            media_type: media_type.to_string(),
            digest: digest_of(bytes),
            size: bytes.len() as u64,
            artifact_type: None,
            annotations: None,
        }
    }
}

/// The annotation `oras pull` and others name a layer's file by.
const TITLE: &str = "org.opencontainers.image.title";

/// An image manifest, as much of it as this crate reads or writes.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Manifest {
    pub schema_version: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub media_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub artifact_type: Option<String>,
    pub config: Descriptor,
    #[serde(default)]
    pub layers: Vec<Descriptor>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<Descriptor>,
}

impl Manifest {
    pub(crate) fn new(config: Descriptor, layers: Vec<Descriptor>) -> Manifest {
        Manifest {
            schema_version: 2,
            media_type: Some(OCI_MANIFEST_MEDIA_TYPE.to_string()),
            artifact_type: None,
            config,
            layers,
            subject: None,
        }
    }

    pub(crate) fn to_bytes(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a manifest serialises")
    }
}

/// `sha256:<hex>` of `bytes`.
pub(crate) fn digest_of(bytes: &[u8]) -> String {
    format!("sha256:{}", workbooks::identity::sha256_hex(bytes))
}

/// The wasm config: what other tools show of the component.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct WasmConfig {
    created: String,
    architecture: &'static str,
    os: &'static str,
    layer_digests: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    component: Option<ComponentSummary>,
}

#[derive(Debug, Serialize)]
struct ComponentSummary {
    imports: Vec<String>,
    exports: Vec<String>,
}

/// The config and manifest for `wasm`, with its layer descriptor. The time
/// is `SOURCE_DATE_EPOCH`'s when set, else the epoch (reproducible pushes).
///
/// The layer is titled `<last repository segment>.wasm`, the file name
/// `oras pull` gives it.
pub(crate) fn wasm_artifact(
    wasm: &[u8],
    what: &str,
    title: &str,
) -> Result<(Vec<u8>, Manifest), OciError> {
    if wasm.len() as u64 > OCI_MAX_LAYER_BYTES {
        return Err(OciError::TooLarge {
            what: what.to_string(),
            limit: OCI_MAX_LAYER_BYTES,
        });
    }
    let artifact =
        workbooks::Artifact::from_bytes(wasm.to_vec()).map_err(|e| OciError::Invalid {
            reference: what.to_string(),
            why: e.to_string(),
        })?;
    let mut layer = Descriptor::of(WASM_LAYER_MEDIA_TYPE, wasm);
    layer.annotations = Some([(TITLE.to_string(), format!("{title}.wasm"))].into());
    let component = matches!(artifact.kind(), workbooks::ArtifactKind::Component);
    let config = WasmConfig {
        created: created(),
        architecture: "wasm",
        os: if component { "wasip2" } else { "wasip1" },
        layer_digests: vec![layer.digest.clone()],
        component: component.then(|| summary(wasm)),
    };
    let config = serde_json::to_vec(&config).expect("the config serialises");
    let manifest = Manifest::new(Descriptor::of(WASM_CONFIG_MEDIA_TYPE, &config), vec![layer]);
    Ok((config, manifest))
}

/// RFC 3339 of `SOURCE_DATE_EPOCH`, else of the epoch: the same bytes
/// always push as the same manifest digest (as `ko` and `rules_oci` do), so
/// a second signer's signature lands on the digest the first one signed.
fn created() -> String {
    let secs = std::env::var("SOURCE_DATE_EPOCH")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(0);
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (y, m, d) = civil(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The calendar date of a day count since 1970-01-01 (proleptic Gregorian).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// The names a component imports and exports at its top level.
fn summary(wasm: &[u8]) -> ComponentSummary {
    use wasmparser::{Parser, Payload};
    let mut s = ComponentSummary {
        imports: Vec::new(),
        exports: Vec::new(),
    };
    let mut depth = 0usize;
    for payload in Parser::new(0).parse_all(wasm).flatten() {
        match payload {
            Payload::Version { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentImportSection(r) if depth == 1 => {
                s.imports
                    .extend(r.into_iter().flatten().map(|i| i.name.name.to_string()));
            }
            Payload::ComponentExportSection(r) if depth == 1 => {
                s.exports
                    .extend(r.into_iter().flatten().map(|e| e.name.name.to_string()));
            }
            _ => {}
        }
    }
    s
}

/// Holds a pulled manifest to the wasm artifact's layout; its one layer.
pub(crate) fn wasm_layer(reference: &str, body: &[u8]) -> Result<Descriptor, OciError> {
    let not = |why: String| OciError::NotWasm {
        reference: reference.to_string(),
        why,
    };
    let value: serde_json::Value =
        serde_json::from_slice(body).map_err(|e| not(format!("the manifest is not JSON: {e}")))?;
    let media = value
        .get("mediaType")
        .and_then(|m| m.as_str())
        .unwrap_or("");
    if media == OCI_INDEX_MEDIA_TYPE
        || media == DOCKER_LIST_MEDIA_TYPE
        || value.get("manifests").is_some()
    {
        return Err(not(format!("an image index ({media}), not one artifact")));
    }
    let manifest: Manifest = serde_json::from_value(value)
        .map_err(|e| not(format!("the manifest does not parse: {e}")))?;
    if manifest.config.media_type != WASM_CONFIG_MEDIA_TYPE {
        return Err(not(format!(
            "config media type {} (expected {WASM_CONFIG_MEDIA_TYPE})",
            manifest.config.media_type
        )));
    }
    let [layer] = manifest.layers.as_slice() else {
        return Err(not(format!(
            "{} layers (a wasm artifact has exactly one)",
            manifest.layers.len()
        )));
    };
    if layer.media_type != WASM_LAYER_MEDIA_TYPE {
        return Err(not(format!(
            "layer media type {} (expected {WASM_LAYER_MEDIA_TYPE})",
            layer.media_type
        )));
    }
    if layer.size > OCI_MAX_LAYER_BYTES {
        return Err(OciError::TooLarge {
            what: format!("{reference}: the wasm layer ({} bytes)", layer.size),
            limit: OCI_MAX_LAYER_BYTES,
        });
    }
    if !is_sha256_digest(&layer.digest) {
        return Err(not(format!("layer digest {} is not sha256", layer.digest)));
    }
    Ok(layer.clone())
}

/// Whether `d` is `sha256:` and 64 lowercase hex digits.
pub(crate) fn is_sha256_digest(d: &str) -> bool {
    d.strip_prefix("sha256:").is_some_and(|h| {
        h.len() == 64
            && h.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

#[cfg(test)]
mod tests;
