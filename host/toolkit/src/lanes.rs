//! The build lanes: compilers that run in the sandbox, never on the host.
//! Every build goes through the build broker (`guests/builder`, a
//! component docked under `minimal` narrowed to `vfs` and `commands`),
//! which runs the lane as a command through `workbooks:engine/commands`,
//! so the deny ladder and cadence apply, and caps what it takes and gives
//! back (`Engine::build_in_sandbox`). `wat` is a built-in command (the `wat` and `wasmparser` crates);
//! `js` packages a script with the catalog's QuickJS (its pinned bytes
//! only) after that QuickJS compiled it. A lane's refusal is
//! [`BuildError::Lane`] naming the lane; a language with no lane is
//! [`BuildError::LaneUnavailable`].

use super::Toolkit;
use crate::build::Builds;
use crate::build::{BuildError, prebuilt, signed_pin};
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
        let pin = crate::catalog::rows()
            .into_iter()
            .find(|r| r.name == "qjs")
            .map(|r| r.sha256)
            .unwrap_or_default();
        let engine = self
            .engine
            .registry()
            .get("qjs")?
            .filter(|e| e.sha256 == pin && e.prefix.is_empty())
            .ok_or_else(|| {
                BuildError::LaneUnavailable(
                    "the js lane runs the catalog's QuickJS, which is not installed (wbx catalog install qjs)"
                        .into(),
                )
            })?;
        // The broker caps the script, checks it is UTF-8 and has QuickJS
        // compile it.
        let script = self.engine.build_in_sandbox("js", script).await?;
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
}
