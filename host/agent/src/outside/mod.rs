//! The agent tools that reach past the sandbox, each to a place the
//! operator configured: `web_search` (a SearXNG-compatible JSON endpoint)
//! for every run, and for runs the host grants exec, `git` (commit the
//! workdir, push it to the tenant's remote), `publish` (copy `content/**`
//! and `blog/**` to the tenant's web root) and `image` (ask an
//! OpenAI-compatible images endpoint, at most 2 attempts per run).
//!
//! Threat: the model, or a page it read, steering a host operation. The
//! model supplies intent only (a query, a commit message, a prompt, a path
//! inside its workdir), never an address, a command line or a host path.
//! Every place is the operator's, and the remote and the web root are
//! templates that must name `{tenant}`: the run's tenant is put in here,
//! so one tenant's run cannot reach another's. What leaves the workdir is
//! read without following a link, `.git` and the host's own run files
//! left out, within [`AGENT_EXPORT_MAX_FILES`](crate::limits::AGENT_EXPORT_MAX_FILES)
//! and [`AGENT_EXPORT_MAX_BYTES`](crate::limits::AGENT_EXPORT_MAX_BYTES). The exec grant comes from the host
//! ([`AgentOptions::exec`](super::AgentOptions::exec)), never from the
//! model.

#[cfg(feature = "git")]
mod git;
mod image;
mod publish;
mod tree;
mod web_search;

pub(crate) use image::{ImageBudget, write_image};

use std::path::PathBuf;
use workbooks::egress::HttpClient;

/// What a template must name, replaced by the run's tenant.
pub const TENANT: &str = "{tenant}";

/// Where the agent's outside tools go, as the operator configures them.
/// Each is absent by default, and a tool whose place is absent answers
/// with an error saying so.
#[derive(Debug, Clone, Default)]
pub struct AgentServices {
    /// The base URL of a SearXNG-compatible endpoint (`/search?q=…&format=json`
    /// is asked of it).
    pub web_search: Option<String>,
    /// Where `git` pushes.
    pub git: Option<GitRemote>,
    /// Where `publish` copies: a directory template naming `{tenant}`.
    pub web_root: Option<String>,
    /// Where `image` asks.
    pub image: Option<ImageEndpoint>,
}

/// The remote `git` pushes to.
#[derive(Debug, Clone)]
pub struct GitRemote {
    /// The remote's URL or path, naming `{tenant}` (e.g.
    /// `/srv/git/{tenant}.git`, a bare repository).
    pub url: String,
    /// The branch pushed (`main` by default).
    pub branch: String,
}

/// An OpenAI-compatible images endpoint (`…/images/generations`).
#[derive(Clone)]
pub struct ImageEndpoint {
    /// The full URL requests are posted to.
    pub url: String,
    /// The bearer key, if the endpoint wants one.
    pub api_key: Option<String>,
    /// The model named in requests, if any.
    pub model: Option<String>,
    /// The size asked for (`1024x1024` by default).
    pub size: String,
}

impl ImageEndpoint {
    /// The endpoint under `base_url` (`/images/generations` is appended).
    pub fn new(base_url: &str, api_key: Option<String>, model: Option<String>) -> Self {
        Self {
            url: format!("{}/images/generations", base_url.trim_end_matches('/')),
            api_key,
            model,
            size: "1024x1024".into(),
        }
    }
}

impl std::fmt::Debug for ImageEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImageEndpoint")
            .field("url", &self.url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<held>"))
            .field("model", &self.model)
            .field("size", &self.size)
            .finish()
    }
}

/// Why the operator's configuration of the outside tools is refused.
#[derive(Debug, thiserror::Error)]
pub enum ServicesError {
    /// A remote or web root that does not name `{tenant}`: every tenant
    /// would share it.
    #[error("agent tool {tool}: {template:?} must name {TENANT}, so each tenant has its own")]
    Untenanted {
        /// `git` or `publish`.
        tool: &'static str,
        /// The template as given.
        template: String,
    },
    /// An empty branch name, or one git would not take.
    #[error("agent tool git: {0:?} is not a branch name")]
    Branch(String),
}

impl AgentServices {
    /// Checks the templates and the branch.
    pub fn check(&self) -> Result<(), ServicesError> {
        let named = |tool, template: &String| {
            if template.contains(TENANT) {
                Ok(())
            } else {
                Err(ServicesError::Untenanted {
                    tool,
                    template: template.clone(),
                })
            }
        };
        if let Some(git) = &self.git {
            named("git", &git.url)?;
            let b = &git.branch;
            let bad = b.is_empty()
                || b.starts_with(['-', '/', '.'])
                || b.ends_with(['/', '.'])
                || b.contains("..")
                || b.contains("//")
                || b.ends_with(".lock")
                || b.chars()
                    .any(|c| c.is_control() || c.is_whitespace() || "~^:?*[\\@{".contains(c));
            if bad {
                return Err(ServicesError::Branch(b.clone()));
            }
        }
        if let Some(root) = &self.web_root {
            named("publish", root)?;
        }
        Ok(())
    }
}

/// The configuration with the client that reaches it.
pub(crate) struct Outside {
    pub(crate) services: AgentServices,
    pub(crate) client: HttpClient,
}

impl Outside {
    pub(crate) fn new(services: AgentServices, client: HttpClient) -> Self {
        Self { services, client }
    }
}

impl Outside {
    /// Sends `request` to an operator endpoint with no redirect, within
    /// `max_body` and `deadline`: the body of a 200, or the error the model
    /// reads, starting `<tool> error:` and naming the `endpoint`.
    async fn ask(
        &self,
        tool: &str,
        endpoint: &str,
        request: workbooks::egress::HttpRequest,
        max_body: usize,
        deadline: std::time::Duration,
    ) -> Result<bytes::Bytes, String> {
        let limits = workbooks::egress::HttpLimits {
            max_body,
            deadline,
            max_redirects: 0,
            shared: None,
        };
        let answer = self
            .client
            .fetch(request, &limits)
            .await
            .map_err(|e| format!("{tool} error: {e}"))?;
        if answer.status != 200 {
            return Err(format!(
                "{tool} error: the {endpoint} answered {}",
                answer.status
            ));
        }
        Ok(answer.body)
    }
}

/// `template` with `tenant` put in (a valid store name: no `/`, never `.`
/// or `..`).
fn for_tenant(template: &str, tenant: &str) -> String {
    template.replace(TENANT, tenant)
}

/// `n files`, or `1 file`.
fn files(n: usize) -> String {
    if n == 1 {
        "1 file".into()
    } else {
        format!("{n} files")
    }
}

/// The web root of `tenant`, when one is configured.
fn web_root(services: &AgentServices, tenant: &str) -> Option<PathBuf> {
    services
        .web_root
        .as_deref()
        .map(|t| PathBuf::from(for_tenant(t, tenant)))
}

pub(crate) use image::image;
pub(crate) use publish::publish;
pub(crate) use web_search::web_search;

/// Commits the workdir and pushes it; see [`git`](self::git).
#[cfg(feature = "git")]
pub(crate) use git::commit_and_push;

/// Without git in this build, the tool says so.
#[cfg(not(feature = "git"))]
pub(crate) async fn commit_and_push(
    _services: &AgentServices,
    _tenant: &str,
    _workdir: &std::path::Path,
    _message: &str,
) -> Result<String, String> {
    Err("git error: this build has no git (built without the `git` feature)".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_remote_or_web_root_that_names_no_tenant_is_refused() {
        let git = |url: &str, branch: &str| AgentServices {
            git: Some(GitRemote {
                url: url.into(),
                branch: branch.into(),
            }),
            ..AgentServices::default()
        };
        assert!(git("/srv/git/{tenant}.git", "main").check().is_ok());
        let shared = git("/srv/git/shared.git", "main").check().unwrap_err();
        assert_eq!(
            shared.to_string(),
            "agent tool git: \"/srv/git/shared.git\" must name {tenant}, so each tenant has its own"
        );
        for bad in ["", "-f", "a..b", "a b", "x.lock", "a:b", "/x", "x/"] {
            assert!(
                matches!(
                    git("/g/{tenant}", bad).check(),
                    Err(ServicesError::Branch(_))
                ),
                "{bad:?}"
            );
        }
        let root = AgentServices {
            web_root: Some("/var/www".into()),
            ..AgentServices::default()
        };
        assert!(matches!(
            root.check(),
            Err(ServicesError::Untenanted {
                tool: "publish",
                ..
            })
        ));
        assert_eq!(
            for_tenant("/var/www/{tenant}/site", "acme"),
            "/var/www/acme/site"
        );
    }
}
