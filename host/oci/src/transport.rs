//! The protocol client for one operation: `oci-client` behind the gate,
//! with the operator's trust roots and credentials, and its errors named.
//!
//! TLS: the platform's roots (on Linux the system store, which honours the
//! conventional `SSL_CERT_FILE` and `SSL_CERT_DIR`) plus the operator's
//! extra roots (`WB_TLS_CA_FILE`), read when a session first connects, so
//! a pull the store already holds reads no file. Plain HTTP only to a
//! loopback registry.

use crate::gate::Gate;
use crate::limits::{OCI_CONNECT_TIMEOUT, OCI_TIMEOUT};
use crate::{Credentials, OciError, OciRef};
use oci_client::client::{Certificate, CertificateEncoding, ClientConfig, ClientProtocol};
use oci_client::errors::{OciDistributionError, OciErrorCode};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, RegistryOperation};
use std::path::PathBuf;
use workbooks::NetGuard;

/// How this engine reaches registries: its floor, its trust roots, the
/// operator's credentials.
#[derive(Debug, Clone)]
pub struct Transport {
    guard: NetGuard,
    roots: Roots,
    credentials: Credentials,
    progress: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    budget: std::time::Duration,
}

/// The extra roots a transport trusts besides the platform's.
#[derive(Debug, Clone)]
enum Roots {
    /// Given as DER.
    Der(Vec<Vec<u8>>),
    /// A PEM file, read by each session that connects.
    File(PathBuf),
    /// An engine's ([`workbooks::Engine::tls_roots`]): its file is read
    /// by the first connection that needs it.
    Engine(workbooks::Engine),
}

impl Roots {
    /// The roots as DER, or why the file holding them is unusable.
    fn der(&self) -> Result<Vec<Vec<u8>>, OciError> {
        match self {
            Roots::Der(der) => Ok(der.clone()),
            Roots::File(path) => {
                workbooks::egress::pem_roots_file(path).map_err(OciError::TlsRoots)
            }
            Roots::Engine(engine) => engine
                .tls_roots()
                .map(<[Vec<u8>]>::to_vec)
                .map_err(|e| OciError::TlsRoots(e.to_string())),
        }
    }
}

/// One operation's client, gate and credentials, and the instant it must
/// be done by.
pub(crate) struct Session {
    pub client: Client,
    pub gate: Gate,
    pub auth: RegistryAuth,
    pub registry: String,
    deadline: tokio::time::Instant,
    budget: std::time::Duration,
}

impl Transport {
    /// Judging with `guard`, trusting `extra_roots` (DER) besides the
    /// platform's, presenting `credentials`.
    pub fn new(guard: NetGuard, extra_roots: Vec<Vec<u8>>, credentials: Credentials) -> Self {
        Self::trusting(guard, Roots::Der(extra_roots), credentials)
    }

    fn trusting(guard: NetGuard, roots: Roots, credentials: Credentials) -> Self {
        Transport {
            guard,
            roots,
            credentials,
            progress: None,
            budget: OCI_TIMEOUT,
        }
    }

    /// This transport, giving each push or pull `budget` of wall-clock
    /// time in all (default [`OCI_TIMEOUT`]), every protocol step of it
    /// included.
    pub fn with_budget(mut self, budget: std::time::Duration) -> Self {
        self.budget = budget;
        self
    }

    /// This transport, trusting the certificates of the PEM file at `path`
    /// besides the platform's (in place of any given), read by each
    /// session before it connects (capped as every configuration file
    /// is); an unusable file is an [`OciError::TlsRoots`] naming it.
    pub fn with_roots_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.roots = Roots::File(path.into());
        self
    }

    /// This transport, adding every byte its sessions read from a
    /// registry to `progress` (how the CLI shows bytes and rate).
    pub fn with_progress(mut self, progress: std::sync::Arc<std::sync::atomic::AtomicU64>) -> Self {
        self.progress = Some(progress);
        self
    }

    /// As `engine` reaches the operator's endpoints: its floor with the
    /// operator's exceptions (never the guests'), and its TLS roots (an
    /// unusable roots file is an [`OciError::TlsRoots`] naming it, when a
    /// session first connects).
    pub fn of_engine(engine: &workbooks::Engine, credentials: Credentials) -> Self {
        let guard = engine.operator_http().guard().clone();
        Self::trusting(guard, Roots::Engine(engine.clone()), credentials)
    }

    /// A session with `r`'s registry, reading at most `budget` bytes.
    pub(crate) async fn session(
        &self,
        r: &OciRef,
        budget: u64,
        op: RegistryOperation,
    ) -> Result<Session, OciError> {
        // One deadline for the whole operation: a registry that answers
        // each step just in time must not stretch a pull to many budgets.
        let deadline = tokio::time::Instant::now() + self.budget;
        let roots = self.roots.der()?;
        // reqwest is built without a default crypto provider; this process
        // uses ring's, as the engine's own TLS does.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let gate = Gate::open_counted(self.guard.clone(), budget, self.progress.clone())
            .await
            .map_err(|e| OciError::io("the egress gate", e))?;
        let protocol = if r.is_loopback() {
            ClientProtocol::HttpsExcept(vec![r.registry().to_string()])
        } else {
            ClientProtocol::Https
        };
        let config = ClientConfig {
            protocol,
            extra_root_certificates: roots
                .into_iter()
                .map(|data| Certificate {
                    encoding: CertificateEncoding::Der,
                    data,
                })
                .collect(),
            platform_resolver: None,
            connect_timeout: Some(OCI_CONNECT_TIMEOUT),
            read_timeout: Some(OCI_CONNECT_TIMEOUT),
            https_proxy: Some(gate.url()),
            http_proxy: Some(gate.url()),
            no_proxy: None,
            user_agent: concat!("workbooks/", env!("CARGO_PKG_VERSION")),
            ..ClientConfig::default()
        };
        // `Client::new` falls back to a default client, with no proxy and
        // so no floor, when the configuration does not build (a bad extra
        // root): that fallback must never be taken.
        let client = Client::try_from(config).map_err(|e| OciError::Registry {
            registry: r.registry().to_string(),
            why: format!("the registry client cannot be built: {}", error_chain(&e)),
        })?;
        let session = Session {
            client,
            gate,
            auth: self.credentials.for_registry(r.registry()),
            registry: r.registry().to_string(),
            deadline,
            budget: self.budget,
        };
        session
            .bounded(session.client.auth(&r.inner, &session.auth, op))
            .await?;
        Ok(session)
    }
}

impl Session {
    /// Runs one protocol step within what is left of the operation's
    /// time budget, naming its failure.
    pub(crate) async fn bounded<T>(
        &self,
        step: impl Future<Output = Result<T, OciDistributionError>>,
    ) -> Result<T, OciError> {
        self.in_time(async { step.await.map_err(|e| self.named(e)) })
            .await
    }

    /// `work` within what is left of the operation's time budget.
    pub(crate) async fn in_time<T>(
        &self,
        work: impl Future<Output = Result<T, OciError>>,
    ) -> Result<T, OciError> {
        tokio::time::timeout_at(self.deadline, work)
            .await
            .map_err(|_| OciError::Timeout {
                registry: self.registry.clone(),
                secs: self.budget.as_secs_f64().ceil() as u64,
            })?
    }

    /// The operator's name for a protocol failure: what the gate refused
    /// first, then what the registry answered.
    pub(crate) fn named(&self, e: OciDistributionError) -> OciError {
        let registry = self.registry.clone();
        if let Some(r) = self.gate.take_refusal() {
            let hint = match (r.openable, r.loopback) {
                (true, true) => {
                    "; a registry on this machine needs WB_OPERATOR_ALLOW=127.0.0.1/32 (and ::1/128 for localhost, which resolves to both)"
                }
                (true, false) => "; open the address with WB_OPERATOR_ALLOW if it is meant",
                _ => "",
            };
            return OciError::Floor {
                host: r.target,
                why: r.why,
                hint: hint.to_string(),
            };
        }
        if self.gate.exhausted() {
            return OciError::TooLarge {
                what: format!("what {registry} sent for one operation"),
                limit: self.gate.budget(),
            };
        }
        let unauthorized = || OciError::Unauthorized {
            registry: registry.clone(),
            hint: " (credentials: --username with --password-stdin, WB_OCI_USERNAME/WB_OCI_PASSWORD, or ~/.docker/config.json)",
        };
        match e {
            OciDistributionError::UnauthorizedError { .. }
            | OciDistributionError::AuthenticationFailure(_)
            | OciDistributionError::ServerError { code: 401, .. } => unauthorized(),
            OciDistributionError::ServerError { code: 403, .. } => OciError::Denied { registry },
            OciDistributionError::ServerError { code: 404, url, .. } => {
                OciError::NotFound { reference: url }
            }
            OciDistributionError::ImageManifestNotFoundError(reference) => {
                OciError::NotFound { reference }
            }
            OciDistributionError::RegistryError { envelope, url } => {
                let code = envelope.errors.first().map(|e| &e.code);
                match code {
                    Some(OciErrorCode::Unauthorized) => unauthorized(),
                    Some(OciErrorCode::Denied) => OciError::Denied { registry },
                    Some(
                        OciErrorCode::ManifestUnknown
                        | OciErrorCode::NameUnknown
                        | OciErrorCode::NotFound
                        | OciErrorCode::BlobUnknown,
                    ) => OciError::NotFound { reference: url },
                    _ => OciError::Registry {
                        registry,
                        why: envelope.to_string(),
                    },
                }
            }
            OciDistributionError::DigestError(
                oci_client::errors::DigestError::VerificationError { expected, actual },
            ) => OciError::DigestMismatch {
                what: format!("bytes from {registry}"),
                expected,
                got: actual,
            },
            OciDistributionError::RequestError(e)
                if e.status().is_some_and(|c| c.as_u16() == 401) =>
            {
                unauthorized()
            }
            OciDistributionError::RequestError(e)
                if e.status().is_some_and(|c| c.as_u16() == 403) =>
            {
                OciError::Denied { registry }
            }
            OciDistributionError::RequestError(e)
                if e.status().is_some_and(|c| c.as_u16() == 404) =>
            {
                OciError::NotFound {
                    reference: e.url().map_or_else(String::new, |u| u.to_string()),
                }
            }
            OciDistributionError::IoError(io) => {
                match io
                    .get_ref()
                    .and_then(|inner| inner.downcast_ref::<oci_client::errors::DigestError>())
                {
                    Some(oci_client::errors::DigestError::VerificationError {
                        expected,
                        actual,
                    }) => OciError::DigestMismatch {
                        what: format!("bytes from {registry}"),
                        expected: expected.clone(),
                        got: actual.clone(),
                    },
                    _ => OciError::Registry {
                        registry,
                        why: error_chain(&io),
                    },
                }
            }
            OciDistributionError::RequestError(e) if e.is_connect() || e.is_timeout() => {
                OciError::Unreachable {
                    registry,
                    why: error_chain(&e),
                }
            }
            other => OciError::Registry {
                registry,
                why: error_chain(&other),
            },
        }
    }
}

/// An error and its sources, joined.
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
