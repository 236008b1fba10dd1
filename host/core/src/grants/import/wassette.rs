//! A Wassette policy file (Microsoft's policy-mcp format, version 1.x) as
//! one grant:
//! - `network.allow`: a `host` (a name, `*.name`, or a URL's scheme and
//!   host) is that host over `http` and `https` on any port (Wassette
//!   judges the host of a `wasi:http` request, any scheme or port, unless
//!   the entry gives a scheme); a `cidr` likewise; no `network` section
//!   is no destination at all;
//! - `storage.allow`: `fs://PATH` with `read` is the directory at the same
//!   path read-only, with `write` read-write (a trailing `/**` is the
//!   directory itself); no `storage` section is no directory;
//! - `environment.allow`: the variables passed, by name.
//!
//! Refused, so the grant is never wider than the policy: any `deny`
//! list, `defaults: true` (Wassette's own list of hosts), a storage path
//! with a wildcard inside it or a relative one, and the `runtime`,
//! `resources` and `ipc` sections (limits and runtimes a grant does not
//! hold).

use super::{Ctx, Format, Imported};
use crate::grants::GrantRecord;
use serde::Deserialize;
use serde::de::IgnoredAny;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Policy {
    #[serde(rename = "$schema")]
    _schema: Option<IgnoredAny>,
    version: String,
    description: Option<String>,
    permissions: Permissions,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Permissions {
    storage: Option<AllowDeny<Storage>>,
    network: Option<AllowDeny<Network>>,
    environment: Option<AllowDeny<Variable>>,
    runtime: Option<IgnoredAny>,
    resources: Option<IgnoredAny>,
    ipc: Option<IgnoredAny>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AllowDeny<T> {
    allow: Option<Vec<T>>,
    deny: Option<Vec<IgnoredAny>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Storage {
    uri: String,
    access: Vec<String>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Network {
    Host { host: String },
    Cidr { cidr: String },
    Defaults { defaults: bool },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Variable {
    key: String,
}

/// The grant `text` describes.
pub(super) fn read(text: &str, ctx: &Ctx<'_>) -> Result<Imported, super::ImportError> {
    let policy: Policy =
        serde_saphyr::from_str(text).map_err(|e| ctx.parse(Format::Wassette, e))?;
    if !policy.version.starts_with("1.") {
        return Err(ctx.parse(
            Format::Wassette,
            format!("version {:?}: only 1.x is read", policy.version),
        ));
    }
    let p = policy.permissions;
    for (section, present) in [
        ("runtime", p.runtime.is_some()),
        ("resources", p.resources.is_some()),
        ("ipc", p.ipc.is_some()),
    ] {
        if present {
            return Err(ctx.unsupported(
                format!("permissions.{section}"),
                "a grant holds reach, not a runtime's configuration or limits \
                 (give limits to the session: --memory, --fuel, --timeout)",
            ));
        }
    }
    let mut record = GrantRecord::new(ctx.tenant(Format::Wassette)?, &ctx.to.by);
    record.label = Some(match &policy.description {
        Some(d) => format!("{}: {d}", ctx.file),
        None => ctx.file.to_string(),
    });
    record.net = Some(network(p.network, ctx)?);
    record.dirs = Some(storage(p.storage, ctx)?);
    if p.environment.is_some() {
        let vars = allowed("environment", p.environment, ctx)?;
        record.env = Some(vars.into_iter().map(|v| v.key).collect());
    }
    Ok(Imported {
        format: Format::Wassette,
        records: vec![record],
        notes: Vec::new(),
    })
}

/// The `allow` entries of `section` (none when it is absent); a
/// non-empty `deny` is refused.
fn allowed<T>(
    section: &str,
    list: Option<AllowDeny<T>>,
    ctx: &Ctx<'_>,
) -> Result<Vec<T>, super::ImportError> {
    let Some(list) = list else {
        return Ok(Vec::new());
    };
    if list.deny.as_ref().is_some_and(|d| !d.is_empty()) {
        return Err(ctx.unsupported(
            format!("permissions.{section}.deny"),
            "a grant is an allow-list: leave the denied entries out of `allow`",
        ));
    }
    Ok(list.allow.unwrap_or_default())
}

fn network(
    list: Option<AllowDeny<Network>>,
    ctx: &Ctx<'_>,
) -> Result<Vec<String>, super::ImportError> {
    let mut net = Vec::new();
    for entry in allowed("network", list, ctx)? {
        let host = match entry {
            Network::Defaults { defaults: false } => continue,
            Network::Defaults { defaults: true } => {
                return Err(ctx.unsupported(
                    "permissions.network.allow defaults",
                    "it names Wassette's own list of hosts: list the hosts themselves",
                ));
            }
            Network::Host { host } => host,
            Network::Cidr { cidr } => cidr,
        };
        match host.split_once("://") {
            Some((scheme, rest)) => {
                let rest = rest.strip_suffix('/').unwrap_or(rest);
                if rest.contains('/') {
                    return Err(ctx.entry(
                        format!("network host {host:?}"),
                        "a grant's destination names no path",
                    ));
                }
                net.push(format!("{scheme}://{rest}"));
            }
            None => {
                let port = if host.contains(':') { "" } else { ":*" };
                net.push(format!("http://{host}{port}"));
                net.push(format!("https://{host}{port}"));
            }
        }
    }
    Ok(net)
}

fn storage(
    list: Option<AllowDeny<Storage>>,
    ctx: &Ctx<'_>,
) -> Result<Vec<String>, super::ImportError> {
    let mut dirs = Vec::new();
    for s in allowed("storage", list, ctx)? {
        let what = || format!("storage uri {:?}", s.uri);
        let path = s
            .uri
            .strip_prefix("fs://")
            .ok_or_else(|| ctx.entry(what(), "only fs:// paths are read"))?;
        let path = path
            .strip_suffix("/**")
            .or_else(|| path.strip_suffix("/*"))
            .unwrap_or(path);
        let path = match path {
            "" => "/",
            p => p,
        };
        if path.contains(['*', '?', '[']) {
            return Err(ctx.unsupported(what(), "a grant opens directories, not patterns"));
        }
        if !path.starts_with('/') {
            return Err(ctx.entry(what(), "a relative path: write fs:///absolute/path"));
        }
        let write = s.access.iter().any(|a| a == "write");
        if let Some(other) = s
            .access
            .iter()
            .find(|a| !matches!(a.as_str(), "read" | "write"))
        {
            return Err(ctx.entry(what(), format!("access {other:?}: read or write")));
        }
        dirs.push(match write {
            true => format!("{path}::{path}"),
            false => format!("{path}::{path}::ro"),
        });
    }
    Ok(dirs)
}
