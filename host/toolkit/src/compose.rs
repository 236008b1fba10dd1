//! Composition: a `.wac` file, read with the WAC language's own parser
//! (`wac-parser`, the grammar of the `wac` CLI), its packages resolved to
//! built components, encoded with wac-graph.
//!
//! Invariants. Only validated components are composed: every package the
//! file names comes from the caller's resolver, which hands out artifacts
//! that passed validation (a registered command's bytes, checked against
//! their sha256 as they are loaded), and the composed result is validated
//! again before anyone may register it. Composing runs no component code:
//! it reads types and encodes a new component. The file and the number of
//! packages it may name are capped ([`COMPOSE_MAX_SOURCE_BYTES`],
//! [`COMPOSE_MAX_PACKAGES`]), and a package the resolver does not know is
//! refused by name, never looked for anywhere else.

use crate::limits::{COMPOSE_MAX_PACKAGES, COMPOSE_MAX_SOURCE_BYTES};
use indexmap::IndexMap;
use miette::Diagnostic;
use wac_graph::EncodeOptions;
use wac_graph::types::BorrowedPackageKey;
use wac_parser::Document;
use workbooks::artifact::Artifact;

/// Why a composition failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ComposeError {
    /// The file is past [`COMPOSE_MAX_SOURCE_BYTES`].
    #[error("compose: {origin} is past the {COMPOSE_MAX_SOURCE_BYTES}-byte cap")]
    TooLarge {
        /// The file.
        origin: String,
    },
    /// Not WAC.
    #[error("compose: {0}")]
    Parse(String),
    /// A package no resolver knows, or one it refused.
    #[error("compose: package `{package}`: {why}")]
    Package {
        /// The package as written.
        package: String,
        /// Why it was not resolved.
        why: String,
    },
    /// More than [`COMPOSE_MAX_PACKAGES`] packages.
    #[error("compose: more than {COMPOSE_MAX_PACKAGES} packages")]
    TooManyPackages,
    /// The packages do not fit together as written.
    #[error("compose: {0}")]
    Resolve(String),
    /// The result is not a valid component.
    #[error("compose: the composed component is not valid: {0}")]
    Invalid(String),
}

/// One package of a composition.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Part {
    /// The package name as written (`toolkit:<id>`).
    pub package: String,
    /// The sha256 of its bytes.
    pub sha256: String,
}

/// A composed, validated component.
#[derive(Debug, Clone)]
pub struct Composition {
    /// The component.
    pub artifact: Artifact,
    /// The packages it was made of, in the order they were named.
    pub parts: Vec<Part>,
}

/// The message of a WAC error, with the line and column it points at.
fn located(source: &str, origin: &str, err: &(impl Diagnostic + std::fmt::Display)) -> String {
    let at = err
        .labels()
        .and_then(|mut l| l.next())
        .map(|label| {
            let before = &source[..label.offset().min(source.len())];
            let line = before.matches('\n').count() + 1;
            let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
            format!("{origin}:{line}:{col}: ")
        })
        .unwrap_or_else(|| format!("{origin}: "));
    let mut msg = format!("{at}{err}");
    let mut cause = std::error::Error::source(err);
    while let Some(c) = cause {
        msg.push_str(&format!(": {c}"));
        cause = c.source();
    }
    msg
}

/// Composes the WAC `source` (named `origin` in errors), asking `resolve`
/// for each package it names.
pub fn compose(
    source: &str,
    origin: &str,
    mut resolve: impl FnMut(&str) -> Result<Artifact, String>,
) -> Result<Composition, ComposeError> {
    if source.len() > COMPOSE_MAX_SOURCE_BYTES {
        return Err(ComposeError::TooLarge {
            origin: origin.to_string(),
        });
    }
    let doc =
        Document::parse(source).map_err(|e| ComposeError::Parse(located(source, origin, &e)))?;
    let mut packages: IndexMap<BorrowedPackageKey<'_>, Vec<u8>> = IndexMap::new();
    let mut parts = Vec::new();
    // Resolve, and on each package not yet known, ask for it and resolve
    // again: the parser names exactly the packages the document uses.
    loop {
        let err = match doc.resolve(packages.clone()) {
            Ok(resolution) => {
                let bytes = resolution
                    .encode(EncodeOptions::default())
                    .map_err(|e| ComposeError::Resolve(located(source, origin, &e)))?;
                let artifact = Artifact::from_bytes(bytes)
                    .map_err(|e| ComposeError::Invalid(e.to_string()))?;
                return Ok(Composition { artifact, parts });
            }
            Err(e) => e,
        };
        let wac_parser::resolution::Error::UnknownPackage { name, span } = &err else {
            return Err(ComposeError::Resolve(located(source, origin, &err)));
        };
        // The key borrows from the source, where the parser read the name.
        let at = span.offset().min(source.len());
        let Some(written) = source[at..].get(..name.len()).filter(|w| w == name) else {
            return Err(ComposeError::Resolve(located(source, origin, &err)));
        };
        if packages.len() >= COMPOSE_MAX_PACKAGES {
            return Err(ComposeError::TooManyPackages);
        }
        if packages.keys().any(|k| k.name == written) {
            // Known, but asked for at a version: versions are not resolved.
            return Err(ComposeError::Package {
                package: name.clone(),
                why: "write the package without a version: built components are not versioned"
                    .into(),
            });
        }
        let artifact = resolve(written).map_err(|why| ComposeError::Package {
            package: name.clone(),
            why,
        })?;
        if artifact.kind() != workbooks::artifact::ArtifactKind::Component {
            return Err(ComposeError::Package {
                package: name.clone(),
                why: "is a core module; only components are composed".into(),
            });
        }
        parts.push(Part {
            package: name.clone(),
            sha256: artifact.sha256_hex(),
        });
        packages.insert(
            BorrowedPackageKey {
                name: written,
                version: None,
            },
            artifact.bytes().to_vec(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty_component() -> Artifact {
        Artifact::from_bytes(wat::parse_str("(component)").unwrap()).unwrap()
    }

    #[test]
    fn a_source_past_the_cap_is_refused_before_it_is_parsed() {
        let big = format!(
            "package toolkit:x;\n{}",
            " ".repeat(COMPOSE_MAX_SOURCE_BYTES)
        );
        let err = compose(&big, "big.wac", |_| Ok(empty_component())).unwrap_err();
        assert!(matches!(err, ComposeError::TooLarge { .. }), "{err}");
    }

    #[test]
    fn a_file_naming_more_packages_than_the_cap_is_refused_at_the_one_past_it() {
        let mut src = String::from("package toolkit:x;\n");
        for i in 0..=COMPOSE_MAX_PACKAGES {
            src.push_str(&format!("let p{i} = new toolkit:p{i} {{}};\n"));
        }
        let mut asked = 0;
        let err = compose(&src, "many.wac", |_| {
            asked += 1;
            Ok(empty_component())
        })
        .unwrap_err();
        assert_eq!(err, ComposeError::TooManyPackages);
        assert_eq!(asked, COMPOSE_MAX_PACKAGES);
    }

    #[test]
    fn a_core_module_is_not_composed() {
        let module = Artifact::from_bytes(wat::parse_str("(module)").unwrap()).unwrap();
        let src = "package toolkit:x;\nlet a = new toolkit:m {};\nexport a...;\n";
        let err = compose(src, "m.wac", |_| Ok(module.clone())).unwrap_err();
        assert!(err.to_string().contains("is a core module"), "{err}");
    }
}
