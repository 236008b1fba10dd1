//! `wbx bundle ship|restore`: an instance's volumes, its page and a signed
//! manifest in one `.wbundle` zip, and back. A restore checks the whole
//! bundle before it writes, and writes only into an empty instance.

use crate::options::engine;
use crate::toolkit::{keyring, seed};
use crate::{exit, fail};
use std::path::PathBuf;
use workbooks::identity::Identity;
use workbooks_toolkit::bundle;

#[derive(Debug, clap::Subcommand)]
pub(crate) enum BundleCommand {
    /// Pack instance ID's volumes (and a page) into a signed `.wbundle`.
    Ship {
        /// The instance whose volumes are packed.
        id: String,
        /// The tenant that owns it, whose key signs.
        #[arg(long, default_value = "default")]
        tenant: String,
        /// The instance's HTML page, shipped beside its volumes.
        #[arg(long, value_name = "FILE")]
        page: Option<PathBuf>,
        /// A registered command shipped with it (repeatable): restored,
        /// it is registered again.
        #[arg(long = "command", value_name = "NAME")]
        commands: Vec<String>,
        /// Where to write the bundle (default `<ID>.wbundle`).
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
    },
    /// Check a bundle whole, then restore its volumes into instance ID
    /// (which must hold no files); refused when anything was tampered with.
    Restore {
        /// The bundle.
        file: PathBuf,
        /// The instance to restore into (default: the bundle's own id).
        #[arg(long)]
        id: Option<String>,
        /// The tenant that will own it.
        #[arg(long, default_value = "default")]
        tenant: String,
        /// Accept only a bundle signed by this did:key.
        #[arg(long, value_name = "DID")]
        signer: Option<String>,
        /// Register the commands shipped with it too (needs --signer); a
        /// name that holds another command is refused, never replaced.
        #[arg(long, requires = "signer")]
        commands: bool,
        /// Accept only a bundle file with this sha256.
        #[arg(long, value_name = "HEX")]
        sha256: Option<String>,
        /// Write the shipped page here.
        #[arg(long, value_name = "FILE")]
        page_out: Option<PathBuf>,
    },
}

pub(crate) fn run(cmd: BundleCommand, home: PathBuf) -> u8 {
    let storage = match engine(home.clone())
        .and_then(|e| e.storage().map_err(|e| fail("storage", e, exit::ENGINE)))
    {
        Ok(s) => s,
        Err(code) => return code,
    };
    match cmd {
        BundleCommand::Ship {
            id,
            tenant,
            page,
            commands,
            output,
        } => {
            let json = crate::out::json();
            let body = || -> Result<serde_json::Value, (String, u8)> {
                let usage = |e: String| (e, exit::USAGE);
                let volumes = storage
                    .volumes(&tenant, &id)
                    .map_err(|e| usage(e.to_string()))?;
                let identity = Identity::of_tenant(&keyring(&home), &tenant, seed().as_deref())
                    .map_err(|e| usage(e.to_string()))?;
                let page = match &page {
                    Some(p) => {
                        Some(std::fs::read(p).map_err(|e| usage(format!("{}: {e}", p.display())))?)
                    }
                    None => None,
                };
                let registry = workbooks::commands::Registry::new(&home);
                let mut packed = Vec::new();
                for name in &commands {
                    let entry = registry
                        .get(name)
                        .map_err(|e| usage(e.to_string()))?
                        .ok_or_else(|| usage(format!("no registered command `{name}`")))?;
                    let artifact = registry.load(&entry).map_err(|e| usage(e.to_string()))?;
                    packed.push((entry, artifact));
                }
                let out = output.unwrap_or_else(|| PathBuf::from(format!("{id}.wbundle")));
                let tmp = out.with_extension("wbundle.part");
                // Created afresh, never through a link standing at the
                // name; renamed over `out`, so a link there is replaced.
                let _ = std::fs::remove_file(&tmp);
                let file = std::fs::File::create_new(&tmp)
                    .map_err(|e| usage(format!("{}: {e}", tmp.display())))?;
                let now = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                let shipped = bundle::ship(
                    &volumes,
                    page.as_deref(),
                    &packed,
                    &identity,
                    (&tenant, &id),
                    now,
                    file,
                );
                let manifest = match shipped {
                    Ok(m) => m,
                    Err(e) => {
                        let _ = std::fs::remove_file(&tmp);
                        return Err((e.to_string(), exit::ENGINE));
                    }
                };
                std::fs::rename(&tmp, &out)
                    .map_err(|e| (format!("{}: {e}", out.display()), exit::ENGINE))?;
                let sha = std::fs::read(&out)
                    .map(|b| bundle::sha256_hex(&b))
                    .unwrap_or_default();
                Ok(serde_json::json!({
                    "bundle": out.display().to_string(),
                    "sha256": sha,
                    "signer": manifest.signer,
                    "files": manifest.entries.len(),
                }))
            };
            match body() {
                Ok(v) if json => {
                    outln!("{v}");
                    0
                }
                Ok(v) => {
                    outln!(
                        "shipped {} ({} files, sha256 {}) signed by {}",
                        v["bundle"].as_str().unwrap_or_default(),
                        v["files"],
                        v["sha256"].as_str().unwrap_or_default(),
                        v["signer"].as_str().unwrap_or_default()
                    );
                    0
                }
                Err((why, code)) => fail("bundle", why, code),
            }
        }
        BundleCommand::Restore {
            file,
            id,
            tenant,
            signer,
            commands,
            sha256,
            page_out,
        } => {
            let json = crate::out::json();
            let body = || -> Result<bundle::Restored, (String, u8)> {
                let usage = |e: String| (e, exit::USAGE);
                let bytes =
                    std::fs::read(&file).map_err(|e| usage(format!("{}: {e}", file.display())))?;
                if let Some(want) = &sha256 {
                    let got = bundle::sha256_hex(&bytes);
                    if !got.eq_ignore_ascii_case(want.trim()) {
                        return Err((
                            format!(
                                "artifact_integrity: {} has sha256 {got}, not the pinned {want}",
                                file.display()
                            ),
                            REFUSED,
                        ));
                    }
                }
                let peek = bundle::peek(std::io::Cursor::new(&bytes))
                    .map_err(|e| (e.to_string(), REFUSED))?;
                let target = id.unwrap_or(peek.instance);
                let volumes = storage
                    .volumes(&tenant, &target)
                    .map_err(|e| usage(e.to_string()))?;
                let own = Identity::of_tenant(&keyring(&home), &tenant, seed().as_deref())
                    .map(|id| id.did == peek.signer)
                    .unwrap_or(false);
                let registry = workbooks::commands::Registry::new(&home);
                let install = commands.then_some(bundle::Install {
                    registry: &registry,
                    own,
                });
                let restored = bundle::restore(
                    std::io::Cursor::new(&bytes),
                    &volumes,
                    &target,
                    signer.as_deref(),
                    install,
                )
                .map_err(|e| (e.to_string(), REFUSED))?;
                if let (Some(out), Some(page)) = (&page_out, &restored.page) {
                    workbooks::files::write_output(out, page)
                        .map_err(|e| (format!("{}: {e}", out.display()), exit::ENGINE))?;
                }
                Ok(restored)
            };
            match body() {
                Ok(r) if json => {
                    outln!("{}", serde_json::to_string(&r).unwrap_or_default());
                    0
                }
                Ok(r) => {
                    outln!(
                        "restored {} files into `{}` (signed by {})",
                        r.files,
                        r.target,
                        r.manifest.signer
                    );
                    for c in &r.commands {
                        outln!("registered {} (tier {})", c.name, c.tier.name());
                    }
                    let shipped = r.manifest.commands.len();
                    if shipped > 0 && r.commands.is_empty() {
                        outln!(
                            "{shipped} command(s) shipped with it not registered: pass --commands --signer DID to register them"
                        );
                    }
                    0
                }
                Err((why, code)) => fail("bundle", why, code),
            }
        }
    }
}

/// The exit status of a bundle refused (tampered, unsigned, mis-pinned).
const REFUSED: u8 = 1;
