//! `wbx audit`, `wbx revoke`, `wbx unrevoke`: the broker cadence from the
//! operator's side.

use crate::{exit, fail};
use std::path::PathBuf;
use workbooks::broker::{Audit, Revocations};

#[derive(Debug, clap::Args)]
pub(crate) struct AuditArgs {
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct PrincipalArgs {
    /// The principal (tenant).
    principal: String,
}

pub(crate) fn audit(args: AuditArgs, home: PathBuf) -> u8 {
    let summary = match Audit::read_file(&home.join(workbooks::broker::AUDIT_FILE)) {
        Ok(s) => s,
        Err(e) => return fail("audit", e, exit::ENGINE),
    };
    let revoked = Revocations::new(Some(home.join(workbooks::broker::REVOCATIONS_FILE))).list();
    if args.json {
        let out = serde_json::json!({ "counts": summary.counts, "recent": summary.recent, "revoked": revoked });
        println!("{out}");
        return 0;
    }
    println!(
        "revoked principals: {}",
        if revoked.is_empty() {
            "none".into()
        } else {
            revoked.join(", ")
        }
    );
    println!("denials by reason:");
    if summary.counts.is_empty() {
        println!("  none");
    }
    for (reason, n) in &summary.counts {
        println!("  {reason:<24} {n}");
    }
    if !summary.recent.is_empty() {
        println!("most recent:");
        for e in summary.recent.iter().rev().take(20) {
            println!(
                "  {}  {:<8} {:<20} {} {}",
                e.at_ms, e.broker, e.reason, e.principal, e.detail
            );
        }
    }
    0
}

pub(crate) fn revoke(args: PrincipalArgs, home: PathBuf, revoke: bool) -> u8 {
    let list = Revocations::new(Some(home.join(workbooks::broker::REVOCATIONS_FILE)));
    let changed = if revoke {
        list.revoke(&args.principal)
    } else {
        list.unrevoke(&args.principal)
    };
    match changed {
        Ok(true) if revoke => println!("revoked {}", args.principal),
        Ok(true) => println!("unrevoked {}", args.principal),
        Ok(false) if revoke => println!("{} was already revoked", args.principal),
        Ok(false) => println!("{} was not revoked", args.principal),
        Err(e) => return fail("revoke", e, exit::ENGINE),
    }
    0
}
