//! The TLS client configuration every outbound connection verifies its
//! peer with: the web PKI roots plus the operator's extra roots (DER).
//!
//! Building it copies the root store and sets up the provider, work a
//! command that never connects should not pay at start; so the engine holds
//! a [`LazyTls`], which parses the extra roots at once (a bad one is still
//! an error when the engine is built) and builds the configuration on the
//! first connection.

use rustls::RootCertStore;
use std::sync::{Arc, OnceLock};

/// Builds the TLS client configuration: the web PKI roots plus the
/// operator's extra roots (DER).
pub fn tls_config(extra_roots: &[Vec<u8>]) -> Result<Arc<rustls::ClientConfig>, String> {
    Ok(config_with(&parse_extra(extra_roots)?))
}

/// The certificates of a PEM file (the operator's `WB_TLS_CA_FILE`) as
/// DER, for the engine's extra roots; sections of other kinds are passed
/// over. A file with no certificate, or a section that is not PEM, is an
/// error saying which.
///
/// ```
/// let none = workbooks::egress::pem_roots(b"not a certificate");
/// assert_eq!(none.unwrap_err(), "no PEM certificate in the file");
/// ```
pub fn pem_roots(pem: &[u8]) -> Result<Vec<Vec<u8>>, String> {
    use rustls::pki_types::CertificateDer;
    use rustls::pki_types::pem::PemObject;
    let roots = CertificateDer::pem_slice_iter(pem)
        .map(|cert| cert.map(|der| der.to_vec()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("a certificate is not PEM: {e}"))?;
    if roots.is_empty() {
        return Err("no PEM certificate in the file".into());
    }
    Ok(roots)
}

/// The extra roots as trust anchors, or why one is not a root.
fn parse_extra(extra_roots: &[Vec<u8>]) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    for der in extra_roots {
        roots
            .add(rustls::pki_types::CertificateDer::from(der.clone()))
            .map_err(|e| format!("bad extra TLS root: {e}"))?;
    }
    Ok(roots)
}

/// The configuration trusting the web PKI roots and `extra`.
fn config_with(extra: &RootCertStore) -> Arc<rustls::ClientConfig> {
    let mut roots = RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    roots.roots.extend(extra.roots.iter().cloned());
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("ring's default provider supports the default protocol versions")
    .with_root_certificates(roots)
    .with_no_client_auth();
    Arc::new(config)
}

/// A TLS client configuration built on first use; clones share it.
#[derive(Clone)]
pub(crate) struct LazyTls(Arc<Inner>);

struct Inner {
    extra: RootCertStore,
    /// The extra roots as given (DER), for clients built elsewhere (the
    /// OCI registry client) that must trust the same ones.
    extra_der: Vec<Vec<u8>>,
    built: OnceLock<Arc<rustls::ClientConfig>>,
}

impl LazyTls {
    /// The configuration with `extra_roots`, each parsed now.
    pub(crate) fn new(extra_roots: &[Vec<u8>]) -> Result<Self, String> {
        Ok(Self(Arc::new(Inner {
            extra: parse_extra(extra_roots)?,
            extra_der: extra_roots.to_vec(),
            built: OnceLock::new(),
        })))
    }

    /// A configuration already built.
    pub(crate) fn ready(config: Arc<rustls::ClientConfig>) -> Self {
        Self(Arc::new(Inner {
            extra: RootCertStore::empty(),
            extra_der: Vec::new(),
            built: OnceLock::from(config),
        }))
    }

    /// The extra roots (DER) as given.
    pub(crate) fn extra_der(&self) -> &[Vec<u8>] {
        &self.0.extra_der
    }

    /// The configuration, built by the first caller.
    pub(crate) fn get(&self) -> &Arc<rustls::ClientConfig> {
        self.0.built.get_or_init(|| config_with(&self.0.extra))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_extra_root_is_refused_when_made_not_when_first_used() {
        let err = LazyTls::new(&[b"not a certificate".to_vec()])
            .err()
            .expect("a bad root was accepted");
        assert!(err.starts_with("bad extra TLS root"), "{err}");
    }

    #[test]
    fn nothing_is_built_until_asked_and_clones_share_what_is() {
        let lazy = LazyTls::new(&[]).expect("no extra roots");
        assert!(lazy.0.built.get().is_none());
        let clone = lazy.clone();
        let first = lazy.get().clone();
        assert!(Arc::ptr_eq(&first, clone.get()));
    }
}
