//! The TLS client configuration every outbound connection verifies its
//! peer with: the web PKI roots plus the operator's extra roots (DER).
//!
//! Building it copies the root store and sets up the provider, work a
//! command that never connects should not pay at start; so the engine holds
//! a [`LazyTls`], which checks the extra roots at once (a bad one is still
//! an error when the engine is built) and builds the configuration on the
//! first connection.

use std::sync::{Arc, OnceLock};

/// Builds the TLS client configuration: the web PKI roots plus the
/// operator's extra roots (DER).
pub fn tls_config(extra_roots: &[Vec<u8>]) -> Result<Arc<rustls::ClientConfig>, String> {
    let mut roots = rustls::RootCertStore {
        roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
    };
    add_extra(&mut roots, extra_roots)?;
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .map_err(|e| e.to_string())?
    .with_root_certificates(roots)
    .with_no_client_auth();
    Ok(Arc::new(config))
}

fn add_extra(roots: &mut rustls::RootCertStore, extra_roots: &[Vec<u8>]) -> Result<(), String> {
    for der in extra_roots {
        roots
            .add(rustls::pki_types::CertificateDer::from(der.clone()))
            .map_err(|e| format!("bad extra TLS root: {e}"))?;
    }
    Ok(())
}

/// A TLS client configuration built on first use; clones share it.
#[derive(Clone)]
pub(crate) struct LazyTls(Arc<Inner>);

struct Inner {
    extra_roots: Vec<Vec<u8>>,
    built: OnceLock<Arc<rustls::ClientConfig>>,
}

impl LazyTls {
    /// The configuration with `extra_roots`, each checked now.
    pub(crate) fn new(extra_roots: Vec<Vec<u8>>) -> Result<Self, String> {
        add_extra(&mut rustls::RootCertStore::empty(), &extra_roots)?;
        Ok(Self(Arc::new(Inner {
            extra_roots,
            built: OnceLock::new(),
        })))
    }

    /// A configuration already built.
    pub(crate) fn ready(config: Arc<rustls::ClientConfig>) -> Self {
        Self(Arc::new(Inner {
            extra_roots: Vec::new(),
            built: OnceLock::from(config),
        }))
    }

    /// The configuration, built by the first caller.
    pub(crate) fn get(&self) -> &Arc<rustls::ClientConfig> {
        self.0.built.get_or_init(|| {
            tls_config(&self.0.extra_roots)
                .expect("the extra roots were checked when this was made")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_extra_root_is_refused_when_made_not_when_first_used() {
        let err = LazyTls::new(vec![b"not a certificate".to_vec()])
            .err()
            .expect("a bad root was accepted");
        assert!(err.starts_with("bad extra TLS root"), "{err}");
    }

    #[test]
    fn nothing_is_built_until_asked_and_clones_share_what_is() {
        let lazy = LazyTls::new(Vec::new()).expect("no extra roots");
        assert!(lazy.0.built.get().is_none());
        let clone = lazy.clone();
        let first = lazy.get().clone();
        assert!(Arc::ptr_eq(&first, clone.get()));
    }
}
