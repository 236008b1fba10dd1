//! `wbx net check` and `wbx fetch`: the SSRF floor and the brokered fetch
//! from the command line.

use crate::options::{engine, runtime};
use crate::{exit, fail};
use std::path::PathBuf;
use workbooks::egress::{EgressFailure, HttpRequest};
use workbooks::{Cap, Grant, Profile};

#[derive(Debug, clap::Subcommand)]
pub(crate) enum NetCommand {
    /// Judge a URL with the SSRF floor (and WB_NET_ALLOW): exit 0 when
    /// allowed, 1 when denied.
    Check {
        /// The URL.
        url: String,
    },
}

#[derive(Debug, clap::Args)]
pub(crate) struct FetchArgs {
    /// Capability profile the fetch runs under (it needs the net cap).
    #[arg(long, default_value = "network", value_name = "P")]
    profile: String,
    /// Tenant the fetch runs as.
    #[arg(long, default_value = "default")]
    tenant: String,
    /// The URL.
    url: String,
}

pub(crate) fn check(cmd: NetCommand, home: PathBuf) -> u8 {
    let NetCommand::Check { url } = cmd;
    let json = crate::out::json();
    let body = || -> Result<u8, u8> {
        let engine = engine(home)?;
        let verdict = runtime()?.block_on(engine.http().guard().check_url(&url));
        let code = match &verdict {
            Ok(p) if json => {
                outln!(
                    "{}",
                    serde_json::json!({"url": url, "allowed": true, "pinned": p.addr.to_string(), "host": p.host})
                );
                0
            }
            Ok(p) => {
                outln!("allowed: {url} → pinned {}", p.addr);
                0
            }
            Err(d) if json => {
                let report = serde_json::json!({"url": url, "allowed": false, "reason": d.reason(), "detail": d.to_string()});
                outln!(
                    "{}",
                    crate::out::verdict(report, exit::FAILED, &format!("denied: {url}: {d}"))
                );
                exit::FAILED
            }
            Err(d) => {
                outln!("denied: {url}: {d}");
                exit::FAILED
            }
        };
        Ok(code)
    };
    body().unwrap_or_else(|c| c)
}

pub(crate) fn fetch(args: FetchArgs, home: PathBuf) -> u8 {
    let body = || -> Result<u8, u8> {
        let profile = Profile::parse(&args.profile).map_err(|e| fail("usage", e, exit::USAGE))?;
        let grant = Grant::profile(profile.name());
        if !grant.caps.contains(Cap::Net) {
            return Err(fail(
                "refused",
                format!("capability not granted: net (fetch) under profile {profile}"),
                exit::REFUSED,
            ));
        }
        let engine = engine(home)?;
        let access = engine.net_access(&args.tenant);
        let result = runtime()?.block_on(access.fetch(
            "net",
            HttpRequest::get(args.url.clone()),
            &access.limits(),
        ));
        match result {
            Ok(r) => {
                let code = if r.status < 400 { 0 } else { exit::FAILED };
                if crate::out::json() {
                    let report = serde_json::json!({
                        "url": args.url,
                        "status": r.status,
                        "body": String::from_utf8_lossy(&r.body),
                    });
                    let why = format!("fetch: {} answered {}", args.url, r.status);
                    outln!("{}", crate::out::verdict(report, code, &why));
                } else {
                    crate::out::write_bytes(&r.body);
                }
                Ok(code)
            }
            Err(EgressFailure::Failed(workbooks::egress::HttpError::Denied(d))) => {
                Err(fail("denied", format!("{}: {d}", args.url), exit::REFUSED))
            }
            Err(EgressFailure::Denied(d)) => Err(fail(d.reason(), &args.url, exit::REFUSED)),
            Err(EgressFailure::Failed(e)) => Err(fail("fetch", e, exit::ENGINE)),
        }
    };
    body().unwrap_or_else(|c| c)
}
