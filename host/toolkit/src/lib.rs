//! # workbooks-toolkit — toolkits, the catalog, bundles and identity
//!
//! A service over the `workbooks` core: it holds an [`Engine`] and uses
//! only the core's public API; the core names nothing here. It owns the
//! toolkits (below), their build lanes ([`Builds`]) and composition, the
//! catalog of pinned programs ([`catalog`]), `.wbundle` export and restore
//! ([`bundle`]) and the tool catalogue an MCP client or an agent is offered ([`tools`]).
//!
//! Toolkits: a folder under the toolkits root holding `manifest.org` (the
//! index: keywords and a `:toolkit:` node), `skills/*.org` (recipes read on
//! demand) and, for the shapes that run, an artifact registered as a
//! command. This module reads, lists, searches, verifies and signs them;
//! it runs nothing.
//!
//! Invariants. The root is untrusted input ([`discover`]). Verification
//! never widens a grant: a toolkit gets its declared caps ∩ the profile
//! ([`verify`]). A third-party manifest is trusted only with a signature
//! by its `#+AUTHOR_DID` over the canonical manifest, checked from the DID
//! alone. Native execution is banned: a `task` recipe is never run.

#![deny(missing_docs)]

pub mod broker;
pub mod build;
pub mod bundle;
pub mod catalog;
pub mod compose;
pub mod discover;
pub mod import;
mod lanes;
pub mod limits;
pub mod manifest;
pub mod push;
pub mod standing;
pub mod tools;
mod tree;
pub mod verify;

pub use broker::{BUILDER, LaneError, build_in_sandbox};
pub use build::{BuildError, Builds};
pub use discover::{Toolkit, Toolkits, default_root};
pub use manifest::Manifest;
pub use standing::{Standing, Vouch};
pub use verify::{Check, GrantView, Report, verify};

use workbooks::identity::Identity;

/// What `toolkit run` answers: recipes are never run.
pub const RUN_BANNED: &str = "toolkit run: native execution is banned, so task recipes never run; ship the CLI as a wasm command and run it with `wbx command run`";

/// Why a toolkit verb failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolkitError {
    /// No toolkit has that id under the root.
    #[error("no toolkit `{0}` under the toolkits root")]
    Unknown(String),
    /// A skill slug that is not `^[A-Za-z0-9._-]+$` or leaves `skills/`.
    #[error("skill `{0}` is refused: a slug is A-Z a-z 0-9 . _ - and stays inside skills/")]
    BadSkill(String),
    /// The toolkit has no such skill.
    #[error("toolkit `{toolkit}` has no skill `{skill}`")]
    NoSkill {
        /// The toolkit.
        toolkit: String,
        /// The slug.
        skill: String,
    },
    /// The manifest could not be read or written.
    #[error("toolkit `{id}`: {why}")]
    Io {
        /// The toolkit.
        id: String,
        /// Why.
        why: String,
    },
    /// The signing identity.
    #[error(transparent)]
    Identity(#[from] workbooks::identity::IdentityError),
}

/// One line per toolkit: id · status · tagline.
pub fn list_text(kits: &[Toolkit]) -> String {
    if kits.is_empty() {
        return "no toolkits".into();
    }
    kits.iter()
        .map(|t| {
            format!(
                "{:<20} {:<12} {}",
                t.id,
                t.manifest.kw("STATUS").unwrap_or("-"),
                t.tagline()
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A toolkit's manifest summary and skill index.
pub fn show_text(tk: &Toolkit) -> String {
    let m = &tk.manifest;
    let mut out = format!("{} — {}", tk.id, m.kw("TITLE").unwrap_or("(untitled)"));
    for key in [
        "VERSION",
        "STATUS",
        "TAGLINE",
        "EXEC",
        "TRUST",
        "CAPS",
        "CLI_BIN",
        "BUILD_SRC",
    ] {
        let value = if key == "CLI_BIN" {
            m.cli_bin()
        } else {
            m.kw(key)
        };
        if let Some(v) = value {
            out.push_str(&format!("\n{:<10} {v}", key.to_ascii_lowercase()));
        }
    }
    let skills = tk.skills();
    out.push_str(&format!(
        "\nskills     {}",
        if skills.is_empty() {
            "(none)".to_string()
        } else {
            skills.join(" ")
        }
    ));
    out
}

/// Toolkits and skills whose id, title, tagline, skill name or skill text
/// holds `query` (case-insensitive): `<id>` or `<id> <skill>` per line.
pub fn search(kits: &[Toolkit], query: &str) -> Vec<String> {
    let q = query.to_lowercase();
    let mut hits = Vec::new();
    for tk in kits {
        let about = [
            tk.id.as_str(),
            tk.manifest.kw("TITLE").unwrap_or(""),
            tk.tagline(),
        ];
        if about.iter().any(|s| s.to_lowercase().contains(&q)) {
            hits.push(tk.id.clone());
        }
        for skill in tk.skills() {
            let text = tk.skill(&skill).unwrap_or_default();
            if skill.to_lowercase().contains(&q) || text.to_lowercase().contains(&q) {
                hits.push(format!("{} {skill}", tk.id));
            }
        }
    }
    hits
}

/// Signs `tk`'s manifest as `identity`: sets `#+AUTHOR_DID` to its DID
/// and `#+SIGNATURE` to its signature over the canonical manifest, and
/// writes the file. A third-party manifest needs its author's signature;
/// any other is first-party where the operator trusts the signer
/// ([`standing`]).
pub fn sign(tk: &Toolkit, identity: &Identity) -> Result<String, ToolkitError> {
    let io = |why: String| ToolkitError::Io {
        id: tk.id.clone(),
        why,
    };
    let path = tk.dir.join("manifest.org");
    let text = std::fs::read_to_string(&path).map_err(|e| io(e.to_string()))?;
    let is_did_line = |l: &str| {
        l.trim_start()
            .get(..13)
            .is_some_and(|p| p.eq_ignore_ascii_case("#+AUTHOR_DID:"))
    };
    // The new keywords go where the first keyword block ends.
    let kept: Vec<&str> = text
        .lines()
        .filter(|l| !manifest::is_signature_line(l) && !is_did_line(l))
        .collect();
    let at = kept.iter().take_while(|l| l.starts_with("#+")).count();
    let did_line = format!("#+AUTHOR_DID: {}", identity.did);
    let mut unsigned: Vec<&str> = kept.clone();
    unsigned.insert(at, &did_line);
    let unsigned_text = unsigned.join("\n") + "\n";
    let signature = identity.sign(&Manifest::parse(&unsigned_text).signed_bytes())?;
    let sig_line = format!("#+SIGNATURE: {signature}");
    let mut signed = unsigned;
    signed.insert(at + 1, &sig_line);
    let signed_text = signed.join("\n") + "\n";
    workbooks::files::write_atomic(&path, signed_text.as_bytes()).map_err(|e| io(e.to_string()))?;
    Ok(signature)
}

#[cfg(test)]
mod tests;

/// The crate's layering, checked: every top-level module is placed, and
/// each imports only from the modules before it.
#[cfg(test)]
mod layers {
    /// Lowest first.
    const LAYERS: &[&str] = &[
        "limits", "broker", "manifest", "standing", "discover", "tree", "verify", "compose",
        "catalog", "build", "lanes", "import", "push", "bundle", "tools", "tests",
    ];

    #[test]
    fn every_module_is_placed_and_none_imports_from_a_layer_above_it() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let checked = layers::check(&src, LAYERS, &[]).unwrap_or_else(|e| panic!("{e}"));
        assert!(checked >= 15, "checked only {checked} files");
    }
}
