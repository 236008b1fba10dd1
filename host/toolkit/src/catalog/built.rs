//! Rows built in the sandbox from a pinned source tarball: the tarball
//! must hash to the row's source pin before anything is unpacked, the
//! tree is unpacked as a stranger's archive ([`Archive::unpack_tree`]),
//! the C lane compiles it ([`super::c_lane`]), and the output must hash to
//! the row's wasm pin before it is registered (clang's output is the same
//! for the same sources and flags, so the pin holds across machines).

use super::c_lane::{CBuild, Units};
use super::{Catalog, CatalogError, Row};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How a row is built from its source tarball.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Build {
    /// The language (`c`).
    pub lang: String,
    /// The sha256 (hex) of the source tarball.
    pub source_sha256: String,
    /// The folder inside the tarball the build sees at `/src`.
    pub root: String,
    /// Flags for every unit.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cflags: Vec<String>,
    /// The units, by flag set.
    pub units: Vec<Units>,
    /// Files written into the root before the build (name → text): the
    /// few functions a libc for WASI lacks, say.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub files: BTreeMap<String, String>,
    /// Libraries linked before `-lc` (`-lsetjmp`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub libs: Vec<String>,
}

impl Catalog {
    /// The wasm built from `row`'s source tarball `fetched`.
    pub(super) async fn built(
        &self,
        row: &Row,
        build: &Build,
        fetched: &[u8],
    ) -> Result<Vec<u8>, CatalogError> {
        let failed = |why: String| CatalogError::Archive {
            name: row.name.clone(),
            why,
        };
        if build.lang != "c" {
            return Err(failed(format!("no lane builds `{}`", build.lang)));
        }
        super::matches_pin(fetched, &build.source_sha256).map_err(|got| {
            CatalogError::Integrity {
                name: format!("{} (its source)", row.name),
                pinned: build.source_sha256.clone(),
                got,
            }
        })?;
        let kind = row
            .archive()
            .map_err(failed)?
            .ok_or_else(|| failed("a built row's URL must be an archive".into()))?;
        let tree = tempfile::tempdir().map_err(|e| failed(e.to_string()))?;
        let files = kind
            .unpack_tree(fetched, &build.root, tree.path())
            .map_err(failed)?;
        if files == 0 {
            return Err(failed(format!("nothing below `{}`", build.root)));
        }
        for (name, text) in &build.files {
            let path = tree.path().join(name);
            if !super::archive::is_file_name(name) || path.exists() {
                return Err(failed(format!("`{name}` is not a new file in the root")));
            }
            std::fs::write(&path, text).map_err(|e| failed(e.to_string()))?;
        }
        let built = self
            .build_c(&CBuild {
                name: row.name.clone(),
                tree: tree.path().to_path_buf(),
                cflags: build.cflags.clone(),
                units: build.units.clone(),
                libs: build.libs.clone(),
            })
            .await
            .map_err(|error| CatalogError::Build {
                name: row.name.clone(),
                error,
            })?;
        tracing::info!(
            "catalog: {} built in the sandbox: {} units in {:.1?}, linked in {:.1?}",
            row.name,
            built.units,
            built.compile,
            built.link
        );
        Ok(built.wasm)
    }
}
