//! The host side of each cap, one folder per unit ([`unit`]) with the
//! same anatomy: `mod.rs` states what the cap owns, its WIT interface and
//! its invariant, holds the per-store context (deny-all by default) and
//! the unit (its linking and how its context is opened); `host.rs`
//! implements the generated host trait; `relay.rs`, for a cap a
//! container-tier child reaches through its parent, declares each relayed
//! operation once ([`relay`]). Caps do not reach into each other; only
//! [`crate::dock`] links them, from the list below ([`units!`]).

pub(crate) mod bindings;
pub(crate) mod browse;
pub(crate) mod exchange;
pub(crate) mod kv;
pub(crate) mod launch;
pub mod llm;
pub(crate) mod net;
pub(crate) mod net_types;
pub(crate) mod queue;
pub(crate) mod relay;
pub mod secrets;
pub(crate) mod session_info;
pub(crate) mod shadow;
pub(crate) mod unit;
pub(crate) mod vfs;

/// The list of units, each once: the one place a cap's folder is named
/// besides its `mod` line. Hands `$then!` the units, `field: Unit` (the
/// folder and its [`unit::CapUnit`]), then those a container-tier child
/// reaches through its parent, in the relay's wire order (so a new one
/// goes at the end). The cap table and the store's contexts
/// (`crate::state::caps`), the relay's `Call` ([`relay`]) and its serving
/// side (`crate::engine::relay`) are each made from it.
macro_rules! units {
    ($then:ident) => {
        $then! {
            units {
                vfs: Vfs,
                kv: Kv,
                queue: Queue,
                secrets: Secrets,
                launch: Launch,
                exchange: Exchange,
                net: Net,
                browse: Browse,
                llm: Llm,
            }
            relayed {
                kv: Kv,
                vfs: Vfs,
                queue: Queue,
                secrets: Secrets,
                launch: Launch,
            }
        }
    };
}
pub(crate) use units;
