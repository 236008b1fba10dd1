//! Docking a WASI preview 1 core module: the same pre-check and the same
//! single place of linking as components, one import at a time.
//!
//! Every import is classified before anything is instantiated, like a
//! component's: the `wasi_snapshot_preview1` calls that only reach stdio,
//! clocks, randomness, args and the environment are the base; the file
//! system calls (`path_*`, the preopen queries, `fd_readdir`, the
//! `fd_filestat_*` family, ...) need `vfs`, as `wasi:filesystem` does;
//! `sock_*` are base too ([`SOCKET_CALLS`]); `workbooks.exec` and
//! `workbooks.exec_read` need `exec` (they start a command and collect its
//! output, the exec half of the least-privilege split); anything else is refused
//! by name. A module that imports a call its grant does not cover is
//! refused with [`DockError::NotGranted`], naming the cap and the call. On
//! top, `path_symlink` checks a link's target as the component lane does
//! ([`crate::cap::vfs`]): a target that could lead out of the preopen is
//! refused with `perm`.

use super::{DockError, Docked, Guest, ImportReceipt, Need, Receipt, Surface, cached};
use crate::artifact::Artifact;
use crate::artifact::CompileCache;
use crate::cap::launch::module::{self, ModuleLaunch};
use crate::policy::{Cap, CapSet, Grant};
use crate::state::ModuleState;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use wasmparser::{Parser, Payload};
use wasmtime::Linker;

/// The preview 1 module name.
const WASI_P1: &str = "wasi_snapshot_preview1";

/// The entry point of a preview 1 command.
pub(crate) const START: &str = "_start";

/// Preview 1 calls that reach only what every guest has (stdio, clocks,
/// randomness, its args and environment, its own exit).
const BASE_CALLS: &[&str] = &[
    "args_get",
    "args_sizes_get",
    "environ_get",
    "environ_sizes_get",
    "clock_res_get",
    "clock_time_get",
    "fd_close",
    "fd_fdstat_get",
    "fd_fdstat_set_flags",
    "fd_read",
    "fd_write",
    "fd_seek",
    "fd_tell",
    "poll_oneoff",
    "proc_exit",
    "proc_raise",
    "sched_yield",
    "random_get",
];

/// Preview 1 calls that reach the file system (and so the preopens).
const VFS_CALLS: &[&str] = &[
    "fd_advise",
    "fd_allocate",
    "fd_datasync",
    "fd_fdstat_set_rights",
    "fd_filestat_get",
    "fd_filestat_set_size",
    "fd_filestat_set_times",
    "fd_pread",
    "fd_prestat_get",
    "fd_prestat_dir_name",
    "fd_pwrite",
    "fd_readdir",
    "fd_renumber",
    "fd_sync",
    "path_create_directory",
    "path_filestat_get",
    "path_filestat_set_times",
    "path_link",
    "path_open",
    "path_readlink",
    "path_remove_directory",
    "path_rename",
    "path_symlink",
    "path_unlink_file",
];

/// Preview 1 socket calls: base under every profile, as no socket can
/// exist. Preview 1 has no call that opens one, only descriptors the host
/// preopens, and this engine preopens none; so each call only looks its
/// descriptor up and answers as a runtime does, `badf` for one that is not
/// open and `notsock` for any other (wasmtime-wasi's own answers). A
/// network is reached through `wasi:sockets`, under `net`. libc-based
/// toolchains import these whenever a program links socket code (CPython
/// always does), so gating them would refuse calls that can do nothing.
/// wasmtime-wasi logs a warning (target `wasmtime_wasi::p1`) on each
/// call, which a guest can repeat at will: an embedder's subscriber
/// should quiet that target, as the CLI's does.
const SOCKET_CALLS: &[&str] = &["sock_accept", "sock_recv", "sock_send", "sock_shutdown"];

/// What the import `module`.`name` needs (never a host primitive: those
/// are component interfaces).
pub(crate) fn classify(module: &str, name: &str) -> Need {
    match module {
        WASI_P1 if BASE_CALLS.contains(&name) => Need::Base,
        WASI_P1 if VFS_CALLS.contains(&name) => Need::Cap(Cap::Vfs),
        WASI_P1 if SOCKET_CALLS.contains(&name) => Need::Base,
        "workbooks" if matches!(name, "exec" | "exec_read") => Need::Cap(Cap::Exec),
        _ => Need::Unknown,
    }
}

/// The imports (`module.name`) and exports of a core module binary.
pub(crate) fn surface(bytes: &[u8]) -> Result<Surface, String> {
    let (imports, exports) = sections(bytes)?;
    Ok(Surface {
        imports: imports.iter().map(|(m, n)| format!("{m}.{n}")).collect(),
        exports,
        ..Surface::default()
    })
}

/// One import of a core module: (module, name).
type Import = (String, String);

/// The imports and the export names of a core module
/// binary, read from their sections without compiling anything; both come
/// before the code, which is not read.
fn sections(bytes: &[u8]) -> Result<(Vec<Import>, Vec<String>), String> {
    let (mut imports, mut exports) = (Vec::new(), Vec::new());
    for payload in Parser::new(0).parse_all(bytes) {
        match payload.map_err(|e| e.to_string())? {
            Payload::ImportSection(reader) => {
                for import in reader.into_imports() {
                    let import = import.map_err(|e| e.to_string())?;
                    imports.push((import.module.to_string(), import.name.to_string()));
                }
            }
            Payload::ExportSection(reader) => {
                for export in reader {
                    exports.push(export.map_err(|e| e.to_string())?.name.to_string());
                }
            }
            Payload::CodeSectionStart { .. } => break,
            _ => {}
        }
    }
    Ok((imports, exports))
}

/// Refuses any import the grant does not cover, naming it; otherwise
/// returns each import's receipt line. Run on the binary before it is
/// compiled, so a module that can never dock here costs no compile (a
/// browser build's 30 MB interpreter took 30 s to compile, then was
/// refused for its imports).
fn check(imports: &[Import], grant: &Grant) -> Result<Vec<ImportReceipt>, DockError> {
    let mut unknown = Vec::new();
    let mut lines = Vec::new();
    for (module, name) in imports {
        let (module, name) = (module.as_str(), name.as_str());
        let interface = format!("{module}.{name}");
        let need = classify(module, name);
        let missing = match need {
            Need::Base => None,
            Need::Cap(cap) => (!grant.caps.contains(cap)).then_some(cap),
            Need::HostPrimitive | Need::Unknown => {
                unknown.push(interface);
                continue;
            }
        };
        if let Some(cap) = missing {
            return Err(DockError::not_granted(
                cap,
                interface,
                grant.profile.effective,
            ));
        }
        let served_by = if module == WASI_P1 && SOCKET_CALLS.contains(&name) {
            "host (no socket exists: badf or notsock)"
        } else if module == WASI_P1 && name == "path_symlink" {
            "host (targets that climb out refused: perm)"
        } else {
            "host"
        };
        lines.push(ImportReceipt {
            cap: match need {
                Need::Cap(cap) => cap.word().to_string(),
                _ => "base".to_string(),
            },
            name: interface,
            served_by: served_by.to_string(),
        });
    }
    if unknown.is_empty() {
        Ok(lines)
    } else {
        Err(DockError::UnknownImports { names: unknown })
    }
}

/// Builds the core-module linker for a cap set: preview 1, with
/// `path_symlink`'s target checked and `path_open` counted, and the exec
/// calls only under `exec`.
fn link(engine: &wasmtime::Engine, caps: CapSet) -> wasmtime::Result<Linker<ModuleState>> {
    let mut linker: Linker<ModuleState> = Linker::new(engine);
    fn wasi(s: &mut ModuleState) -> &mut wasmtime_wasi::p1::WasiP1Ctx {
        &mut s.wasi
    }
    wasmtime_wasi::p1::add_to_linker_async(&mut linker, wasi)?;
    crate::cap::vfs::guard_preview1(&mut linker, wasi)?;
    fn descriptors(s: &ModuleState) -> std::sync::Arc<crate::cadence::Holding> {
        s.descriptors.clone()
    }
    crate::cap::vfs::count_preview1(&mut linker, wasi, descriptors)?;
    if caps.contains(Cap::Exec) {
        fn launch(s: &mut ModuleState) -> &mut ModuleLaunch {
            &mut s.launch
        }
        linker.func_wrap_async("workbooks", "exec", |caller, (ptr, len): (u32, u32)| {
            Box::new(module::exec(caller, launch, ptr, len))
        })?;
        linker.func_wrap(
            "workbooks",
            "exec_read",
            |caller: wasmtime::Caller<'_, ModuleState>, ptr: u32, len: u32| {
                module::exec_read(caller, launch, ptr, len)
            },
        )?;
    }
    Ok(linker)
}

/// Docked modules by (artifact sha256, grant).
type DockedModules = HashMap<([u8; 32], Grant), Arc<Docked>>;

/// Docked modules, and linkers by cap set.
#[derive(Default)]
pub(crate) struct ModuleDocks {
    linkers: Mutex<HashMap<CapSet, Linker<ModuleState>>>,
    docked: Mutex<DockedModules>,
}

impl ModuleDocks {
    /// Docks the core module `artifact` under `grant`, compiling it
    /// (through `compiled`) only when it is not docked already.
    pub(crate) fn dock(
        &self,
        engines: &crate::flavor::Engines,
        compiled: &CompileCache,
        artifact: &Artifact,
        grant: &Grant,
    ) -> Result<Arc<Docked>, DockError> {
        cached(&self.docked, (artifact.sha256(), grant.clone()), || {
            let (imports, _) = sections(artifact.bytes()).map_err(DockError::Unreadable)?;
            let imports = check(&imports, grant)?;
            let module = compiled
                .module(engines, artifact)
                .map_err(|e| DockError::Compile(format!("{e:#}")))?;
            let linker = cached(&self.linkers, grant.caps, || {
                link(engines.of(crate::flavor::Flavor::Sync), grant.caps)
                    .map_err(|e| DockError::Link(format!("{e:#}")))
            })?;
            let pre = linker
                .instantiate_pre(&module)
                .map_err(|e| DockError::Link(format!("{e:#}")))?;
            // Every import that passed the check is linked by the host:
            // no broker serves the preview 1 lane.
            let receipt = Receipt {
                profile_requested: grant.profile.requested.clone(),
                profile_effective: grant.profile.effective,
                caps: grant.caps,
                linked: imports.iter().map(|i| i.name.clone()).collect(),
                imports,
                brokers: Vec::new(),
                artifact_sha256: artifact.sha256_hex(),
                composed_sha256: None,
                signer: None,
            };
            let exports: Vec<String> = module.exports().map(|e| e.name().to_string()).collect();
            Ok(Arc::new(Docked {
                guest: Guest::Module {
                    pre,
                    command: exports.iter().any(|e| e == START),
                },
                grant: grant.clone(),
                receipt,
                exports,
                flavor: crate::flavor::Flavor::Sync,
                sealed: Default::default(),
            }))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preview1_call_has_exactly_one_class() {
        let all: Vec<&str> = [BASE_CALLS, VFS_CALLS, SOCKET_CALLS].concat();
        let mut unique = all.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), all.len(), "a call is in two classes");
        // The 46 functions of wasi_snapshot_preview1.
        assert_eq!(all.len(), 46);
    }

    #[test]
    fn imports_map_to_the_cap_of_their_preview2_counterpart() {
        assert_eq!(classify(WASI_P1, "fd_write"), Need::Base);
        assert_eq!(classify(WASI_P1, "path_open"), Need::Cap(Cap::Vfs));
        assert_eq!(classify(WASI_P1, "fd_prestat_get"), Need::Cap(Cap::Vfs));
        assert_eq!(classify(WASI_P1, "sock_send"), Need::Base);
        assert_eq!(classify("workbooks", "exec"), Need::Cap(Cap::Exec));
        assert_eq!(classify(WASI_P1, "path_open_evil"), Need::Unknown);
        assert_eq!(classify("env", "system"), Need::Unknown);
    }
}
