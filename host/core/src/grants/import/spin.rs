//! A Spin manifest (`spin_manifest_version = 2`) as one grant per
//! component (or the one `--component` names):
//! - `allowed_outbound_hosts`: the destinations, in the syntax grants
//!   share with Spin; none listed is no destination at all (Spin's
//!   default);
//! - `key_value_stores`: `default` is the tenant's `kv`, every key; none
//!   listed is no key;
//! - `files`: each `{ source, destination }` directory, read-only (Spin
//!   mounts files read-only), its source relative to the manifest;
//! - `source`: when it is a file beside the manifest that exists, the
//!   grant's subject is its sha256, so only that component runs under it.
//!
//! Refused, so the grant is never wider than the manifest: a host written
//! with a Spin variable (`{{ host }}`), a store label other than
//! `default`, `files` given as patterns, and `sqlite_databases` (a grant
//! does not scope databases yet). `ai_models` become the grant's `llm`
//! models; none listed is no model, as Spin has it.
//! Left out and noted: `environment` and `variables` (configuration, not
//! reach) and the triggers.

use super::{Ctx, Format, Imported};
use crate::grants::GrantRecord;
use serde::Deserialize;
use serde::de::IgnoredAny;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

#[derive(Deserialize)]
struct Manifest {
    spin_manifest_version: toml::Value,
    #[serde(default)]
    component: BTreeMap<String, Component>,
}

#[derive(Deserialize)]
struct Component {
    source: Option<toml::Value>,
    allowed_outbound_hosts: Option<Vec<String>>,
    allowed_http_hosts: Option<IgnoredAny>,
    key_value_stores: Option<Vec<String>>,
    #[serde(default)]
    files: Vec<Files>,
    ai_models: Option<Vec<String>>,
    sqlite_databases: Option<Vec<IgnoredAny>>,
    environment: Option<IgnoredAny>,
    variables: Option<IgnoredAny>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Files {
    Pattern(String),
    Mapped { source: String, destination: String },
}

/// The grants `text` describes.
pub(super) fn read(text: &str, ctx: &Ctx<'_>) -> Result<Imported, super::ImportError> {
    let manifest: Manifest = toml::from_str(text).map_err(|e| ctx.parse(Format::Spin, e))?;
    if manifest.spin_manifest_version.as_integer() != Some(2) {
        return Err(ctx.parse(
            Format::Spin,
            format!(
                "spin_manifest_version {:?}: only version 2 is read",
                manifest.spin_manifest_version
            ),
        ));
    }
    let tenant = ctx.tenant(Format::Spin)?;
    let mut notes = vec!["triggers are Spin's, not reach: left out".to_string()];
    let mut records = Vec::new();
    for (id, c) in &manifest.component {
        if ctx.to.component.as_ref().is_some_and(|only| only != id) {
            continue;
        }
        records.push(component(id, c, tenant, ctx, &mut notes)?);
    }
    if let Some(only) = &ctx.to.component
        && records.is_empty()
    {
        return Err(ctx.entry(
            format!("component {only:?}"),
            format!(
                "not in the manifest (it has {})",
                manifest
                    .component
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    Ok(Imported {
        format: Format::Spin,
        records,
        notes,
    })
}

fn component(
    id: &str,
    c: &Component,
    tenant: &str,
    ctx: &Ctx<'_>,
    notes: &mut Vec<String>,
) -> Result<GrantRecord, super::ImportError> {
    let at = |field: &str| format!("component.{id}.{field}");
    if c.allowed_http_hosts.is_some() {
        return Err(ctx.unsupported(
            at("allowed_http_hosts"),
            "Spin 1's field: write allowed_outbound_hosts",
        ));
    }
    if c.sqlite_databases.as_ref().is_some_and(|l| !l.is_empty()) {
        return Err(ctx.unsupported(
            at("sqlite_databases"),
            "a grant does not scope databases yet, so the grant would reach every one",
        ));
    }
    let mut record = GrantRecord::new(tenant, &ctx.to.by);
    let models = c.ai_models.clone().unwrap_or_default();
    record.names.insert("llm".into(), models);
    record.label = Some(format!("{} component {id}", ctx.file));
    let hosts = c.allowed_outbound_hosts.clone().unwrap_or_default();
    if let Some(h) = hosts.iter().find(|h| h.contains("{{")) {
        return Err(ctx.unsupported(
            format!("{} {h:?}", at("allowed_outbound_hosts")),
            "it names a Spin variable, which is not resolved here: write the host",
        ));
    }
    record.net = Some(hosts);
    match c.key_value_stores.as_deref().unwrap_or_default() {
        [] => {
            record.prefixes.insert("kv".into(), Vec::new());
        }
        stores if stores.iter().all(|s| s == "default") => {}
        stores => {
            return Err(ctx.unsupported(
                at("key_value_stores"),
                format!(
                    "{stores:?}: a tenant has one store here (`default`); \
                     scope keys with --kv-prefix instead"
                ),
            ));
        }
    }
    let mut dirs = Vec::new();
    for f in &c.files {
        match f {
            Files::Pattern(p) => {
                return Err(ctx.unsupported(
                    format!("{} {p:?}", at("files")),
                    "a grant opens directories: write { source = \"dir\", destination = \"/dir\" }",
                ));
            }
            Files::Mapped {
                source,
                destination,
            } => {
                let host = ctx.dir.join(source);
                dirs.push(format!("{}::{destination}::ro", host.display()));
            }
        }
    }
    record.dirs = Some(dirs);
    record.subject = subject(c, ctx);
    if record.subject.is_none() {
        notes.push(format!(
            "component {id}: its source is not a file beside the manifest, so the grant \
             names no subject (give --subject sha256:<hex>)"
        ));
    }
    for (field, present) in [
        ("environment", c.environment.is_some()),
        ("variables", c.variables.is_some()),
    ] {
        if present {
            notes.push(format!(
                "{} is configuration, not reach: left out (give values with --env)",
                at(field)
            ));
        }
    }
    Ok(record)
}

/// `sha256:<hex>` of the component's source, when it is a file beside the
/// manifest that exists now.
fn subject(c: &Component, ctx: &Ctx<'_>) -> Option<String> {
    let path = ctx.dir.join(c.source.as_ref()?.as_str()?);
    let bytes = std::fs::read(path).ok()?;
    Some(format!("sha256:{}", hex::encode(Sha256::digest(&bytes))))
}
