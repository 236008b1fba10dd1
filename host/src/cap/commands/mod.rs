//! `commands`: run a registered command by name.
//!
//! Interface: `workbooks:engine/commands@0.1.0`, served here in the host:
//! the deny ladder and the registry are host state. Invariant: the caller
//! names a command and hands structured argv; nothing it passes is ever
//! read as shell text, and the command runs under the grant, preopens and
//! budgets the host fixed for the caller's session, one level deeper in the
//! chain.

mod host;

pub(crate) use host::to_wit_error;

use crate::bindings::workbooks::engine::commands;
use crate::commands::CommandEnv;
use crate::engine::Engine;
use wasmtime::component::{HasSelf, Linker};

/// Who this store's commands run as; the default reaches nothing.
#[derive(Debug, Default)]
pub(crate) struct CommandsCtx {
    pub(crate) runner: Option<(Engine, CommandEnv)>,
}

/// Links `commands`.
pub(crate) fn add_to_linker<T: Send + 'static>(
    linker: &mut Linker<T>,
    get: fn(&mut T) -> &mut CommandsCtx,
) -> wasmtime::Result<()> {
    commands::add_to_linker::<T, HasSelf<CommandsCtx>>(linker, get)
}
