//! Warming: compiling every component shipped inside the engine, and
//! those the services ship ([`Shipped`]), into the home's compile cache
//! ahead of time (`wbx warm`), so the first `run`, `call` or `serve` on a
//! machine pays no compile at all.

use super::Engine;
use crate::artifact::{Artifact, ArtifactError};
use crate::dock::DockError;
use crate::engine::shell::LineOptions;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A component a service ships inside its crate, registered with
/// [`EngineBuilder::ships`](crate::EngineBuilder::ships). Its bytes are
/// validated and hashed once per process, by whichever of the service and
/// [`Engine::warm`] asks first.
#[derive(Debug)]
pub struct Shipped {
    name: &'static str,
    bytes: &'static [u8],
    artifact: OnceLock<Result<Artifact, ArtifactError>>,
}

impl Shipped {
    /// The component `name` (as `wbx warm` prints it: `workbooks:agent`)
    /// of `bytes`.
    pub const fn new(name: &'static str, bytes: &'static [u8]) -> Shipped {
        Shipped {
            name,
            bytes,
            artifact: OnceLock::new(),
        }
    }

    /// Its name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Its artifact; an error if the bytes are not a valid one (a broken
    /// build).
    pub fn artifact(&self) -> Result<&Artifact, &ArtifactError> {
        self.artifact
            .get_or_init(|| Artifact::from_bytes(self.bytes))
            .as_ref()
    }
}

/// One step of warming: a shipped component compiled, or found compiled.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Warmed {
    /// The component's name (`jq`, `workbooks:kv-broker`, `shell line`).
    pub name: String,
    /// Whether its compiled form was in the cache already (for the shell
    /// line: whether it compiled nothing new).
    pub cached: bool,
    /// How long the step took.
    #[serde(rename = "ms", serialize_with = "millis")]
    pub took: Duration,
}

fn millis<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// How many entries the compile cache holds on disk, if it has a folder.
fn entries(dir: &std::path::Path) -> Option<usize> {
    Some(std::fs::read_dir(dir).ok()?.count())
}

/// Why warming stopped.
#[derive(Debug, thiserror::Error)]
pub enum WarmError {
    /// A shipped component did not compile (a broken build).
    #[error("warm: compiling {name} failed: {source}")]
    Compile {
        /// The component.
        name: String,
        /// Why.
        source: DockError,
    },
    /// The shell could not run its first line.
    #[error("warm: the shell's first line failed: {0}")]
    Line(String),
}

impl Engine {
    /// How many steps [`Engine::warm`] takes: one per shipped component,
    /// and the shell's first line (its composition with its brokers).
    pub fn warm_steps(&self) -> usize {
        crate::embedded::all().len() + self.inner.shipped.len() + 1
    }

    /// Every component warming compiles: the engine's, then the
    /// services'. A service's that is not a valid artifact fails its step.
    fn warmed(&self) -> Vec<(&'static str, Result<Artifact, DockError>)> {
        let own = crate::embedded::all()
            .into_iter()
            .map(|e| (e.name, Ok(e.artifact())));
        let services = self.inner.shipped.iter().map(|s| {
            let artifact = s.artifact().cloned();
            (s.name, artifact.map_err(|e| DockError::Link(e.to_string())))
        });
        own.chain(services).collect()
    }

    /// Compiles every shipped component into the compile cache, then runs
    /// `true` through the shell so its composition is compiled too; calls
    /// `each` after every step. Steps already cached cost a lookup.
    ///
    /// ```no_run
    /// # async fn warm() -> Result<(), Box<dyn std::error::Error>> {
    /// let engine = workbooks::Engine::builder().build()?;
    /// engine.warm(|step| eprintln!("{} {}", step.name, step.cached)).await?;
    /// # Ok(()) }
    /// ```
    pub async fn warm(&self, mut each: impl FnMut(&Warmed)) -> Result<Vec<Warmed>, WarmError> {
        let mut done = Vec::with_capacity(self.warm_steps());
        for (name, artifact) in self.warmed() {
            let start = Instant::now();
            let failed = |source| WarmError::Compile {
                name: name.to_string(),
                source,
            };
            let artifact = artifact.map_err(failed)?;
            let cached = self.inner.docker.holds_compiled(&artifact.sha256());
            self.precompile(&artifact).map_err(failed)?;
            let step = Warmed {
                name: name.to_string(),
                cached,
                took: start.elapsed(),
            };
            each(&step);
            done.push(step);
        }
        let start = Instant::now();
        let compiled_dir = self.cache_root().join("compiled");
        let before = entries(&compiled_dir);
        let outcome = self
            .commands()
            .run_line("true", LineOptions::default())
            .await
            .map_err(|e| WarmError::Line(e.to_string()))?;
        if outcome.exit != 0 {
            return Err(WarmError::Line(format!("exit {}", outcome.exit)));
        }
        // The line compiles nothing new when the shell's composition was
        // cached already (on a home without a disk cache, it never is).
        let step = Warmed {
            name: "shell line".into(),
            cached: before.is_some() && entries(&compiled_dir) == before,
            took: start.elapsed(),
        };
        each(&step);
        done.push(step);
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shipped_component_is_validated_once_and_bad_bytes_stay_refused() {
        static GOOD: Shipped = Shipped::new("good", b"\0asm\x01\0\0\0");
        static BAD: Shipped = Shipped::new("bad", b"not wasm");
        let first: *const Artifact = GOOD.artifact().unwrap();
        let again: *const Artifact = GOOD.artifact().unwrap();
        assert_eq!(first, again, "validated and hashed once");
        for _ in 0..2 {
            assert!(matches!(BAD.artifact(), Err(ArtifactError::NotWasm)));
        }
    }

    #[tokio::test]
    async fn warming_names_a_shipped_component_that_is_not_wasm() {
        static BAD: Shipped = Shipped::new("acme:broken", b"not wasm");
        let home = tempfile::tempdir().unwrap();
        let engine = crate::Engine::builder()
            .home(home.path())
            .pooling(false)
            .ships(&BAD)
            .build()
            .unwrap();
        let mut named = Vec::new();
        let err = engine
            .warm(|s| named.push(s.name.clone()))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, WarmError::Compile { name, .. } if name == "acme:broken"),
            "{err}"
        );
        assert!(
            !named.is_empty(),
            "the engine's own components warmed first"
        );
    }
}
