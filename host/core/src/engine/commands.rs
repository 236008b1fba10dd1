//! The engine's commands, as a handle: [`Engine::commands`] runs a line
//! through the in-sandbox shell, one command by name (as the host, or for
//! a caller's cap through the deny ladder), a command fanned over many
//! inputs at a tier, a plugin in a child, and the two halves a tier that
//! sends tasks to another engine needs (admit here, run what was sent
//! there). Each method is written beside its concern in this folder
//! (`shell.rs`, `launch.rs`, `fan.rs`, `remote.rs`, `plugin_child.rs`);
//! this file only makes the handle.
//!
//! Invariant: a handle borrows its engine and holds nothing else, so it is
//! as cheap as a reference, and its futures borrow only the engine.
//!
//! ```no_run
//! # async fn f(engine: workbooks::Engine) -> Result<(), workbooks::LineError> {
//! let outcome = engine
//!     .commands()
//!     .run_line("echo hi | upper", workbooks::LineOptions::default())
//!     .await?;
//! # let _ = outcome; Ok(()) }
//! ```

use super::Engine;

/// The engine's commands: what [`Engine::commands`] returns.
#[derive(Clone, Copy)]
pub struct Commands<'e> {
    pub(crate) engine: &'e Engine,
}

impl Engine {
    /// The engine's commands: lines, commands by name, fan-outs, plugins
    /// in a child, and the remote tier's two halves.
    pub fn commands(&self) -> Commands<'_> {
        Commands { engine: self }
    }
}
