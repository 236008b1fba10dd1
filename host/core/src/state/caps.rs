//! The cap table: the list of cap units ([`crate::cap::unit`], listed
//! in `crate::cap::units!`), each interface the host serves once, each
//! unit's whole host side in its folder. From the list come the store's
//! [`Contexts`], how a store reaches each unit's context, and [`TABLE`],
//! which the store builder ([`super::new_store`]) and the linker
//! (`crate::dock`) loop over; neither names a cap.
//!
//! Which caps a row serves is not typed here: a host primitive serves the
//! caps whose shipped brokers import it (read from the built brokers,
//! `embedded::BROKER_IMPORTS`), and an interface served in the host
//! (`workbooks:engine/vfs`, `workbooks:engine/net`) serves the cap of its
//! name.
//!
//! Invariant: a row is linked, and its context opened, if and only if a
//! cap it serves is granted. Every cap word but `posix` (which binds
//! nothing in the component lane) is served by a row; the tests below
//! hold the table, the policy and the shipped brokers to each other.

use super::{SessionError, SessionOptions, StoreHost, StoreState};
use crate::cap;
use crate::cap::net::sockets::GuardedLookup;
use crate::cap::unit::{CapStore, CapUnit, Holds, Opening};
use crate::policy::{Cap, CapSet, Grant};
use crate::storage::{StorageError, validate_name};
use std::sync::{Arc, OnceLock};
use wasmtime::component::{Linker, ResourceTable};
use wasmtime_wasi::WasiCtxBuilder;

/// Links one row's interfaces.
type Link = fn(&mut Linker<StoreState>) -> wasmtime::Result<()>;
/// Opens one row's context in `contexts` (and sets what it needs of the
/// WASI builder).
type Open = fn(&Opening<'_>, &mut Contexts, &mut WasiCtxBuilder) -> Result<(), StorageError>;

/// One interface the host serves: a [`CapUnit`] as the loops see it.
pub(crate) struct Row {
    /// See [`CapUnit::INTERFACE`].
    pub(crate) interface: &'static str,
    /// See [`CapUnit::PER_TENANT`].
    pub(crate) per_tenant: bool,
    /// See [`CapUnit::link`].
    pub(crate) link: Link,
    /// See [`CapUnit::link_03`].
    pub(crate) link_03: Link,
    /// See [`CapUnit::open`].
    open: Open,
}

/// Declares the cap table from the list of units (`crate::cap::units!`):
/// the store's [`Contexts`] (a field per unit), how a store reaches each
/// unit's context ([`Holds`]), and [`TABLE`].
macro_rules! table {
    (
        units { $($field:ident: $unit:ident,)* }
        relayed { $($_relayed:ident: $_runit:ident,)* }
    ) => {
        /// Every unit's store context, deny-all until its row of the cap
        /// table ([`TABLE`]) opens it.
        #[derive(Default)]
        pub(crate) struct Contexts {
            $(pub(crate) $field: <cap::$field::$unit as CapUnit>::Ctx,)*
        }

        $(
            impl Holds<cap::$field::$unit> for StoreState {
                fn context(&mut self) -> &mut <cap::$field::$unit as CapUnit>::Ctx {
                    &mut self.caps.$field
                }

                fn context_and_table(
                    &mut self,
                ) -> (&mut <cap::$field::$unit as CapUnit>::Ctx, &mut ResourceTable) {
                    (&mut self.caps.$field, &mut self.table)
                }
            }
        )*

        /// Every interface the host serves, one row per unit.
        pub(crate) const TABLE: [Row; [$(stringify!($field)),*].len()] = [$(
            Row {
                interface: <cap::$field::$unit as CapUnit>::INTERFACE,
                per_tenant: <cap::$field::$unit as CapUnit>::PER_TENANT,
                link: <cap::$field::$unit as CapUnit>::link::<StoreState>,
                link_03: <cap::$field::$unit as CapUnit>::link_03::<StoreState>,
                open: |o, c, wasi| {
                    c.$field = <cap::$field::$unit as CapUnit>::open(o, wasi)?;
                    Ok(())
                },
            },
        )*];
    };
}

cap::units!(table);

/// The primitive that runs commands (`commands`, `exec`, `parallel`),
/// which the core-module lane opens as well.
pub(crate) const LAUNCH: &str = <cap::launch::Launch as CapUnit>::INTERFACE;

impl CapStore for StoreState {
    fn descriptors(&mut self) -> &Arc<crate::cadence::Holding> {
        StoreState::descriptors(self)
    }

    fn http(&mut self) -> wasmtime_wasi_http::WasiHttpCtxView<'_> {
        StoreState::http(self)
    }

    fn lookup(&mut self) -> GuardedLookup<'_> {
        StoreState::lookup(self)
    }
}

/// The caps each row of [`TABLE`] serves, in its order; read from the
/// brokers once per process.
fn served() -> &'static [CapSet; TABLE.len()] {
    static SERVED: OnceLock<[CapSet; TABLE.len()]> = OnceLock::new();
    SERVED.get_or_init(|| std::array::from_fn(|i| serves(TABLE[i].interface)))
}

/// The caps `interface` serves: the cap of its name when the host serves
/// it to guests, else each cap whose shipped broker imports it.
fn serves(interface: &str) -> CapSet {
    if let Some(word) = interface.strip_prefix("workbooks:engine/")
        && let Ok(cap) = Cap::from_word(word)
    {
        return CapSet::EMPTY.with(cap);
    }
    crate::embedded::BROKER_IMPORTS
        .iter()
        .filter(|(_, names)| names.contains(&interface))
        .fold(CapSet::EMPTY, |set, (cap, _)| set.with(*cap))
}

/// The rows a grant of `caps` reaches, with the caps of it each serves.
pub(crate) fn granted(caps: CapSet) -> impl Iterator<Item = (&'static Row, CapSet)> {
    TABLE
        .iter()
        .zip(served())
        .map(move |(row, served)| (row, served.intersect(caps)))
        .filter(|(_, served)| !served.is_empty())
}

/// Every cap some row serves.
pub(crate) fn all_served() -> CapSet {
    served()
        .iter()
        .fold(CapSet::EMPTY, |all, caps| all.with_all(*caps))
}

/// The caps the `interface` row serves (none for an interface not in the
/// table); `interface` is named without its version.
pub(crate) fn caps_of(interface: &str) -> CapSet {
    TABLE
        .iter()
        .position(|r| r.interface == interface)
        .map_or(CapSet::EMPTY, |i| served()[i])
}

/// Opens the contexts of the rows a grant reaches that `wanted` keeps:
/// the tenant checked first for a per-tenant row, then the row's own
/// opening (which may set what it needs of `wasi`).
pub(crate) fn open(
    host: &StoreHost<'_>,
    grant: &Grant,
    opts: &SessionOptions,
    wasi: &mut WasiCtxBuilder,
    wanted: impl Fn(&Row) -> bool,
) -> Result<Contexts, SessionError> {
    let mut contexts = Contexts::default();
    for (row, caps) in granted(grant.caps).filter(|(row, _)| wanted(row)) {
        if row.per_tenant {
            validate_name("tenant", &opts.tenant)?;
        }
        let opening = Opening {
            tenant: &opts.tenant,
            id: &opts.id,
            grant,
            caps,
            storage: host.storage,
            cadence: host.cadence,
            descriptors: &host.descriptors,
            keyring: host.keyring,
            llm: host.llm,
            access: &host.access,
            scope: opts.scope.as_ref(),
            relay: host.relay,
            launcher: host.launcher,
            dirs: &opts.dirs,
            commands: &opts.commands,
            pipeline_stdin: opts.pipeline_stdin.as_ref(),
            pipeline_stdout: opts.pipeline_stdout.as_ref(),
            llm_run: &opts.llm,
        };
        (row.open)(&opening, &mut contexts, wasi)?;
    }
    Ok(contexts)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Cap words no row serves, by design: `posix` binds nothing in the
    /// component lane.
    const UNSERVED: CapSet = CapSet::EMPTY.with(Cap::Posix);

    #[test]
    fn every_policy_word_is_served_by_the_table_or_named_unserved_and_no_row_serves_nothing() {
        let mut served = CapSet::EMPTY;
        for row in &TABLE {
            let caps = caps_of(row.interface);
            assert!(!caps.is_empty(), "{} serves no cap", row.interface);
            assert!(
                caps.intersect(served).is_empty(),
                "{} serves a cap another row serves",
                row.interface
            );
            served = caps.iter().fold(served, CapSet::with);
        }
        assert!(served.intersect(UNSERVED).is_empty());
        for cap in Cap::ALL {
            assert!(
                served.contains(cap) || UNSERVED.contains(cap),
                "the policy word `{cap}` has no unit in the cap table"
            );
        }
        assert_eq!(
            served.iter().count() + UNSERVED.iter().count(),
            Cap::ALL.len()
        );
    }

    #[test]
    fn every_host_primitive_a_shipped_broker_imports_is_a_row() {
        let rows: Vec<&str> = TABLE.iter().map(|r| r.interface).collect();
        let mut seen = 0;
        for (cap, names) in crate::embedded::BROKER_IMPORTS {
            for name in names.iter().filter(|n| n.starts_with("workbooks:host/")) {
                seen += 1;
                assert!(
                    rows.contains(name),
                    "{cap}'s broker imports {name}, not in the table"
                );
                assert!(caps_of(name).contains(*cap), "{name} does not serve {cap}");
            }
        }
        assert!(seen >= 11, "read only {seen} primitive imports");
    }

    #[test]
    fn the_shared_primitives_serve_the_caps_whose_brokers_import_them() {
        let of = |caps: &[Cap]| CapSet::of(caps);
        assert_eq!(
            caps_of("workbooks:host/exchange"),
            of(&[Cap::Tcp, Cap::Udp, Cap::Tls])
        );
        assert_eq!(
            caps_of("workbooks:host/launch"),
            of(&[Cap::Commands, Cap::Exec, Cap::Parallel])
        );
        assert_eq!(caps_of("workbooks:engine/vfs"), of(&[Cap::Vfs]));
        assert_eq!(caps_of("workbooks:host/nothing"), CapSet::EMPTY);
    }
}
