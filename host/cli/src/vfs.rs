//! `wbx vfs`: settling volumes written before volumes were scoped by
//! tenant. Such an instance id is refused to every tenant until its old
//! volumes are given to the tenant that owns them or dropped.

use crate::options::engine;
use crate::{exit, fail};
use std::path::PathBuf;

#[derive(Debug, clap::Subcommand)]
pub(crate) enum VfsCommand {
    /// List the instance ids whose volumes predate tenant scoping.
    Legacy,
    /// Give an instance's unscoped volumes to the tenant that owns them.
    Adopt {
        /// The instance id.
        id: String,
        /// The tenant that ran the instance.
        #[arg(long)]
        tenant: String,
    },
    /// Delete an instance's unscoped volumes.
    DropLegacy {
        /// The instance id.
        id: String,
    },
}

pub(crate) fn run(cmd: VfsCommand, home: PathBuf) -> u8 {
    let body = || -> Result<u8, u8> {
        let storage = engine(home)?
            .storage()
            .map_err(|e| fail("storage", e, exit::ENGINE))?;
        let failed = |e: workbooks::storage::StorageError| {
            let code = match e {
                workbooks::storage::StorageError::InvalidName { .. } => exit::USAGE,
                _ => exit::ENGINE,
            };
            fail("vfs", e, code)
        };
        match cmd {
            VfsCommand::Legacy => {
                let json = crate::out::json();
                let ids = storage.legacy_volumes();
                if json {
                    outln!("{}", serde_json::json!({ "legacy": ids }));
                } else if ids.is_empty() {
                    outln!("no unscoped volumes");
                } else {
                    for id in ids {
                        outln!("{id}");
                    }
                }
            }
            VfsCommand::Adopt { id, tenant } => {
                let moved = storage.adopt_legacy(&id, &tenant).map_err(failed)?;
                outln!("gave the volumes of `{id}` ({moved} records) to tenant `{tenant}`");
            }
            VfsCommand::DropLegacy { id } => {
                if storage.drop_legacy(&id).map_err(failed)? {
                    outln!("deleted the unscoped volumes of `{id}`");
                } else {
                    outln!("`{id}` had no unscoped volumes");
                }
            }
        }
        Ok(0)
    };
    body().unwrap_or_else(|code| code)
}
