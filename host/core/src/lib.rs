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
//!
//! This crate is the runtime alone; it pulls in no CLI, HTTP API, MCP,
//! NATS, libgit2, org or zip reader. The services are crates over it, each
//! holding an [`Engine`] and using only this API: `workbooks-toolkit`
//! (toolkits, build lanes, the catalog, bundles, the tool catalogue),
//! `workbooks-agent` (the agent service, its ledger and HTTP API; it runs
//! its loop component on its own role, an [`Extension`], through
//! [`Engine::call_on`]) and `workbooks-fabric` (fan-outs and the node
//! tier).

#![deny(missing_docs)]

pub mod artifact;
pub mod cadence;
mod cap;
pub mod child;
pub mod commands;
pub mod compiler;
pub mod dock;
pub mod egress;
mod embedded;
pub mod engine;
pub mod environ;
pub mod files;
mod flavor;
pub mod grants;
pub mod identity;
pub mod instance;
pub mod kernel;
#[cfg(test)]
mod layers;
pub mod limits;
pub mod pipes;
pub mod policy;
mod preopen;
mod seal;
pub mod serve;
pub mod state;
pub mod storage;
pub mod tier;
pub use engine::{run, shell};

/// The book's embedding chapter: its Rust examples, compiled and run as
/// doctests (the README has none; the authors' guides hold guest code,
/// checked against the examples' sources by the CLI's docs tests).
#[cfg(doctest)]
#[doc = include_str!("../../../docs/embedding.md")]
pub struct EmbeddingDoctests;

pub use artifact::{Artifact, ArtifactError, ArtifactKind};
pub use cap::llm;
/// The `kv` cap's store of one tenant's keys, and its limits.
pub mod kv {
    pub use crate::cap::kv::storage::{KvError, TenantKv};
    pub use crate::cap::kv::{KV_MAX_KEY_BYTES, KV_MAX_KEYS_PER_TENANT, KV_MAX_VALUE_BYTES};
}
/// The `vfs` cap's volumes of one instance, the paths they take, and
/// their limits.
pub mod vfs {
    pub use crate::cap::vfs::path::normalize as normalize_path;
    pub use crate::cap::vfs::storage::{
        EntryKind, Metadata, VfsError, Volume, VolumeEntry, Volumes,
    };
    pub use crate::cap::vfs::{
        VFS_MAX_DEPTH, VFS_MAX_FILE_BYTES, VFS_MAX_FILES_PER_VOLUME, VFS_MAX_PATH_BYTES,
        VFS_MAX_SEGMENT_BYTES, VFS_MAX_VOLUME_BYTES,
    };
}
pub use cap::llm::{LlmBounds, LlmEndpoint};
pub use cap::secrets::egress::{BindError, Binding, Place};
pub use cap::secrets::keyring::{Keyring, SECRETS_DIR, Secret, SecretKind};
pub use commands::{CommandEnv, CommandError, CommandOutput, CommandPolicy};
pub use compiler::{CompileWatch, Compiler};
pub use dock::{DockError, Docked, Extension, ExtensionLink, Receipt, Role};
pub use egress::{Cidr, NetGuard};
pub use engine::{
    CallFuture, CallOnError, Called, Engine, EngineBuilder, EngineError, Freed, Shipped, WarmError,
    Warmed, build_id, default_home,
};
pub use instance::{InstanceError, InstanceInfo, StartOptions, Supervisor};
pub use pipes::{PipeReader, SessionOutput};
pub use policy::{Cap, CapSet, Grant, PolicyError, Profile, Stub, Stubs};
pub use preopen::PreopenError;
pub use run::{RunError, RunOutput};
pub use seal::default_state_dir;
pub use serve::{ServeError, ServeOptions, Server, TcpServer};
pub use shell::{LineError, LineOptions, LineOutcome, LineStdout, StageReport};
pub use state::{Output, Preopen, SessionError, SessionOptions, Stdin, StoreState};
