//! # workbooks — a plugin host for WebAssembly components
//!
//! Components run under a named capability profile (`compute`, `minimal`,
//! `network`, `posix`). The host links only the imports a profile's cap
//! words derive, so an ungranted capability is absent, not refused: a
//! component that imports it fails to dock with an error naming the cap.
//!
//! ```no_run
//! use workbooks::{Artifact, Engine, Grant, SessionOptions};
//!
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! let engine = Engine::builder().home("/tmp/wb-home").build()?;
//! let artifact = Artifact::from_file("hello.wasm")?;
//! let docked = engine.dock(&artifact, &Grant::profile("compute"))?;
//! let out = engine.run(&docked, SessionOptions::new("hello", "default")).await?;
//! println!("exit {}: {}", out.exit_code, String::from_utf8_lossy(&out.stdout));
//! # Ok(()) }
//! ```
//!
//! An app embedding the engine as its plugin host (load a plugin, grant a
//! profile, call it, read its receipt) is `examples/embed.rs`:
//! `cargo run -p workbooks --example embed -- PLUGIN.wasm`. Long-lived
//! plugins live in a [`Supervisor`] per tenant; [`EngineBuilder`] sets the
//! home, the operator's network allow-list, replacement brokers
//! ([`EngineBuilder::broker`]) and deny brokers ([`EngineBuilder::stub`]).

#![deny(missing_docs)]

pub mod agent;
pub mod artifact;
pub mod bundle;
pub mod cadence;
mod cap;
pub mod catalog;
pub mod commands;
pub mod compiler;
pub mod dock;
pub mod egress;
mod embedded;
pub mod engine;
pub mod environ;
mod files;
pub mod identity;
pub mod instance;
pub mod kernel;
#[cfg(test)]
mod layers;
pub mod ledger;
pub mod limits;
pub mod pipes;
pub mod policy;
mod preopen;
mod seal;
pub mod serve;
pub mod state;
pub mod store;
pub mod tier;
pub use engine::{run, shell};
pub mod toolkit;
pub mod tools;

/// The README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
pub struct ReadmeDoctests;

pub use agent::{AgentError, AgentOptions, AgentRecord, RunStatus, StepObserver};
pub use artifact::{Artifact, ArtifactError, ArtifactKind};
pub use cap::llm::{LlmBounds, LlmEndpoint};
pub use cap::secrets::keyring::{Keyring, SECRETS_DIR, Secret, SecretKind};
pub use commands::{CommandEnv, CommandError, CommandOutput, CommandPolicy};
pub use compiler::Compiler;
pub use dock::{DockError, Docked, Receipt};
pub use egress::{Cidr, NetGuard};
pub use engine::{Engine, EngineBuilder, EngineError, WarmError, Warmed, build_id, default_home};
pub use instance::{InstanceError, InstanceInfo, StartOptions, Supervisor};
pub use pipes::{PipeReader, SessionOutput};
pub use policy::{Cap, CapSet, Grant, PolicyError, Profile, Stub, Stubs};
pub use preopen::PreopenError;
pub use run::{RunError, RunOutput};
pub use seal::default_state_dir;
pub use serve::{ServeError, ServeOptions, Server, TcpServer};
pub use shell::{LineError, LineOptions, LineOutcome, LineStdout, StageReport};
pub use state::{Output, Preopen, SessionError, SessionOptions, Stdin};
pub use tools::{ToolKind, ToolOutcome, ToolSpec};
