//! The build lanes: compilers that run in the sandbox, never on the host.
//! Every build goes through the build broker (`guests/builder`, a
//! component docked under `minimal` narrowed to `vfs` and `commands`),
//! which runs the lane as a command through `workbooks:engine/commands`,
//! so the deny ladder and cadence apply, and caps what it takes and gives
//! back ([`crate::broker`]). `wat` is a built-in command (the `wat` and `wasmparser` crates);
//! `js` packages a script with the catalog's QuickJS (its pinned bytes
//! only) after that QuickJS compiled it. `c` compiles and links one C
//! file with the catalog's clang and wasm-ld, each run a command in the
//! sandbox ([`crate::catalog::c_lane`]). A lane's refusal is
//! [`BuildError::Lane`] naming the lane; a language with no lane is
//! [`BuildError::LaneUnavailable`].

use super::Toolkit;
use crate::build::Builds;
use crate::build::{BuildError, prebuilt, signed_pin};
use crate::catalog::{CBuild, CLaneError, Catalog, Units};
use workbooks::commands::{ArgMode, Entry};

impl Builds {
    /// The `js` lane: the toolkit's one `.js` (in `path:<dir>`) packaged
    /// with the catalog's QuickJS as a command that compiles and runs it
    /// (`qjs --std -e <script> ARGS…`). The engine must be the catalog's
    /// own bytes (its sha256 pin); the script is first compiled by that
    /// QuickJS through the build broker, so a syntax error is refused
    /// before anything is registered.
    pub(super) async fn js_lane(
        &self,
        tk: &Toolkit,
        bin: &str,
        dir: &str,
        replace: bool,
    ) -> Result<Entry, BuildError> {
        let script = prebuilt(tk, dir, "js")?;
        signed_pin(tk, dir, &script)?;
        let qjs = crate::catalog::row("qjs");
        let engine = self
            .engine
            .registry()
            .get("qjs")?
            .filter(|e| qjs.is_some_and(|row| row.is_held_by(e)))
            .ok_or_else(|| {
                BuildError::LaneUnavailable(
                    "the js lane runs the catalog's QuickJS, which is not installed (wbx catalog install qjs)"
                        .into(),
                )
            })?;
        // The broker caps the script, checks it is UTF-8 and has QuickJS
        // compile it.
        let script = crate::broker::build_in_sandbox(&self.engine, "js", script).await?;
        let script = String::from_utf8(script).map_err(|_| BuildError::Lane {
            lane: "js",
            why: "the broker answered a script that is not UTF-8".into(),
        })?;
        let artifact = self.engine.registry().load(&engine)?;
        let tier = super::Standing::of(tk).tier();
        self.registered(
            bin,
            artifact.bytes().to_vec(),
            ArgMode::Argv,
            tier,
            vec!["--std".into(), "-e".into(), script],
            replace,
        )
    }

    /// The `c` lane: the toolkit's one `.c` (in `path:<dir>`) compiled
    /// and linked in the sandbox by the catalog's clang and wasm-ld, with
    /// `#+CFLAGS:` and `#+LIBS:` (words); the command it gives.
    pub(super) async fn c_lane(
        &self,
        tk: &Toolkit,
        bin: &str,
        dir: &str,
    ) -> Result<Vec<u8>, BuildError> {
        let catalog = Catalog::new(self.engine.clone());
        catalog.c_lane_ready().map_err(|e| match e {
            CLaneError::Unavailable(what) => BuildError::LaneUnavailable(what),
            other => BuildError::Lane {
                lane: "c",
                why: other.reason(),
            },
        })?;
        let source = prebuilt(tk, dir, "c")?;
        signed_pin(tk, dir, &source)?;
        let failed = |why: String| BuildError::Lane { lane: "c", why };
        let tree = tempfile::tempdir().map_err(|e| failed(e.to_string()))?;
        std::fs::write(tree.path().join("main.c"), &source).map_err(|e| failed(e.to_string()))?;
        let words = |kw: &str| -> Vec<String> {
            tk.manifest
                .kw(kw)
                .map(|v| v.split_whitespace().map(String::from).collect())
                .unwrap_or_default()
        };
        let built = catalog
            .build_c(&CBuild {
                name: bin.to_string(),
                tree: tree.path().to_path_buf(),
                cflags: words("CFLAGS"),
                units: vec![Units {
                    sources: vec!["main.c".into()],
                    cflags: Vec::new(),
                }],
                libs: words("LIBS"),
            })
            .await
            .map_err(|e| match e {
                CLaneError::Unavailable(what) => BuildError::LaneUnavailable(what),
                other => failed(other.reason()),
            })?;
        Ok(built.wasm)
    }
}
