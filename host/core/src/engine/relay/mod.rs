//! The serving side of [`crate::cap::relay`]: a container-tier child's
//! storage, signing and launch calls, answered by its parent from a store
//! built for the child's session exactly as an in-process run of the same
//! command would build it (its tenant, instance id, grant, preopens and
//! one level deeper for the commands it starts).
//!
//! Each call is answered by the same host implementation that serves a
//! guest in process ([`answer`] calls the generated `Host` traits on that
//! store), so a relayed call passes the same cadence, grant check and
//! limits. A call for a cap the command was not granted finds that cap's
//! context deny-all, as an import that was never linked would be.
//! Threat: the child is the untrusted side (a guest that escaped into it
//! speaks this protocol too). It never names a tenant, an instance or a
//! grant, a call past [`RELAY_MAX_CALL_BYTES`] closes the channel before
//! it is read, and a job number it makes up is refused.

pub(crate) mod channel;
#[cfg(test)]
mod tests;

use crate::cap::bindings::workbooks::engine::vfs;
use crate::cap::bindings::workbooks::host::{kv, launch, queue, secrets};
use crate::cap::launch::{Job, LaunchView};
use crate::cap::relay::{Call, RelayError, encode};
use crate::commands::CommandError;
use crate::policy::Cap;
use crate::state::StoreState;
use bytes::Bytes;
use wasmtime::component::Resource;

pub(crate) use crate::limits::RELAY_MAX_CALL_BYTES;

/// A trap of the serving store (a host bug, or a job number that names
/// nothing) as the child reads it.
fn trapped(e: wasmtime::Error) -> RelayError {
    RelayError(format!("refused: {e}"))
}

/// Answers `call` from `state`: the typed result, encoded.
pub(crate) async fn answer(state: &mut StoreState, call: Call) -> Result<Vec<u8>, RelayError> {
    use kv::Host as _;
    let mut view = LaunchView {
        ctx: &mut state.caps.launch,
        table: &mut state.table,
    };
    match call {
        Call::KvGet { key } => encode(&state.caps.kv.get(key)),
        Call::KvPut { key, value } => encode(&state.caps.kv.put(key, value)),
        Call::KvDelete { key } => encode(&state.caps.kv.delete(key)),
        Call::KvContains { key } => encode(&state.caps.kv.contains(key)),
        Call::KvKeys { prefix, limit } => encode(&state.caps.kv.keys(prefix, limit)),
        Call::VfsRead { volume, path } => {
            encode(&vfs::Host::read(&mut state.caps.vfs, volume, path))
        }
        Call::VfsWrite { volume, path, data } => {
            encode(&vfs::Host::write(&mut state.caps.vfs, volume, path, data))
        }
        Call::VfsList { volume, dir } => {
            encode(&vfs::Host::list_dir(&mut state.caps.vfs, volume, dir))
        }
        Call::VfsRemove { volume, path } => {
            encode(&vfs::Host::remove(&mut state.caps.vfs, volume, path))
        }
        Call::VfsStat { volume, path } => {
            encode(&vfs::Host::stat(&mut state.caps.vfs, volume, path))
        }
        Call::QueuePush { name, message } => {
            encode(&queue::Host::push(&mut state.caps.queue, name, message).await)
        }
        Call::QueuePop { name, timeout_ms } => {
            encode(&queue::Host::pop(&mut state.caps.queue, name, timeout_ms).await)
        }
        Call::QueueLen { name } => encode(&queue::Host::len(&mut state.caps.queue, name).await),
        Call::SecretsHmac { name, data } => encode(&secrets::Host::hmac_sha256(
            &mut state.caps.secrets,
            name,
            data,
        )),
        Call::SecretsSign { name, data } => encode(&secrets::Host::ed25519_sign(
            &mut state.caps.secrets,
            name,
            data,
        )),
        Call::SecretsPublic { name } => encode(&secrets::Host::ed25519_public_key(
            &mut state.caps.secrets,
            name,
        )),
        Call::Run { name, argv, stdin } => {
            let ran = launch::Host::run(&mut view, name, argv, stdin).await;
            encode(&ran.map_err(trapped)?)
        }
        Call::Pipeline { stages } => {
            let ran = launch::Host::pipeline(&mut view, stages).await;
            encode(&ran.map_err(trapped)?)
        }
        Call::Start { name, argv, stdin } => {
            let started = launch::Host::start(&mut view, name, argv, stdin).await;
            encode(&started.map_err(trapped)?.map(|job| job.rep()))
        }
        Call::RunMany {
            name,
            inputs,
            width,
        } => {
            let ran = launch::Host::run_many(&mut view, name, inputs, width).await;
            encode(&ran.map_err(trapped)?)
        }
        Call::JobWait { job } => {
            let this = Resource::<Job>::new_own(job);
            let waited = launch::HostJob::wait(&mut view, this).await;
            encode(&waited.map_err(trapped)?)
        }
        Call::JobKill { job } => {
            let this = Resource::<Job>::new_own(job);
            encode(&launch::HostJob::kill(&mut view, this).map_err(trapped)?)
        }
        Call::JobDrop { job } => {
            let this = Resource::<Job>::new_own(job);
            encode(&launch::HostJob::drop(&mut view, this).map_err(trapped)?)
        }
        Call::ModuleExec { name, argv, stdin } => {
            let ran = match state.caps.launch.runner(Cap::Exec) {
                Some((launcher, env)) => {
                    launcher
                        .run(env, Cap::Exec, &name, argv, Bytes::from(stdin))
                        .await
                }
                None => Err(CommandError::Denied),
            };
            encode(&ran.map(|out| (out.exit_code, out.stdout.to_vec(), out.stderr.to_vec())))
        }
    }
}
