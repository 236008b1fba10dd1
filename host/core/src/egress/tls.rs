//! The TLS client configuration every outbound connection verifies its
//! peer with: the web PKI roots plus the operator's extra roots, given as
//! DER or as a PEM file.
//!
//! Building it copies the root store and sets up the provider, work a
//! command that never connects should not pay at start; so the engine holds
//! a [`LazyTls`], which parses roots given as DER at once (a bad one is
//! still an error when the engine is built) and builds the configuration
//! on the first connection.
//!
//! Threat: the operator's roots file (`WB_TLS_CA_FILE`) may be anything,
//! `/dev/zero` included, and a command whose guests never connect must not
//! read it at all. So a file is read (capped at `CONFIG_MAX_FILE_BYTES`,
//! opened without blocking) and parsed only on the first connection that
//! needs TLS. A bad file fails that connection and every later one; the
//! log says once which file and why, and a connection, which may be a
//! guest's, is told neither ([`ROOTS_UNUSABLE`]). What was read is kept:
//! a fixed file is read again by a new process.

use rustls::RootCertStore;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Builds the TLS client configuration: the web PKI roots plus the
/// operator's extra roots (DER).
#[cfg(test)]
pub(crate) fn tls_config(extra_roots: &[Vec<u8>]) -> Result<Arc<rustls::ClientConfig>, String> {
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

/// The certificates of the PEM file at `path` (the operator's
/// `WB_TLS_CA_FILE`) as DER: read without blocking and at most
/// [`CONFIG_MAX_FILE_BYTES`](crate::limits::CONFIG_MAX_FILE_BYTES), or an
/// error naming the file and saying why.
pub fn pem_roots_file(path: &Path) -> Result<Vec<Vec<u8>>, String> {
    crate::files::read_capped(path, crate::limits::CONFIG_MAX_FILE_BYTES)
        .map_err(|e| e.to_string())
        .and_then(|pem| pem_roots(&pem))
        .map_err(|why| format!("the TLS roots file {}: {why}", path.display()))
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

/// What a connection is told when the operator's roots file is unusable:
/// the file's path and its fault are the operator's, and go to the log.
pub(crate) const ROOTS_UNUSABLE: &str =
    "the host's extra TLS roots are unusable (its log says why); no TLS connection is made";

/// Trust anchors and the DER they came from.
#[derive(Clone)]
struct Roots {
    store: RootCertStore,
    der: Vec<Vec<u8>>,
}

/// A TLS client configuration built on first use; clones share it.
#[derive(Clone)]
pub(crate) struct LazyTls(Arc<Inner>);

struct Inner {
    /// The roots given as DER, parsed when this was made.
    given: Roots,
    /// A PEM file of more roots, read on first use.
    file: Option<PathBuf>,
    /// `given` and the file's roots, or why the file is unusable.
    loaded: OnceLock<Result<Roots, String>>,
    built: OnceLock<Arc<rustls::ClientConfig>>,
}

impl LazyTls {
    /// The configuration with `extra_roots`, each parsed now, and the
    /// roots of the PEM file `file`, read on first use.
    pub(crate) fn new(extra_roots: &[Vec<u8>], file: Option<PathBuf>) -> Result<Self, String> {
        Ok(Self(Arc::new(Inner {
            given: Roots {
                store: parse_extra(extra_roots)?,
                der: extra_roots.to_vec(),
            },
            file,
            loaded: OnceLock::new(),
            built: OnceLock::new(),
        })))
    }

    /// A configuration already built.
    pub(crate) fn ready(config: Arc<rustls::ClientConfig>) -> Self {
        let given = Roots {
            store: RootCertStore::empty(),
            der: Vec::new(),
        };
        Self(Arc::new(Inner {
            loaded: OnceLock::from(Ok(given.clone())),
            given,
            file: None,
            built: OnceLock::from(config),
        }))
    }

    /// Every extra root, the file's read by the first caller.
    fn roots(&self) -> Result<&Roots, String> {
        let inner = &self.0;
        let loaded = inner.loaded.get_or_init(|| {
            let Some(path) = &inner.file else {
                return Ok(inner.given.clone());
            };
            let read = pem_roots_file(path).and_then(|der| Ok((parse_extra(&der)?, der)));
            match read {
                Ok((store, der)) => {
                    let mut roots = inner.given.clone();
                    roots.store.roots.extend(store.roots);
                    roots.der.extend(der);
                    Ok(roots)
                }
                Err(why) => {
                    tracing::error!("{why}; every TLS connection fails");
                    Err(why)
                }
            }
        });
        loaded.as_ref().map_err(Clone::clone)
    }

    /// The extra roots (DER): those given and the file's.
    pub(crate) fn extra_der(&self) -> Result<&[Vec<u8>], String> {
        Ok(&self.roots()?.der)
    }

    /// The configuration, built by the first caller.
    pub(crate) fn get(&self) -> Result<&Arc<rustls::ClientConfig>, String> {
        let roots = self.roots()?;
        Ok(self.0.built.get_or_init(|| config_with(&roots.store)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_extra_root_is_refused_when_made_not_when_first_used() {
        let err = LazyTls::new(&[b"not a certificate".to_vec()], None)
            .err()
            .expect("a bad root was accepted");
        assert!(err.starts_with("bad extra TLS root"), "{err}");
    }

    #[test]
    fn nothing_is_built_until_asked_and_clones_share_what_is() {
        let lazy = LazyTls::new(&[], None).expect("no extra roots");
        assert!(lazy.0.built.get().is_none());
        let clone = lazy.clone();
        let first = lazy.get().unwrap().clone();
        assert!(Arc::ptr_eq(&first, clone.get().unwrap()));
    }

    #[test]
    fn a_roots_file_is_not_read_until_a_connection_needs_it_and_then_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("roots.pem");
        let lazy = LazyTls::new(&[], Some(path.clone())).expect("a file not there was read");
        std::fs::write(&path, "no certificate here").unwrap();
        let err = lazy.get().expect_err("a file with no root gave roots");
        let named = format!("the TLS roots file {}: no PEM certificate", path.display());
        assert!(err.starts_with(&named), "{err}");
        // Made endless after the first read: a second read would say so.
        std::fs::write(&path, vec![b'x'; 2 << 20]).unwrap();
        assert_eq!(lazy.extra_der().err(), Some(err));
    }

    #[test]
    fn an_endless_roots_file_fails_with_its_cap_named() {
        let lazy = LazyTls::new(&[], Some("/dev/zero".into())).expect("nothing read yet");
        let first = lazy.get().expect_err("/dev/zero gave roots");
        assert!(
            first.starts_with("the TLS roots file /dev/zero: longer than"),
            "{first}"
        );
    }
}
