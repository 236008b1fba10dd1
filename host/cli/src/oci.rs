//! `wbx push` and `wbx pull`: components in OCI registries, and `oci://`
//! references wherever a component file is taken (`exec`, `call`,
//! `inspect`, `command register`, `serve`).
//!
//! A reference resolves to the store file of its pull: by a digest the
//! home has recorded, offline; by a tag, one manifest request, then
//! offline when the tag still names recorded bytes. Signers required by
//! the home (`<home>/oci/trust.json`, `WB_OCI_SIGNERS`) apply to every
//! pull, including those behind a run.

use crate::{exit, fail};
use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use workbooks_oci::{Credentials, OciError, Pulled, Transport, Trust};

/// Registry credentials given on the command line.
#[derive(Debug, clap::Args)]
pub(crate) struct Login {
    /// The registry user, for the reference's registry alone (the password
    /// is read from stdin with --password-stdin, else from
    /// WB_OCI_PASSWORD). Without it: WB_OCI_USERNAME for the registry
    /// WB_OCI_REGISTRY names, then ~/.docker/config.json, then anonymous.
    #[arg(long)]
    username: Option<String>,
    /// Read the password from stdin.
    #[arg(long, requires = "username")]
    password_stdin: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct PushArgs {
    /// The component (or wasip1 module) to publish.
    file: PathBuf,
    /// Where: oci://HOST[:PORT]/REPO[:TAG] (TAG defaults to latest).
    reference: String,
    /// The tenant whose did:key signs the manifest digest
    /// (WB_SIGNING_KEY overrides the key).
    #[arg(long, default_value = "default")]
    tenant: String,
    /// Publish without a signature.
    #[arg(long)]
    no_sign: bool,
    #[command(flatten)]
    login: Login,
}

#[derive(Debug, clap::Args)]
pub(crate) struct PullArgs {
    /// oci://HOST[:PORT]/REPO[:TAG|@sha256:…].
    reference: String,
    /// Also copy the component to this file.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Require a signature by this did:key (repeatable; added to the
    /// home's trust file and WB_OCI_SIGNERS).
    #[arg(long = "signer", value_name = "DID")]
    signers: Vec<String>,
    #[command(flatten)]
    login: Login,
}

/// The exit code of a registry failure.
fn code(e: &OciError) -> u8 {
    match e {
        OciError::BadReference { .. } | OciError::Trust(_) | OciError::TlsRoots(_) => exit::USAGE,
        OciError::Floor { .. } | OciError::Unsigned { .. } | OciError::Denied { .. } => {
            exit::REFUSED
        }
        OciError::NotFound { .. } => exit::NOT_FOUND,
        _ => exit::LOAD,
    }
}

fn failed(e: OciError) -> u8 {
    fail(e.kind(), &e, code(&e))
}

/// How this process reaches registries: the operator's
/// `WB_OPERATOR_ALLOW` (never the guests' `WB_NET_ALLOW`), the TLS roots,
/// the credentials (`login`'s for the registry of its reference alone).
fn transport(login: Option<(&Login, &str)>) -> Result<Transport, u8> {
    let guard = workbooks::NetGuard::new(
        crate::options::operator_allow()?,
        std::sync::Arc::new(workbooks::egress::SystemResolver),
    );
    let mut credentials = Credentials::from_env().map_err(failed)?;
    if let Some((
        Login {
            username: Some(user),
            password_stdin,
        },
        reference,
    )) = login
    {
        let named = workbooks_oci::OciRef::parse(reference).map_err(failed)?;
        let mut password = String::new();
        if *password_stdin {
            std::io::stdin()
                .take(64 << 10)
                .read_to_string(&mut password)
                .map_err(|e| fail("usage", format!("--password-stdin: {e}"), exit::USAGE))?;
        } else {
            password = std::env::var("WB_OCI_PASSWORD").unwrap_or_default();
        }
        credentials = credentials.with_user(
            named.registry(),
            user.clone(),
            password.trim_end_matches(['\r', '\n']).to_string(),
        );
    }
    let transport = Transport::new(guard, Vec::new(), credentials);
    Ok(match crate::options::tls_roots_file() {
        Some(path) => transport.with_roots_file(path),
        None => transport,
    })
}

/// Runs `op` to its end, under a spinner saying `what` when `show`, with
/// the bytes `read` counts and their rate when given.
fn awaited<T>(
    show: bool,
    what: String,
    read: Option<Arc<AtomicU64>>,
    op: impl Future<Output = Result<T, OciError>>,
) -> Result<T, u8> {
    let bytes = read.filter(|_| show).map(|read| {
        crate::options::byte_progress(what.clone(), move || read.load(Ordering::Relaxed))
    });
    let spinner = (show && bytes.is_none()).then(|| crate::options::spinner(what));
    let done = crate::options::runtime()?.block_on(op);
    if let Some(spinner) = spinner {
        spinner.finish_and_clear();
    }
    drop(bytes);
    done.map_err(failed)
}

pub(crate) fn push(args: PushArgs, home: PathBuf) -> u8 {
    let body = || -> Result<u8, u8> {
        let wasm = crate::options::read_file(&args.file)?;
        let signer = match args.no_sign {
            true => None,
            false => Some(
                workbooks::identity::Identity::of_tenant(
                    &crate::options::keyring(&home),
                    &args.tenant,
                    crate::options::seed().as_deref(),
                )
                .map_err(|e| fail("sign", e, exit::USAGE))?,
            ),
        };
        let transport = transport(Some((&args.login, &args.reference)))?;
        let pushed = awaited(
            !crate::out::json(),
            format!("pushing {}", args.reference),
            None,
            workbooks_oci::push(&transport, &wasm, &args.reference, signer.as_ref()),
        )?;
        if crate::out::json() {
            outln!("{}", serde_json::to_string(&pushed).unwrap_or_default());
        } else {
            outln!("pushed {} ({} bytes)", pushed.reference, pushed.size);
            outln!("digest {}", pushed.digest);
            match &pushed.signer {
                Some(did) => outln!("signed by {did}"),
                None => outln!("unsigned"),
            }
        }
        Ok(0)
    };
    body().unwrap_or_else(|code| code)
}

pub(crate) fn pull(args: PullArgs, home: PathBuf) -> u8 {
    let body = || -> Result<u8, u8> {
        let trust = Trust::of_home(&home, &args.signers).map_err(failed)?;
        let read = Arc::new(AtomicU64::new(0));
        let transport =
            transport(Some((&args.login, &args.reference)))?.with_progress(read.clone());
        let pulled = awaited(
            !crate::out::json(),
            format!("pulling {}", args.reference),
            Some(read),
            workbooks_oci::pull(&transport, &home, &args.reference, &trust),
        )?;
        if let Some(out) = &args.output {
            std::fs::read(&pulled.path)
                .and_then(|bytes| workbooks::files::write_output(out, &bytes))
                .map_err(|e| fail("io", format!("{}: {e}", out.display()), exit::ENGINE))?;
        }
        if crate::out::json() {
            let mut v = serde_json::to_value(&pulled).unwrap_or_default();
            v["path"] = serde_json::json!(pulled.path);
            v["cached"] = serde_json::json!(pulled.cached);
            outln!("{v}");
        } else {
            outln!("{} → {}", pulled.reference, pulled.digest);
            outln!(
                "sha256:{} ({} bytes){}",
                pulled.sha256,
                pulled.size,
                if pulled.cached { ", already here" } else { "" }
            );
            for did in &pulled.signers {
                outln!("signed by {did}");
            }
            outln!("{}", args.output.as_ref().unwrap_or(&pulled.path).display());
        }
        Ok(0)
    };
    body().unwrap_or_else(|code| code)
}

/// `file` itself, or when it is an `oci://` reference the store file it
/// pulls to (under the home's signers), with what was pulled.
pub(crate) fn local(file: &Path, home: &Path) -> Result<(PathBuf, Option<Pulled>), u8> {
    if !workbooks_oci::is_reference(file.as_os_str()) {
        return Ok((file.to_path_buf(), None));
    }
    let reference = file.to_string_lossy();
    let trust = Trust::of_home(home, &[]).map_err(failed)?;
    let read = Arc::new(AtomicU64::new(0));
    let transport = transport(None)?.with_progress(read.clone());
    let shown = crate::options::byte_progress(format!("pulling {reference}"), move || {
        read.load(Ordering::Relaxed)
    });
    let pulled = crate::options::runtime()?
        .block_on(workbooks_oci::pull(&transport, home, &reference, &trust));
    drop(shown);
    let pulled = pulled.map_err(failed)?;
    if !pulled.cached {
        eprintln!(
            "wbx: pulled {} → {} ({} bytes)",
            pulled.reference, pulled.digest, pulled.size
        );
    }
    Ok((pulled.path.clone(), Some(pulled)))
}

/// The name a reference gives an instance by default: its repository's
/// last segment (`oci://ghcr.io/acme/hello:1` is `hello`), as a file's
/// stem does; `None` for a file.
pub(crate) fn instance_name(file: &Path) -> Option<String> {
    let text = file
        .to_str()
        .filter(|_| workbooks_oci::is_reference(file.as_os_str()))?;
    let r = workbooks_oci::OciRef::parse(text).ok()?;
    r.repository().rsplit('/').next().map(str::to_string)
}
