//! Shared fixtures: one engine per test binary, artifacts by probe path,
//! and a one-call runner. The core's engine tests and the CLI's share
//! this file (the CLI's `common` includes it); each binary names the
//! child its tiers start as `crate::CHILD`.

use std::path::Path;
use std::sync::OnceLock;
use workbooks::{
    Artifact, DockError, Engine, EngineBuilder, Grant, Profile, RunError, RunOutput, SessionOptions,
};

/// The engine shared by the tests of this binary, homed in a temp dir that
/// lives as long as the process.
pub fn engine() -> &'static Engine {
    static ENGINE: OnceLock<(tempfile::TempDir, Engine)> = OnceLock::new();
    &ENGINE
        .get_or_init(|| {
            let home = tempfile::tempdir().expect("temp home");
            let engine = builder()
                .home(home.path())
                .max_instances(64)
                .build()
                .expect("engine");
            (home, engine)
        })
        .1
}

/// A builder for an engine a test owns, homed in `home`. On-demand
/// allocation: many such engines live at once in this binary, and pools
/// would reserve address space for each.
pub fn own_builder(home: &Path) -> EngineBuilder {
    builder().home(home).pooling(false)
}

/// A builder, once this process's descriptor soft limit is raised as
/// `wbx` raises its own: the tenant cap is a share of it, and the tests
/// run beside each other hold hundreds of descriptors each, which a
/// machine's usual soft 1 024 would not fit.
fn builder() -> EngineBuilder {
    static RAISED: std::sync::Once = std::sync::Once::new();
    RAISED.call_once(|| {
        workbooks::cadence::raise_descriptor_limit();
    });
    Engine::builder()
}

/// An engine a test owns, on the defaults, homed in `home`.
pub fn own_engine(home: &Path) -> Engine {
    own_builder(home).build().expect("engine")
}

/// The artifact of a probe.
pub fn artifact(path: &str) -> Artifact {
    Artifact::from_file(path).expect("probe artifact")
}

/// Why a run did not produce output.
#[derive(Debug)]
pub enum Failure {
    Dock(DockError),
    Run(RunError),
}

impl Failure {
    pub fn dock(self) -> DockError {
        match self {
            Failure::Dock(e) => e,
            Failure::Run(e) => panic!("expected a dock refusal, got run error: {e}"),
        }
    }

    /// The run error, expecting one.
    pub fn run(self) -> RunError {
        match self {
            Failure::Run(e) => e,
            Failure::Dock(e) => panic!("expected a run error, got dock refusal: {e}"),
        }
    }
}

/// Docks `probe` under `grant` and runs it once with `opts`.
pub async fn run_with(
    probe: &str,
    grant: &Grant,
    opts: SessionOptions,
) -> Result<RunOutput, Failure> {
    let e = engine();
    let docked = e.dock(&artifact(probe), grant).map_err(Failure::Dock)?;
    e.run(&docked, opts).await.map_err(Failure::Run)
}

/// Runs `probe` under the full caps of `profile` with `args`.
pub async fn run(probe: &str, profile: Profile, args: &[&str]) -> Result<RunOutput, Failure> {
    let mut opts = SessionOptions::new("probe", "default");
    opts.args = args.iter().map(|a| a.to_string()).collect();
    run_with(probe, &Grant::profile(profile.name()), opts).await
}

/// The numbers 1 to `n`, a line each, as `seq n` prints them.
pub fn seq(n: u64) -> String {
    (1..=n).map(|i| format!("{i}\n")).collect()
}

/// Bytes as text, lossily.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Stdout as text.
pub fn stdout(out: &RunOutput) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Stdout as text, expecting success.
pub fn ok_stdout(result: Result<RunOutput, Failure>) -> String {
    match result {
        Ok(out) => {
            assert_eq!(
                out.exit_code,
                0,
                "stderr: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            stdout(&out)
        }
        Err(Failure::Dock(e)) => panic!("refused: {e}"),
        Err(Failure::Run(e)) => panic!("run failed: {e}"),
    }
}

/// An engine a test owns, homed in a fresh temp dir, with each `(name,
/// probe path)` registered as an in-process command.
pub fn engine_with_commands(commands: &[(&str, &str)]) -> (tempfile::TempDir, Engine) {
    let home = tempfile::tempdir().expect("temp home");
    // With a child binary, so a command may also run at the process tier.
    let e = own_builder(home.path())
        .child_binary(crate::CHILD)
        .build()
        .expect("engine");
    for (name, path) in commands {
        e.registry()
            .register(
                name,
                std::fs::read(path).expect("probe"),
                workbooks::commands::ArgMode::Argv,
                workbooks::commands::Tier::Instance,
            )
            .expect("register");
    }
    (home, e)
}
