//! The build lanes: compilers that run in the sandbox, never on the host.
//! `wat` is a built-in command (the `wat` and `wasmparser` crates) run
//! under `compute` with no cap; `js` packages a script with the catalog's
//! QuickJS (its pinned bytes only) after that QuickJS compiled it in the
//! sandbox. A lane's refusal is [`BuildError::Lane`] naming the lane.

use super::Toolkit;
use super::build::{BuildError, prebuilt};
use crate::commands::{ArgMode, Entry, Tier};
use crate::engine::Engine;
use crate::policy::CapSet;
use crate::shell::LineOptions;
use crate::state::Stdin;

/// What the `js` lane asks QuickJS to do with a script before packaging
/// it: compile it as a function body, without running it; a syntax error
/// is thrown, so QuickJS exits non-zero naming it.
const JS_SYNTAX_CHECK: &str = "new Function(scriptArgs[0])";

/// Bytes of a script the `js` lane packages: it travels as an argument,
/// under the argv cap, with room for the caller's.
const JS_MAX_SCRIPT_BYTES: usize = crate::limits::MAX_ARGV_BYTES / 2;

impl Engine {
    /// The `js` lane: the toolkit's one `.js` (in `path:<dir>`) packaged
    /// with the catalog's QuickJS as a command that compiles and runs it
    /// (`qjs --std -e <script> ARGS…`). The engine must be the catalog's
    /// own bytes (its sha256 pin); the script is first compiled by that
    /// QuickJS in the sandbox, under `compute` with no cap, so a syntax
    /// error is refused before anything is registered.
    pub(super) async fn js_lane(
        &self,
        tk: &Toolkit,
        bin: &str,
        dir: &str,
    ) -> Result<Entry, BuildError> {
        let script = prebuilt(tk, dir, "js")?;
        if script.len() > JS_MAX_SCRIPT_BYTES {
            return Err(BuildError::Lane {
                lane: "js",
                why: format!("the script is past {JS_MAX_SCRIPT_BYTES} bytes"),
            });
        }
        let script = String::from_utf8(script).map_err(|_| BuildError::Lane {
            lane: "js",
            why: "the script is not UTF-8".into(),
        })?;
        let pin = crate::catalog::rows()
            .into_iter()
            .find(|r| r.name == "qjs")
            .map(|r| r.sha256)
            .unwrap_or_default();
        let engine = self
            .registry()
            .get("qjs")?
            .filter(|e| e.sha256 == pin && e.prefix.is_empty())
            .ok_or_else(|| {
                BuildError::LaneUnavailable(
                    "the js lane runs the catalog's QuickJS, which is not installed (wbx catalog install qjs)"
                        .into(),
                )
            })?;
        // QuickJS is a wasip1 program: it asks for preopens, so it runs
        // under compute's grant (vfs) with none mounted.
        let opts = LineOptions {
            profile: "compute".into(),
            ..LineOptions::default()
        };
        let args = vec![
            "-e".to_string(),
            JS_SYNTAX_CHECK.to_string(),
            script.clone(),
        ];
        let lane = |why: String| BuildError::Lane { lane: "js", why };
        let out = self
            .run_command("qjs", args, opts)
            .await
            .map_err(|e| lane(e.to_string()))?;
        if out.exit_code != 0 {
            return Err(lane(
                String::from_utf8_lossy(&out.stderr).trim().to_string(),
            ));
        }
        let artifact = self.registry().load(&engine)?;
        let tier = match tk.manifest.kw("TRUST") {
            Some("third-party") => Tier::OsProcess,
            _ => Tier::Instance,
        };
        Ok(self.registry().register_with_prefix(
            bin,
            artifact.bytes().to_vec(),
            ArgMode::Argv,
            tier,
            vec!["--std".into(), "-e".into(), script],
        )?)
    }

    /// Compiles WAT `text` in the sandbox: the built-in `wat` command
    /// under `compute`, no cap, the text on its stdin.
    pub(super) async fn wat_lane(&self, text: Vec<u8>) -> Result<Vec<u8>, BuildError> {
        let opts = LineOptions {
            profile: "compute".into(),
            caps: Some(CapSet::EMPTY),
            stdin: Stdin::Bytes(text.into()),
            ..LineOptions::default()
        };
        let out = self
            .run_command("wat", Vec::new(), opts)
            .await
            .map_err(|e| BuildError::Lane {
                lane: "wat",
                why: e.to_string(),
            })?;
        if out.exit_code != 0 {
            let said = String::from_utf8_lossy(&out.stderr);
            return Err(BuildError::Lane {
                lane: "wat",
                why: said.trim().to_string(),
            });
        }
        Ok(out.stdout.to_vec())
    }
}
