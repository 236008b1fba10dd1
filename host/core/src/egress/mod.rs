//! Egress: every byte that leaves the host for a guest. The SSRF floor
//! (`net_guard`: the refused ranges, resolve once, connect to the pinned
//! address), the capped HTTP transport (`capped_http`: redirects
//! re-checked, bodies and time capped, TLS verified) and the one-shot
//! socket exchanges ([`oneshot`]), and the secrets the host adds to a
//! request and masks in its answer (`bound`). [`NetAccess`] puts the
//! cadence in front of them: the `egress`, `http` and `exchange` primitives and the guarded
//! `wasi:http` and `wasi:sockets` all reach the network through it.

mod bound;
pub(crate) mod capped_http;
pub mod destinations;
pub(crate) mod net_guard;
pub mod oneshot;
pub(crate) mod tls;

pub use bound::{
    Carrier, Injection, Masker, SecretBindings, inject, mask_headers, mask_in, masks_of,
    token_forms, with_query, without_injected,
};
pub use capped_http::{ByteBudget, HttpClient, HttpError, HttpLimits, HttpRequest, HttpResponse};
pub use destinations::{Destinations, ScopeError};
pub use net_guard::{Cidr, NetDenial, NetGuard, Pinned, Resolver, SystemResolver};
pub use tls::{pem_roots, pem_roots_file};

use crate::cadence::{Cadence, Denial};
use std::sync::Arc;

/// What judges a destination for a session: its grant's network scope as
/// it is at the call (a grant's `Scope` is the one the engine
/// makes). A refusal names what refused and `refused`.
pub trait NetScope: std::fmt::Debug + Send + Sync {
    /// Whether `scheme://host:port` may be reached now; `host` is a name or
    /// an address literal as a URL writes it.
    fn judge(
        &self,
        scheme: &str,
        host: &str,
        port: u16,
        refused: &dyn std::fmt::Display,
    ) -> Result<(), NetDenial>;
}

/// What a network call needs: the caller's tenant, the cadence
/// and the guarded transport. A cap context holding `None` reaches nothing.
#[derive(Clone, Debug)]
pub struct NetAccess {
    /// The caller's tenant.
    pub tenant: String,
    /// Revocation, rate limit, audit.
    pub cadence: Arc<Cadence>,
    /// The floor and the transport.
    pub client: Arc<HttpClient>,
    /// The largest HTTP body read.
    pub max_body: usize,
    /// The wall-clock budget of one fetch.
    pub timeout: std::time::Duration,
    /// The grant's network scope, judged as it is at each call; `None` is
    /// unscoped (the floor alone judges).
    pub scope: Option<Arc<dyn NetScope>>,
    /// The tenant's tokens the host adds to requests their bindings name
    /// (`None`: none, as in a child process, which holds no keyring).
    pub bindings: Option<Arc<dyn SecretBindings>>,
}

impl NetAccess {
    /// The engine's limits for one fetch: its body cap and time budget.
    pub fn limits(&self) -> HttpLimits {
        HttpLimits {
            max_body: self.max_body,
            deadline: self.timeout,
            max_redirects: crate::limits::NET_MAX_REDIRECTS,
            shared: None,
        }
    }

    /// Fetches `req` for `broker` under the cadence and `limits`; a floor
    /// denial is audited with the URL's host.
    pub async fn fetch(
        &self,
        broker: &'static str,
        req: HttpRequest,
        limits: &HttpLimits,
    ) -> Result<HttpResponse, EgressFailure> {
        let host = url::Url::parse(&req.url)
            .ok()
            .and_then(|u| u.host_str().map(str::to_string))
            .unwrap_or_default();
        let scope = self.scope.as_deref();
        let bindings = self.bindings.as_deref();
        self.guarded(
            broker,
            &host,
            self.client.fetch_within(req, limits, scope, bindings),
        )
        .await
    }

    /// Judges `scheme://host:port` against the scope, before the floor
    /// (a refusal inside [`NetAccess::guarded`] is audited there).
    pub fn in_scope(&self, scheme: &str, host: &str, port: u16) -> Result<(), NetDenial> {
        match &self.scope {
            Some(scope) => scope.judge(
                scheme,
                host,
                port,
                &format_args!("{scheme}://{host}:{port}"),
            ),
            None => Ok(()),
        }
    }

    /// Runs `op` for `broker` under the cadence: revocation and rate limit
    /// first, then the operation, whose floor denials are audited with
    /// `detail` (a host, never a payload).
    pub async fn guarded<T>(
        &self,
        broker: &'static str,
        detail: &str,
        op: impl Future<Output = Result<T, HttpError>>,
    ) -> Result<T, EgressFailure> {
        self.cadence
            .admit(&self.tenant, broker)
            .map_err(EgressFailure::Denied)?;
        op.await.map_err(|e| {
            if let HttpError::Denied(d) = &e {
                self.cadence
                    .deny(&self.tenant, broker, Denial::Guard(d.reason()), detail);
            }
            EgressFailure::Failed(e)
        })
    }
}

/// A network call that did not complete.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EgressFailure {
    /// Revoked or rate limited.
    #[error("{}", .0.reason())]
    Denied(Denial),
    /// The operation failed (a floor denial among them).
    #[error(transparent)]
    Failed(#[from] HttpError),
}
