//! A tenant's bound tokens as the egress asks for them
//! ([`crate::egress::SecretBindings`]): read from the keyring at each
//! request (a stat when nothing changed), so `wbx secret bind` and
//! `unbind` reach a running guest at its next request; a session under a
//! grant that names secrets gets only the bindings of the secrets it names.

use super::keyring::{Keyring, SecretKind};
use crate::egress::{Carrier, Destinations, Injection, SecretBindings};
use crate::grants::{CapNoun, Scope};
use base64::Engine as _;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Where the host adds a token: one destination (the grants' syntax,
/// `http` or `https`), and how the value is sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Binding {
    /// The destination (`https://api.example.com`).
    pub to: String,
    /// How the value is sent.
    #[serde(flatten)]
    pub place: Place,
}

/// How a bound token is sent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "as", rename_all = "snake_case")]
pub enum Place {
    /// In header `header`, as `template` with `{}` replaced by the value
    /// (`Authorization: Bearer {}`).
    Header {
        /// The header's name.
        header: String,
        /// Its value, `{}` standing for the token.
        template: String,
    },
    /// As HTTP basic authentication, `user` and the token as password.
    Basic {
        /// The user name.
        user: String,
    },
    /// As query parameter `param` (replacing any of that name the guest
    /// wrote), for an API that takes its key in the URL.
    Query {
        /// The parameter's name.
        param: String,
    },
}

/// Why a binding cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BindError {
    /// The tenant has no secret by this name.
    #[error("no secret {0} (`wbx secret set --kind token` stores one)")]
    NotFound(String),
    /// The secret signs; only a token is sent.
    #[error("secret {name} is {kind:?}: only a token (`--kind token`) is bound")]
    NotAToken {
        /// The secret.
        name: String,
        /// Its kind.
        kind: SecretKind,
    },
    /// The destination or the place does not read.
    #[error("{0}")]
    Invalid(String),
    /// The keyring cannot be read or written.
    #[error("{0}")]
    Io(String),
}

impl Binding {
    /// Checks the binding reads: one `http`/`https` destination, a
    /// header name and a template with one `{}`, and a value it can send
    /// for a token.
    pub fn check(&self) -> Result<(), BindError> {
        let bad = |why: String| Err(BindError::Invalid(why));
        Destinations::parse(std::slice::from_ref(&self.to))
            .map_err(|e| BindError::Invalid(format!("--to {e}")))?;
        if !(self.to.starts_with("https://") || self.to.starts_with("http://")) {
            return bad(format!(
                "--to {}: a binding is to an http:// or https:// destination",
                self.to
            ));
        }
        if let Place::Query { param } = &self.place
            && (param.is_empty()
                || !param
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_.-~".contains(&b)))
        {
            return bad(format!(
                "--query {param:?}: a parameter name is letters, digits, `_`, `.`, `-` or `~`"
            ));
        }
        if let Place::Header { header, template } = &self.place {
            if http::HeaderName::from_bytes(header.as_bytes()).is_err() {
                return bad(format!("--header: {header:?} is not a header name"));
            }
            if template.matches("{}").count() != 1 {
                return bad(format!(
                    "--header: {template:?} must hold one {{}} for the value"
                ));
            }
        }
        match self.injection("check", b"token") {
            Some(_) => Ok(()),
            None => bad("the header value does not read".into()),
        }
    }
}

impl Keyring {
    /// Binds `tenant`'s token `name` to `binding` (replacing one to the
    /// same destination).
    pub fn bind(&self, tenant: &str, name: &str, binding: Binding) -> Result<(), BindError> {
        binding.check()?;
        let outcome = self.change(tenant, name, |all| {
            let Some(secret) = all.get_mut(name) else {
                return Ok(Err(BindError::NotFound(name.to_string())));
            };
            if secret.kind() != SecretKind::Token {
                return Ok(Err(BindError::NotAToken {
                    name: name.to_string(),
                    kind: secret.kind(),
                }));
            }
            secret.bindings.retain(|b| b.to != binding.to);
            secret.bindings.push(binding);
            Ok(Ok(()))
        });
        outcome.map_err(|e| BindError::Io(e.to_string()))?
    }

    /// Removes `tenant`'s token `name`'s bindings (to `to` only, when
    /// given); how many it removed.
    pub fn unbind(&self, tenant: &str, name: &str, to: Option<&str>) -> Result<usize, BindError> {
        let outcome = self.change(tenant, name, |all| {
            let Some(secret) = all.get_mut(name) else {
                return Ok(Err(BindError::NotFound(name.to_string())));
            };
            let before = secret.bindings.len();
            secret.bindings.retain(|b| to.is_some_and(|to| b.to != to));
            Ok(Ok(before - secret.bindings.len()))
        });
        outcome.map_err(|e| BindError::Io(e.to_string()))?
    }

    /// The bindings of `tenant`'s secrets by name (never their values).
    pub fn bindings(&self, tenant: &str) -> Vec<(String, Binding)> {
        self.read(tenant)
            .iter()
            .filter_map(|(n, s)| Some((n, s.token()?.1)))
            .flat_map(|(n, bs)| bs.iter().map(move |b| (n.clone(), b.clone())))
            .collect()
    }
}

/// How a grant's names name the secrets a binding may add.
const SCOPED_AS: CapNoun = CapNoun {
    cap: "secrets",
    noun: "secret",
};

/// The bound tokens of one tenant, under a session's grant.
#[derive(Debug)]
pub(crate) struct TenantBindings {
    pub(crate) keyring: Arc<Keyring>,
    pub(crate) tenant: String,
    pub(crate) scope: Option<Scope>,
}

impl SecretBindings for TenantBindings {
    fn injections(&self, scheme: &str, host: &str, port: u16) -> Vec<Injection> {
        let scoped = match &self.scope {
            None => None,
            // Expired or revoked: the request itself is refused by the
            // network scope; add nothing either way.
            Some(scope) => match scope.now() {
                Ok(s) => Some(s),
                Err(_) => return Vec::new(),
            },
        };
        // The tenant's secrets as last read (a stat when unchanged),
        // borrowed: nothing is copied for a request no binding names.
        let secrets = self.keyring.read(&self.tenant);
        let mut out = Vec::new();
        for (name, secret) in secrets.iter() {
            let Some((token, bindings)) = secret.token() else {
                continue;
            };
            if bindings.is_empty()
                || scoped
                    .as_ref()
                    .is_some_and(|s| s.judge_named(SCOPED_AS, name).is_err())
            {
                continue;
            }
            for b in bindings.iter().filter(|b| b.reaches(scheme, host, port)) {
                out.extend(b.injection(name, token));
            }
        }
        out
    }
}

impl Binding {
    /// Whether a request to `scheme://host:port` is the binding's.
    fn reaches(&self, scheme: &str, host: &str, port: u16) -> bool {
        Destinations::parse(std::slice::from_ref(&self.to))
            .is_ok_and(|d| d.allows(scheme, host, port))
    }

    /// The header or parameter carrying `token` as this binding sends it;
    /// `None` when the token cannot be sent so (checked when it was bound).
    pub(crate) fn injection(&self, name: &str, token: &[u8]) -> Option<Injection> {
        let text = std::str::from_utf8(token).ok()?;
        if let Place::Query { param } = &self.place {
            // Raw, as the request line carries it, and as a server may
            // hand it back re-encoded.
            return Some(Injection {
                secret: name.to_string(),
                carrier: Carrier::Query(param.clone(), text.to_string()),
                masks: crate::egress::token_forms(token),
            });
        }
        let (header, value, masks) = match &self.place {
            Place::Header { header, template } => {
                let value = template.replace("{}", text);
                (header.as_str(), value.clone(), vec![value.into_bytes()])
            }
            Place::Basic { user } => {
                let pair =
                    base64::engine::general_purpose::STANDARD.encode(format!("{user}:{text}"));
                let value = format!("Basic {pair}");
                (
                    "authorization",
                    value.clone(),
                    vec![value.into_bytes(), pair.into_bytes()],
                )
            }
            Place::Query { .. } => return None,
        };
        let mut masks = masks;
        masks.extend(crate::egress::token_forms(token));
        Some(Injection {
            secret: name.to_string(),
            carrier: Carrier::Header(
                http::HeaderName::from_bytes(header.as_bytes()).ok()?,
                http::HeaderValue::from_str(&value).ok()?,
            ),
            masks,
        })
    }
}
