//! The serving side of [`crate::cap::relay`]: a container-tier child's
//! storage, signing and launch calls, answered by its parent from a store
//! built for the child's session exactly as an in-process run of the same
//! command would build it (its tenant, instance id, grant, preopens and
//! one level deeper for the commands it starts).
//!
//! Each call is answered by the same host implementation that serves a
//! guest in process, on that store: the cap context's local backend (the
//! `Serve` impls every `Host` method of kv, vfs, queue and secrets only
//! delegates to) or, for launch, the `Host` traits themselves. So a
//! relayed call passes the same cadence, grant check and limits. A call for a cap the command was not granted finds that cap's
//! context deny-all, as an import that was never linked would be.
//! Threat: the child is the untrusted side (a guest that escaped into it
//! speaks this protocol too). It never names a tenant, an instance or a
//! grant, a call past [`RELAY_MAX_CALL_BYTES`] closes the channel before
//! it is read, and a job number it makes up is refused.

pub(crate) mod channel;
#[cfg(test)]
mod tests;

use crate::cap::relay::{Call, RelayError, Relayed};
use crate::state::StoreState;

pub(crate) use crate::limits::RELAY_MAX_CALL_BYTES;

/// Declares [`answer`] from the relayed units of `crate::cap::units!`.
macro_rules! answers {
    (
        units { $($_field:ident: $_unit:ident,)* }
        relayed { $($field:ident: $unit:ident,)* }
    ) => {
        /// Answers `call` from `state`: the typed result, encoded. Each
        /// unit answers its own calls ([`Relayed`]).
        pub(crate) async fn answer(
            state: &mut StoreState,
            call: Call,
        ) -> Result<Vec<u8>, RelayError> {
            match call {
                $(Call::$unit(call) => {
                    <crate::cap::$field::$unit as Relayed>::answer(
                        call,
                        &mut state.caps.$field,
                        &mut state.table,
                    )
                    .await
                })*
            }
        }
    };
}

crate::cap::units!(answers);
