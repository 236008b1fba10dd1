//! The build lanes: compilers that run in the sandbox, never on the host.
//! Every build goes through the build broker (`guests/builder`, a
//! component docked under `minimal` narrowed to `vfs` and `commands`),
//! which runs the lane as a command through `workbooks:engine/commands`,
//! so the deny ladder and cadence apply, and caps what it takes and gives
//! back. `wat` is a built-in command (the `wat` and `wasmparser` crates);
//! `js` packages a script with the catalog's QuickJS (its pinned bytes
//! only) after that QuickJS compiled it. A lane's refusal is
//! [`BuildError::Lane`] naming the lane; a language with no lane is
//! [`BuildError::LaneUnavailable`].

use super::Toolkit;
use super::build::{BuildError, prebuilt, signed_pin};
use crate::commands::{ArgMode, Entry};
use crate::dock::Lane;
use crate::engine::Engine;
use crate::limits::{BUILD_BROKER_MEMORY, BUILD_TIMEOUT, COMMAND_FUEL, Deadline};
use crate::policy::{Cap, CapSet, Grant};
use crate::state::SessionOptions;

impl Engine {
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
        let script = self.build_in_sandbox("js", script).await?;
        let script = String::from_utf8(script).map_err(|_| BuildError::Lane {
            lane: "js",
            why: "the broker answered a script that is not UTF-8".into(),
        })?;
        let artifact = self.registry().load(&engine)?;
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

    /// Compiles WAT `text` in the sandbox, through the build broker.
    pub(super) async fn wat_lane(&self, text: Vec<u8>) -> Result<Vec<u8>, BuildError> {
        self.build_in_sandbox("wat", text).await
    }

    /// Builds `source` in `lang` (`wat`, `js`) with the build broker:
    /// docked under `minimal` narrowed to `vfs` and `commands`, with fuel,
    /// [`BUILD_TIMEOUT`] and [`BUILD_BROKER_MEMORY`] on, one fresh
    /// instance per build. A language with no lane is
    /// [`BuildError::LaneUnavailable`] naming the compiler it lacks.
    pub async fn build_in_sandbox(
        &self,
        lang: &str,
        source: Vec<u8>,
    ) -> Result<Vec<u8>, BuildError> {
        let label = match lang {
            "wat" => "wat",
            "js" => "js",
            _ => "build",
        };
        let lane = |why: String| BuildError::Lane { lane: label, why };
        let grant = Grant::narrowed("minimal", CapSet::of(&[Cap::Vfs, Cap::Commands]))
            .map_err(|e| lane(e.to_string()))?;
        let docked = self
            .dock_on(&crate::embedded::BUILDER.artifact(), &grant, Lane::Call)
            .map_err(|e| lane(format!("the build broker: {e}")))?;
        let pre = docked
            .component()
            .ok_or_else(|| lane("the build broker is not a component".into()))?;
        let mut session = SessionOptions::new("build", "default");
        session.fuel = Some(COMMAND_FUEL);
        session.memory = Some(BUILD_BROKER_MEMORY);
        let (mut store, _) = self
            .new_store(&grant, &session)
            .map_err(|e| lane(e.to_string()))?;
        store.data_mut().deadline = Deadline::after(BUILD_TIMEOUT);
        let call = async {
            let instance = pre.instantiate_async(&mut store).await?;
            let build = instance
                .get_typed_func::<(&str, &[u8]), (Result<Vec<u8>, String>,)>(&mut store, "build")?;
            let (answer,) = build.call_async(&mut store, (lang, &source)).await?;
            Ok::<_, wasmtime::Error>(answer)
        };
        let answer = tokio::time::timeout(BUILD_TIMEOUT, call)
            .await
            .map_err(|_| lane(format!("timed out after {BUILD_TIMEOUT:?}")))?
            .map_err(|e| lane(format!("the build broker failed: {e:#}")))?;
        answer.map_err(|why| match why.strip_prefix("lane_unavailable: ") {
            Some(what) => BuildError::LaneUnavailable(what.to_string()),
            None => lane(why.strip_prefix("refused: ").unwrap_or(&why).to_string()),
        })
    }
}
