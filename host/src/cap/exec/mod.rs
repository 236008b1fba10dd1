//! `exec`: spawn, wait for and kill registered commands.
//!
//! Interface: `workbooks:engine/exec@0.1.0`, served here in the host. Each
//! spawned command runs as a task under the same deny ladder and envelope
//! as `run-command`. Invariant: a principal holds at most
//! [`crate::commands::MAX_LIVE_PROCESSES_PER_PRINCIPAL`] processes that
//! have not been awaited, killed or dropped (the fork-bomb guard), and a
//! dropped process handle kills its command.

mod host;

use crate::bindings::workbooks::engine::exec;
use crate::commands::broker::Slot;
use crate::commands::{CommandEnv, CommandError, CommandOutput};
use crate::engine::Engine;
use wasmtime::component::{HasData, Linker, ResourceTable};

/// A spawned command.
pub struct Process {
    task: Option<tokio::task::JoinHandle<Result<CommandOutput, CommandError>>>,
    _live: Slot,
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Some(task) = &self.task {
            task.abort();
        }
    }
}

/// Who this store's processes run as; the default reaches nothing.
#[derive(Debug, Default)]
pub(crate) struct ExecCtx {
    pub(crate) runner: Option<(Engine, CommandEnv)>,
}

/// The exec context borrowed with the store's resource table.
pub(crate) struct ExecView<'a> {
    pub(crate) ctx: &'a mut ExecCtx,
    pub(crate) table: &'a mut ResourceTable,
}

struct HasExec;

impl HasData for HasExec {
    type Data<'a> = ExecView<'a>;
}

/// Links `exec`.
pub(crate) fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> ExecView<'_>,
) -> wasmtime::Result<()> {
    exec::add_to_linker::<T, HasExec>(linker, get)
}
