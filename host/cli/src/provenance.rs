//! `wbx identity`: a tenant's did:key (and did:web document). `wbx
//! artifact sign|verify`: an HTML page signed by that key, checked from
//! the DID alone.

use crate::toolkit::{keyring, seed};
use crate::{exit, fail};
use std::path::PathBuf;
use workbooks::identity::Identity;
use workbooks::identity::html::{sign_page, verify_page};

#[derive(Debug, clap::Args)]
pub(crate) struct IdentityArgs {
    /// The tenant.
    #[arg(long, default_value = "default")]
    tenant: String,
    /// Also print the did:web document for this host.
    #[arg(long, value_name = "HOST")]
    did_web: Option<String>,
}

#[derive(Debug, clap::Subcommand)]
pub(crate) enum ArtifactCommand {
    /// Embed a signed manifest (asset hash, signer did:key, time) in an
    /// HTML page, replacing any earlier one.
    Sign {
        /// The page, rewritten in place.
        file: PathBuf,
        /// The tenant whose key signs.
        #[arg(long, default_value = "default")]
        tenant: String,
    },
    /// Check a page's signature and integrity: `{signature,
    /// asset_integrity, valid}`, exit 1 when not valid.
    Verify {
        /// The page.
        file: PathBuf,
    },
}

pub(crate) fn artifact(cmd: ArtifactCommand, home: PathBuf) -> u8 {
    let read = |file: &PathBuf| {
        std::fs::read_to_string(file)
            .map_err(|e| fail("artifact", format!("{}: {e}", file.display()), exit::USAGE))
    };
    match cmd {
        ArtifactCommand::Sign { file, tenant } => {
            let page = match read(&file) {
                Ok(p) => p,
                Err(code) => return code,
            };
            let signed =
                Identity::of_tenant(&keyring(&home), &tenant, seed().as_deref()).and_then(|id| {
                    let now = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_secs());
                    sign_page(&page, &id, now).map(|p| (p, id.did))
                });
            match signed {
                Ok((page, did)) => match workbooks::files::write_output(&file, page.as_bytes()) {
                    Ok(()) => {
                        outln!("signed {} as {did}", file.display());
                        0
                    }
                    Err(e) => fail("artifact", format!("{}: {e}", file.display()), exit::ENGINE),
                },
                Err(e) => fail("artifact", e, exit::USAGE),
            }
        }
        ArtifactCommand::Verify { file } => {
            let json = crate::out::json();
            let page = match read(&file) {
                Ok(p) => p,
                Err(code) => return code,
            };
            let check = verify_page(&page);
            let code = if check.valid { 0 } else { exit::FAILED };
            if json {
                let why = format!(
                    "{}: not valid: {}",
                    file.display(),
                    check.why.as_deref().unwrap_or("unknown")
                );
                let value = serde_json::to_value(&check).unwrap_or_default();
                outln!("{}", crate::out::verdict(value, code, &why));
            } else {
                let mark = |ok: bool| if ok { "✓" } else { "✗" };
                outln!(
                    "{} signature{}",
                    mark(check.signature),
                    check
                        .signer
                        .as_ref()
                        .map_or(String::new(), |s| format!(" ({s})"))
                );
                outln!("{} asset integrity", mark(check.asset_integrity));
                match &check.why {
                    None => outln!("valid"),
                    Some(why) => outln!("not valid: {why}"),
                }
            }
            code
        }
    }
}

pub(crate) fn identity(args: IdentityArgs, home: PathBuf) -> u8 {
    let id = match Identity::of_tenant(&keyring(&home), &args.tenant, seed().as_deref()) {
        Ok(id) => id,
        Err(e) => return fail("identity", e, exit::USAGE),
    };
    let doc = args.did_web.as_deref().map(|h| id.did_web_document(h));
    if crate::out::json() {
        outln!(
            "{}",
            serde_json::json!({"tenant": args.tenant, "did": id.did, "did_web": doc})
        );
    } else {
        outln!("{}", id.did);
        if let Some(doc) = doc {
            outln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
    }
    0
}
