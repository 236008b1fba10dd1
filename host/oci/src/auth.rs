//! Registry credentials, from where an operator already keeps them.
//!
//! In order: the command's own (`--username` with the password on stdin,
//! for the registry the command names, or `WB_OCI_USERNAME` and
//! `WB_OCI_PASSWORD` for the one registry `WB_OCI_REGISTRY` names), then
//! the Docker config
//! (`$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`): its
//! `auths` entry for the registry, `auth` (base64 `user:password`) or
//! `username`/`password`, or an `identitytoken`. Credential helpers
//! (`credsStore`, `credHelpers`) run programs and are not used. Without
//! any, access is anonymous. The Docker config is read only for a
//! registry exchange, and only its first MiB (`CONFIG_MAX_FILE_BYTES`):
//! a longer one is not used.
//!
//! Threat: credentials meant for one registry sent to another, one a
//! third-party toolkit or a pasted reference names. Every credential here
//! is bound to one registry: the flag's to the command's reference, the
//! environment's to `WB_OCI_REGISTRY` (credentials without it are an
//! error, not a password for every host), the Docker config's to its key.

use base64::Engine as _;
use oci_client::secrets::RegistryAuth;
use std::path::PathBuf;

/// Credentials for one registry.
#[derive(Clone, Default)]
pub struct Credentials {
    /// Registry, user, password.
    user: Option<(String, String, String)>,
    docker_config: Option<PathBuf>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("user", &self.user.as_ref().map(|(r, u, _)| (r, u)))
            .finish()
    }
}

impl Credentials {
    /// Anonymous, unless the Docker config or environment says otherwise;
    /// `WB_OCI_USERNAME` without `WB_OCI_REGISTRY` is an error.
    pub fn from_env() -> Result<Credentials, crate::OciError> {
        let var = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let user = match (var("WB_OCI_USERNAME"), var("WB_OCI_REGISTRY")) {
            (Some(u), Some(registry)) => Some((
                registry,
                u,
                std::env::var("WB_OCI_PASSWORD").unwrap_or_default(),
            )),
            (Some(_), None) => {
                return Err(crate::OciError::Credentials(
                    "WB_OCI_USERNAME is set without WB_OCI_REGISTRY (HOST[:PORT]), the one registry it is for".into(),
                ));
            }
            (None, _) => None,
        };
        let docker_config = std::env::var_os("DOCKER_CONFIG")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".docker")))
            .map(|d| d.join("config.json"));
        Ok(Credentials {
            user,
            docker_config,
        })
    }

    /// These credentials with `user` and `password` first, for `registry`
    /// (`HOST[:PORT]`) alone.
    pub fn with_user(mut self, registry: &str, user: String, password: String) -> Credentials {
        self.user = Some((registry.to_string(), user, password));
        self
    }

    /// What to present to `registry` (`HOST[:PORT]`).
    pub(crate) fn for_registry(&self, registry: &str) -> RegistryAuth {
        if let Some((r, u, p)) = &self.user
            && r == registry
        {
            return RegistryAuth::Basic(u.clone(), p.clone());
        }
        self.docker_config
            .as_ref()
            .and_then(|path| {
                workbooks::files::read_capped(path, workbooks::limits::CONFIG_MAX_FILE_BYTES).ok()
            })
            .and_then(|bytes| from_docker_config(&bytes, registry))
            .unwrap_or(RegistryAuth::Anonymous)
    }
}

/// The `auths` entry for `registry` in a Docker config.
fn from_docker_config(bytes: &[u8], registry: &str) -> Option<RegistryAuth> {
    let config: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let auths = config.get("auths")?.as_object()?;
    let entry = auths.iter().find_map(|(key, v)| {
        let host = key
            .trim_start_matches("https://")
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap_or_default();
        (host == registry).then_some(v)
    })?;
    let field = |k: &str| {
        entry
            .get(k)
            .and_then(|v| v.as_str())
            .filter(|s| !s.is_empty())
    };
    if let Some(token) = field("identitytoken") {
        return Some(RegistryAuth::Bearer(token.to_string()));
    }
    if let (Some(u), Some(p)) = (field("username"), field("password")) {
        return Some(RegistryAuth::Basic(u.to_string(), p.to_string()));
    }
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(field("auth")?)
        .ok()?;
    let (u, p) = std::str::from_utf8(&decoded).ok()?.split_once(':')?;
    Some(RegistryAuth::Basic(u.to_string(), p.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_docker_config_that_never_ends_is_not_read_past_its_cap() {
        let c = Credentials {
            user: None,
            docker_config: Some("/dev/zero".into()),
        };
        assert!(matches!(
            c.for_registry("127.0.0.1:5000"),
            RegistryAuth::Anonymous
        ));
    }

    #[test]
    fn the_docker_config_entry_of_the_registry_is_used() {
        let config = serde_json::json!({
            "auths": {
                "https://ghcr.io": { "auth": base64::engine::general_purpose::STANDARD.encode("ann:s3cret") },
                "127.0.0.1:5000": { "username": "bob", "password": "pw" }
            }
        })
        .to_string();
        let got = |r| match from_docker_config(config.as_bytes(), r) {
            Some(RegistryAuth::Basic(u, p)) => Some((u, p)),
            _ => None,
        };
        assert_eq!(got("ghcr.io"), Some(("ann".into(), "s3cret".into())));
        assert_eq!(got("127.0.0.1:5000"), Some(("bob".into(), "pw".into())));
        assert_eq!(got("quay.io"), None);
    }

    #[test]
    fn a_users_credentials_go_to_their_registry_alone() {
        let c = Credentials::default().with_user("ghcr.io", "ann".into(), "pw".into());
        assert!(matches!(c.for_registry("ghcr.io"), RegistryAuth::Basic(..)));
        assert!(matches!(
            c.for_registry("evil.example"),
            RegistryAuth::Anonymous
        ));
    }
}
