//! `wbx secret`: put signing keys in the host's keyring. Keys are read
//! from stdin (never from argv, which other users can see), and nothing
//! ever prints them back.

use crate::{exit, fail};
use std::io::Read;
use std::path::PathBuf;
use workbooks::{Keyring, Secret, SecretKind};

#[derive(Debug, clap::Subcommand)]
pub(crate) enum SecretCommand {
    /// Store a secret for a tenant. An hmac key is read from stdin as raw
    /// bytes; an ed25519 seed as 64 hex digits; or pass --generate.
    Set {
        /// The tenant.
        tenant: String,
        /// The secret's name.
        name: String,
        /// hmac or ed25519.
        #[arg(long, default_value = "hmac")]
        kind: String,
        /// Generate a random key instead of reading one.
        #[arg(long)]
        generate: bool,
    },
    /// List a tenant's secret names and kinds (never their bytes).
    List {
        /// The tenant.
        tenant: String,
    },
}

pub(crate) fn run(cmd: SecretCommand, home: PathBuf) -> u8 {
    let keyring = Keyring::new(Some(home.join(workbooks::SECRETS_DIR)), Default::default());
    match cmd {
        SecretCommand::List { tenant } => {
            let json = crate::out::json();
            let names = keyring.names(&tenant);
            if json {
                let list: Vec<_> = names
                    .iter()
                    .map(|(name, kind)| serde_json::json!({"name": name, "kind": format!("{kind:?}").to_lowercase()}))
                    .collect();
                outln!("{}", serde_json::Value::Array(list));
            } else {
                for (name, kind) in names {
                    outln!("{name}\t{kind:?}");
                }
            }
            0
        }
        SecretCommand::Set {
            tenant,
            name,
            kind,
            generate,
        } => {
            let Some(kind) = SecretKind::parse(&kind) else {
                return fail("usage", "--kind is hmac or ed25519", exit::USAGE);
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
