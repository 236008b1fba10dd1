//! `oci://HOST[:PORT]/REPO[:TAG|@sha256:HEX]`: a reference that names its
//! registry. There is no default registry: a name without a host is an
//! error, not a pull from Docker Hub.

use crate::OciError;
use oci_client::Reference;

/// A parsed `oci://` reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OciRef {
    pub(crate) inner: Reference,
}

impl OciRef {
    /// Parses `oci://HOST[:PORT]/REPO[:TAG|@sha256:…]` (the scheme may be
    /// left out). A reference without tag or digest means `:latest`.
    ///
    /// The grammar is the distribution spec's, checked here rather than by
    /// `oci-client`'s parser: that one compiles a large regex on first use,
    /// about 35 ms at every process start, which `wbx exec oci://…@sha256:…`
    /// would pay on each run for a check of a few characters.
    pub fn parse(text: &str) -> Result<OciRef, OciError> {
        let bad = |why: &str| OciError::BadReference {
            reference: text.to_string(),
            why: why.to_string(),
        };
        let rest = text.strip_prefix(crate::SCHEME).unwrap_or(text);
        let (rest, digest) = match rest.rsplit_once('@') {
            Some((r, d)) if crate::artifact::is_sha256_digest(d) => (r, Some(d)),
            Some(_) => return Err(bad("a digest is sha256: and 64 lowercase hex digits")),
            None => (rest, None),
        };
        let (host, path) = rest
            .split_once('/')
            .ok_or_else(|| bad("expected oci://HOST[:PORT]/REPO[:TAG|@sha256:…]"))?;
        if !is_host(host) {
            return Err(bad(
                "the first segment must be the registry's host (with a dot or a port, or localhost)",
            ));
        }
        let (repository, tag) = match path.rsplit_once(':') {
            Some((repo, tag)) if !tag.contains('/') => (repo, Some(tag)),
            _ => (path, None),
        };
        if repository.len() > MAX_NAME || !repository.split('/').all(is_path_component) {
            return Err(bad(
                "a repository is lowercase path components ([a-z0-9] joined by . _ __ or -)",
            ));
        }
        if let Some(tag) = tag
            && !is_tag(tag)
        {
            return Err(bad("a tag is [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}"));
        }
        let (registry, repository) = (host.to_string(), repository.to_string());
        let inner = match (tag, digest) {
            (Some(t), Some(d)) => {
                Reference::with_tag_and_digest(registry, repository, t.into(), d.into())
            }
            (None, Some(d)) => Reference::with_digest(registry, repository, d.into()),
            (t, None) => Reference::with_tag(registry, repository, t.unwrap_or("latest").into()),
        };
        Ok(OciRef { inner })
    }

    /// The same repository at `digest`.
    pub fn at_digest(&self, digest: &str) -> OciRef {
        OciRef {
            inner: Reference::with_digest(
                self.registry().to_string(),
                self.repository().to_string(),
                digest.to_string(),
            ),
        }
    }

    /// The same repository at `tag`.
    pub fn at_tag(&self, tag: &str) -> OciRef {
        OciRef {
            inner: Reference::with_tag(
                self.registry().to_string(),
                self.repository().to_string(),
                tag.to_string(),
            ),
        }
    }

    /// `HOST[:PORT]`.
    pub fn registry(&self) -> &str {
        self.inner.registry()
    }

    /// The repository path.
    pub fn repository(&self) -> &str {
        self.inner.repository()
    }

    /// The tag, if one was given.
    pub fn tag(&self) -> Option<&str> {
        self.inner.tag()
    }

    /// The digest, if one was given.
    pub fn digest(&self) -> Option<&str> {
        self.inner.digest()
    }

    /// The host without its port (brackets kept off an IPv6 address).
    pub fn host(&self) -> &str {
        let reg = self.registry();
        if let Some(v6) = reg.strip_prefix('[') {
            return v6.split(']').next().unwrap_or(v6);
        }
        reg.rsplit_once(':').map_or(reg, |(h, _)| h)
    }

    /// Whether the registry is this machine (`localhost` or a loopback
    /// address): the only registries spoken to in plain HTTP.
    pub fn is_loopback(&self) -> bool {
        let host = self.host();
        host.eq_ignore_ascii_case("localhost")
            || host
                .parse::<std::net::IpAddr>()
                .is_ok_and(|ip| ip.is_loopback())
    }
}

/// The longest repository name a registry takes.
const MAX_NAME: usize = 255;

/// `localhost[:port]`, `[v6]:port`, or a name with a dot or a port.
fn is_host(host: &str) -> bool {
    let (name, port) = match host.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((addr, rest)) => {
                return addr.parse::<std::net::Ipv6Addr>().is_ok()
                    && (rest.is_empty() || rest.strip_prefix(':').is_some_and(is_port));
            }
            None => return false,
        },
        None => match host.rsplit_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (host, None),
        },
    };
    let labels_ok = !name.is_empty()
        && name.split('.').all(|l| {
            !l.is_empty()
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        });
    labels_ok
        && port.is_none_or(is_port)
        && (name == "localhost" || name.contains('.') || port.is_some())
}

fn is_port(p: &str) -> bool {
    !p.is_empty() && p.len() <= 5 && p.parse::<u16>().is_ok()
}

/// `[a-z0-9]+` runs joined by `.`, `_`, `__` or dashes.
fn is_path_component(c: &str) -> bool {
    let b = c.as_bytes();
    let alnum = |x: u8| x.is_ascii_lowercase() || x.is_ascii_digit();
    if b.is_empty() || !alnum(b[0]) || !alnum(b[b.len() - 1]) {
        return false;
    }
    let mut sep = String::new();
    for &x in b {
        if alnum(x) {
            if !(sep.is_empty()
                || sep == "."
                || sep == "_"
                || sep == "__"
                || sep.bytes().all(|s| s == b'-'))
            {
                return false;
            }
            sep.clear();
        } else if matches!(x, b'.' | b'_' | b'-') {
            sep.push(x as char);
        } else {
            return false;
        }
    }
    true
}

/// `[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}`.
fn is_tag(t: &str) -> bool {
    let word = |x: u8| x.is_ascii_alphanumeric() || x == b'_';
    !t.is_empty()
        && t.len() <= 128
        && word(t.as_bytes()[0])
        && t.bytes().all(|x| word(x) || x == b'.' || x == b'-')
}

impl std::fmt::Display for OciRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", crate::SCHEME, self.inner.whole())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reference_names_host_repository_and_tag() {
        let r = OciRef::parse("oci://127.0.0.1:5000/tools/hello:v1").unwrap();
        assert_eq!(r.registry(), "127.0.0.1:5000");
        assert_eq!(r.host(), "127.0.0.1");
        assert_eq!(r.repository(), "tools/hello");
        assert_eq!(r.tag(), Some("v1"));
        assert!(r.is_loopback());
        assert_eq!(r.to_string(), "oci://127.0.0.1:5000/tools/hello:v1");
    }

    #[test]
    fn a_reference_without_a_host_is_refused_not_sent_to_docker_hub() {
        for text in [
            "oci://library/hello:1",
            "oci://hello",
            "oci:///x",
            "oci://ghcr.io/",
        ] {
            assert!(
                matches!(OciRef::parse(text), Err(OciError::BadReference { .. })),
                "{text}"
            );
        }
    }

    #[test]
    fn the_grammar_is_the_distribution_specs() {
        for ok in [
            "oci://localhost/a",
            "oci://localhost:5000/a/b-c/d__e:v1.0-rc_1",
            "oci://[::1]:5000/x:1",
            "oci://ghcr.io/owner/repo.name",
            "ghcr.io/o/x:latest",
        ] {
            assert!(OciRef::parse(ok).is_ok(), "{ok}");
        }
        for bad in [
            "oci://ghcr.io/Owner/x",
            "oci://ghcr.io/o/x:",
            "oci://ghcr.io/o/x:-tag",
            "oci://ghcr.io/o//x",
            "oci://ghcr.io/o/x.",
            "oci://ghcr.io/o/x_-y",
            "oci://gh cr.io/o/x",
            "oci://ghcr.io:99999/o/x",
            "oci://[::1/x",
            "oci://ghcr.io/o/x@sha256:ABC",
        ] {
            assert!(OciRef::parse(bad).is_err(), "{bad}");
        }
        let r = OciRef::parse("oci://localhost:5000/a").unwrap();
        assert_eq!(r.tag(), Some("latest"));
    }

    #[test]
    fn a_digest_reference_keeps_its_digest() {
        let d = format!("sha256:{}", "a".repeat(64));
        let r = OciRef::parse(&format!("oci://ghcr.io/o/x@{d}")).unwrap();
        assert_eq!(r.digest(), Some(d.as_str()));
        assert!(!r.is_loopback());
        assert!(OciRef::parse("oci://ghcr.io/o/x@sha256:abc").is_err());
    }
}
