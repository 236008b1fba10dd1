//! `wbx net check` and `wbx fetch`: the SSRF floor and the brokered fetch
//! from the command line.

use crate::options::{engine, runtime};
use crate::{exit, fail};
use std::io::Write;
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
        /// Print JSON.
        #[arg(long)]
        json: bool,
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
    let NetCommand::Check { url, json } = cmd;
    let body = || -> Result<u8, u8> {
        let engine = engine(home)?;
        let verdict = runtime()?.block_on(engine.http().guard().check_url(&url));
        let code = match &verdict {
            Ok(p) if json => {
                println!(
                    "{}",
                    serde_json::json!({"url": url, "allowed": true, "pinned": p.addr.to_string(), "host": p.host})
                );
                0
            }
            Ok(p) => {
                println!("allowed: {url} → pinned {}", p.addr);
                0
            }
            Err(d) if json => {
                println!(
                    "{}",
                    serde_json::json!({"url": url, "allowed": false, "reason": d.reason(), "detail": d.to_string()})
                );
                1
            }
            Err(d) => {
                println!("denied: {url}: {d}");
                1
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
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(&r.body);
                let _ = out.flush();
                Ok(if r.status < 400 { 0 } else { 1 })
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
