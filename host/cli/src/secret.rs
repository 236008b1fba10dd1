//! `wbx secret`: put signing keys and tokens in the host's keyring, and
//! bind tokens to the destinations the host adds them to. Keys are read
//! from stdin (never from argv, which other users can see), and nothing
//! ever prints them back.

use crate::{exit, fail};
use std::io::Read;
use std::path::PathBuf;
use workbooks::{BindError, Binding, Keyring, Place, Secret, SecretKind};

#[derive(Debug, clap::Subcommand)]
pub(crate) enum SecretCommand {
    /// Store a secret for a tenant. An hmac key is read from stdin as raw
    /// bytes; an ed25519 seed as 64 hex digits; a token as text (one line);
    /// or pass --generate.
    Set {
        /// The tenant.
        tenant: String,
        /// The secret's name.
        name: String,
        /// hmac, ed25519 or token (a token is never signed with: the host
        /// adds it to the requests `wbx secret bind` names).
        #[arg(long, default_value = "hmac")]
        kind: String,
        /// Generate a random key instead of reading one.
        #[arg(long)]
        generate: bool,
    },
    /// List a tenant's secret names and kinds (never their bytes), and
    /// where each token is bound.
    List {
        /// The tenant.
        tenant: String,
    },
    /// Have the host add a token to requests to one destination, so no
    /// guest ever holds it: `--header "Authorization: Bearer {}"`,
    /// `--basic USER` or `--query PARAM`. Never sent to another origin, on a redirect to one,
    /// or over http when bound to https; masked in what comes back.
    Bind(BindArgs),
    /// Remove a token's bindings (the one to `--to`, or all).
    Unbind {
        /// The tenant.
        tenant: String,
        /// The token's name.
        name: String,
        /// Only the binding to this destination.
        #[arg(long, value_name = "DEST")]
        to: Option<String>,
    },
}

#[derive(Debug, clap::Args)]
pub(crate) struct BindArgs {
    /// The tenant.
    tenant: String,
    /// The token's name.
    name: String,
    /// The destination, as a grant writes one (`https://api.example.com`).
    #[arg(long, value_name = "DEST")]
    to: String,
    /// The header, `{}` standing for the token (`Authorization: Bearer {}`).
    #[arg(
        long,
        value_name = "NAME: TEMPLATE",
        conflicts_with_all = ["basic", "query"],
        required_unless_present_any = ["basic", "query"]
    )]
    header: Option<String>,
    /// Send it as HTTP basic authentication, this user and the token.
    #[arg(long, value_name = "USER", conflicts_with = "query")]
    basic: Option<String>,
    /// Send it as this query parameter (`?PARAM=<token>`, replacing one of
    /// that name the guest wrote), for an API that takes its key in the URL.
    #[arg(long, value_name = "PARAM")]
    query: Option<String>,
}

impl BindArgs {
    fn binding(&self) -> Result<Binding, String> {
        let place = match (&self.header, &self.basic, &self.query) {
            (_, _, Some(param)) => Place::Query {
                param: param.clone(),
            },
            (Some(h), _, _) => {
                let (header, template) = h
                    .split_once(':')
                    .ok_or_else(|| format!("--header {h:?}: write NAME: TEMPLATE"))?;
                Place::Header {
                    header: header.trim().to_string(),
                    template: template.trim().to_string(),
                }
            }
            (None, Some(user), _) => Place::Basic { user: user.clone() },
            (None, None, None) => return Err("give --header, --basic or --query".into()),
        };
        Ok(Binding {
            to: self.to.clone(),
            place,
        })
    }
}

pub(crate) fn run(cmd: SecretCommand, home: PathBuf) -> u8 {
    let keyring = Keyring::new(Some(home.join(workbooks::SECRETS_DIR)), Default::default());
    match cmd {
        SecretCommand::List { tenant } => {
            list(&keyring, &tenant);
            0
        }
        SecretCommand::Bind(args) => {
            let bound = args
                .binding()
                .map_err(|e| fail("usage", e, exit::USAGE))
                .and_then(|b| {
                    keyring
                        .bind(&args.tenant, &args.name, b)
                        .map_err(bind_failed)
                });
            match bound {
                Ok(()) => {
                    outln!("bound {} of {} to {}", args.name, args.tenant, args.to);
                    0
                }
                Err(code) => code,
            }
        }
        SecretCommand::Unbind { tenant, name, to } => {
            match keyring.unbind(&tenant, &name, to.as_deref()) {
                Ok(n) => {
                    outln!("removed {n} binding(s) of {name}");
                    0
                }
                Err(e) => bind_failed(e),
            }
        }
        SecretCommand::Set {
            tenant,
            name,
            kind,
            generate,
        } => {
            let Some(kind) = SecretKind::parse(&kind) else {
                return fail("usage", "--kind is hmac, ed25519 or token", exit::USAGE);
            };
            let secret = if generate {
                Secret::generate(kind).map_err(|e| e.to_string())
            } else {
                let mut input = Vec::new();
                if let Err(e) = std::io::stdin().read_to_end(&mut input) {
                    return fail("stdin", e, exit::ENGINE);
                }
                let key = match kind {
                    SecretKind::Hmac => input,
                    // One line: the newline a shell's echo adds is not part
                    // of it.
                    SecretKind::Token => String::from_utf8_lossy(&input)
                        .trim_end()
                        .as_bytes()
                        .to_vec(),
                    SecretKind::Ed25519 => {
                        match hex::decode(String::from_utf8_lossy(&input).trim()) {
                            Ok(k) => k,
                            Err(_) => {
                                return fail(
                                    "usage",
                                    "an ed25519 seed is 64 hex digits on stdin",
                                    exit::USAGE,
                                );
                            }
                        }
                    }
                };
                Secret::new(kind, key).map_err(|e| e.to_string())
            };
            let secret = match secret {
                Ok(s) => s,
                Err(e) => return fail("usage", e, exit::USAGE),
            };
            let public = secret.ed25519_public_key().ok();
            if let Err(e) = keyring.set(&tenant, &name, secret) {
                return fail("secret", e, exit::ENGINE);
            }
            match public {
                Some(pk) => outln!(
                    "stored {name} for {tenant} (ed25519 public key {})",
                    hex::encode(pk)
                ),
                None => outln!("stored {name} for {tenant}"),
            }
            0
        }
    }
}

fn bind_failed(e: BindError) -> u8 {
    let code = match e {
        BindError::NotFound(_) => exit::NOT_FOUND,
        BindError::Io(_) => exit::ENGINE,
        BindError::NotAToken { .. } | BindError::Invalid(_) => exit::USAGE,
    };
    fail("secret", e, code)
}

/// `wbx secret list`: names and kinds, and each token's bindings.
fn list(keyring: &Keyring, tenant: &str) {
    let names = keyring.names(tenant);
    let bindings = keyring.bindings(tenant);
    let bound_of = |name: &str| -> Vec<&Binding> {
        bindings
            .iter()
            .filter(|(n, _)| n == name)
            .map(|(_, b)| b)
            .collect()
    };
    if crate::out::json() {
        let list: Vec<_> = names
            .iter()
            .map(|(name, kind)| {
                serde_json::json!({
                    "name": name,
                    "kind": format!("{kind:?}").to_lowercase(),
                    "bindings": bound_of(name),
                })
            })
            .collect();
        outln!("{}", serde_json::Value::Array(list));
        return;
    }
    for (name, kind) in &names {
        outln!("{name}\t{kind:?}");
        for b in bound_of(name) {
            let how = match &b.place {
                Place::Header { header, template } => format!("{header}: {template}"),
                Place::Basic { user } => format!("basic auth as {user}"),
                Place::Query { param } => format!("query parameter {param}"),
            };
            outln!("  -> {} ({how})", b.to);
        }
    }
}
