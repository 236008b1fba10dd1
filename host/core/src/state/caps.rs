//! The cap table: each interface the host serves, once, with everything
//! the host needs of it: the caps it serves, whether it keeps per-tenant
//! state, its linker entry and how a store's context for it is opened.
//! The store builder ([`super::new_store`]) and the linker
//! (`crate::dock`) loop over [`TABLE`]; neither names a cap.
//!
//! Which caps a row serves is not typed here: a host primitive serves the
//! caps whose shipped brokers import it (read from the built brokers,
//! `embedded::BROKER_IMPORTS`), and an interface served in the host
//! (`workbooks:engine/vfs`, `workbooks:engine/net`) serves the cap of its
//! name.
//!
//! Invariant: a row is linked, and its context opened, if and only if a
//! cap it serves is granted. Every cap word but `posix` (which binds
//! nothing in the component lane) is served by a row; the tests below hold the table, the policy and the
//! shipped brokers to each other.

use super::{SessionError, SessionOptions, StoreHost, StoreState};
use crate::cap;
use crate::commands::CommandEnv;
use crate::policy::{Cap, CapSet, Grant};
use crate::store::validate_name;
use std::sync::{Arc, OnceLock};
use wasmtime::component::Linker;
use wasmtime_wasi::WasiCtxBuilder;

/// Every cap's store context, deny-all until its row of the cap table
/// ([`TABLE`]) opens it.
#[derive(Default)]
pub(crate) struct Contexts {
    pub(crate) vfs: cap::vfs::VfsCtx,
    pub(crate) kv: cap::kv::KvCtx,
    pub(crate) launch: cap::launch::LaunchCtx,
    pub(crate) net: cap::net::NetCtx,
    pub(crate) exchange: cap::exchange::ExchangeCtx,
    pub(crate) browse: cap::browse::BrowseCtx,
    pub(crate) queue: cap::queue::QueueCtx,
    pub(crate) secrets: cap::secrets::SecretsCtx,
    pub(crate) llm: cap::llm::LlmCtx,
}

/// What opening a store's context for a row reads.
struct Opening<'a, 'h> {
    /// The engine's side: storage, cadence, keys, network reach.
    host: &'a StoreHost<'h>,
    /// The grant the store runs under.
    grant: &'a Grant,
    /// The session.
    opts: &'a SessionOptions,
    /// The caps of the grant this row serves.
    caps: CapSet,
}

/// Links one row's interface.
type Link = fn(&mut Linker<StoreState>) -> wasmtime::Result<()>;
/// Opens one row's context in `contexts` (and sets what it needs of the
/// WASI builder).
type Open = fn(&Opening<'_, '_>, &mut Contexts, &mut WasiCtxBuilder) -> Result<(), SessionError>;

/// One interface the host serves.
pub(crate) struct Row {
    /// The interface, without its version: a host primitive brokers
    /// import, or a guest-facing interface served in the host.
    pub(crate) interface: &'static str,
    /// Whether it keeps per-tenant state, so the tenant must be a name.
    pub(crate) per_tenant: bool,
    /// Its linker entry.
    pub(crate) link: Link,
    /// Its WASI 0.3.0 interfaces' entry, linked beside `link` on the
    /// concurrent engine only (`crate::flavor`).
    pub(crate) link_03: Option<Link>,
    /// Its store context.
    open: Open,
}

/// The primitive that runs commands (`commands`, `exec`, `parallel`),
/// which the core-module lane opens as well.
pub(crate) const LAUNCH: &str = "workbooks:host/launch";

/// Every interface the host serves for a cap.
pub(crate) const TABLE: [Row; 9] = [
    Row {
        interface: "workbooks:engine/vfs",
        per_tenant: true,
        link: |l| cap::vfs::add_to_linker(l, |s| &mut s.caps.vfs, StoreState::descriptors),
        link_03: Some(|l| cap::vfs::add_03_to_linker(l, StoreState::descriptors)),
        open: |o, c, _| {
            if o.host.relay.is_none() {
                validate_name("instance", &o.opts.id)?;
            }
            let (storage, tenant) = (&o.host.storage, &o.opts.tenant);
            c.vfs = cap::vfs::VfsCtx::open(o.host.relay, storage, tenant, &o.opts.id);
            Ok(())
        },
    },
    Row {
        interface: "workbooks:host/kv",
        per_tenant: true,
        link: |l| cap::kv::add_to_linker(l, |s| &mut s.caps.kv),
        link_03: None,
        open: |o, c, _| {
            let (storage, cadence) = (&o.host.storage, &o.host.cadence);
            c.kv = cap::kv::KvCtx::open(o.host.relay, storage, &o.opts.tenant, cadence);
            Ok(())
        },
    },
    Row {
        interface: "workbooks:host/queue",
        per_tenant: true,
        link: |l| cap::queue::add_to_linker(l, |s| &mut s.caps.queue),
        link_03: None,
        open: |o, c, _| {
            let (storage, cadence) = (&o.host.storage, &o.host.cadence);
            c.queue = cap::queue::QueueCtx::open(o.host.relay, storage, &o.opts.tenant, cadence);
            Ok(())
        },
    },
    Row {
        interface: "workbooks:host/secrets",
        per_tenant: true,
        link: |l| cap::secrets::add_to_linker(l, |s| &mut s.caps.secrets),
        link_03: None,
        open: |o, c, _| {
            let (keys, cadence) = (&o.host.keyring, &o.host.cadence);
            c.secrets = cap::secrets::SecretsCtx::open(o.host.relay, keys, &o.opts.tenant, cadence);
            Ok(())
        },
    },
    Row {
        interface: LAUNCH,
        per_tenant: false,
        link: |l| {
            cap::launch::add_to_linker(l, |s| cap::launch::LaunchView {
                ctx: &mut s.caps.launch,
                table: &mut s.table,
            })
        },
        link_03: None,
        open: open_launch,
    },
    Row {
        interface: "workbooks:host/exchange",
        per_tenant: false,
        link: |l| cap::exchange::add_to_linker(l, |s| &mut s.caps.exchange),
        link_03: None,
        open: |o, c, _| {
            c.exchange = cap::exchange::ExchangeCtx::new(o.host.access.clone(), o.caps);
            Ok(())
        },
    },
    Row {
        interface: "workbooks:engine/net",
        per_tenant: false,
        link: |l| {
            cap::net::add_to_linker(l, |s| &mut s.caps.net, StoreState::http, StoreState::lookup)
        },
        link_03: Some(|l| cap::net::add_03_to_linker(l, StoreState::http, StoreState::lookup)),
        open: |o, c, wasi| {
            let access = o.host.access.clone();
            let guard = access.client.guard().clone();
            let gate = Arc::new(cap::net::sockets::SocketGate::new(
                guard,
                o.host.cadence.clone(),
                o.opts.tenant.clone(),
                o.host.descriptors.clone(),
            ));
            c.net = cap::net::NetCtx::new(access, o.host.descriptors.clone());
            c.net.gate = Some(gate.clone());
            wasi.allow_tcp(true)
                .allow_udp(true)
                .allow_ip_name_lookup(true)
                .socket_addr_check(move |addr, usage| {
                    Box::pin(std::future::ready(gate.check(addr, usage)))
                });
            Ok(())
        },
    },
    Row {
        interface: "workbooks:host/http",
        per_tenant: false,
        link: |l| cap::browse::add_to_linker(l, |s| &mut s.caps.browse),
        link_03: None,
        open: |o, c, _| {
            c.browse.access = Some(o.host.access.clone());
            Ok(())
        },
    },
    Row {
        interface: "workbooks:host/llm",
        per_tenant: false,
        link: |l| cap::llm::add_to_linker(l, |s| &mut s.caps.llm),
        link_03: None,
        open: |o, c, _| {
            let (tenant, cadence) = (o.opts.tenant.clone(), o.host.cadence.clone());
            c.llm = cap::llm::LlmCtx::new(o.host.llm.cloned(), tenant, cadence);
            Ok(())
        },
    },
];

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
            host,
            grant,
            opts,
            caps,
        };
        (row.open)(&opening, &mut contexts, wasi)?;
    }
    Ok(contexts)
}

/// The command launcher of a session: only under `commands` or `exec`
/// (`parallel` fans out what they run), running commands as the session's
/// tenant with its preopens, policy and environment.
fn open_launch(
    o: &Opening<'_, '_>,
    c: &mut Contexts,
    _: &mut WasiCtxBuilder,
) -> Result<(), SessionError> {
    if !o.caps.contains(Cap::Commands) && !o.caps.contains(Cap::Exec) {
        return Ok(());
    }
    if let Some(relay) = o.host.relay {
        c.launch = cap::launch::LaunchCtx::relayed(relay.clone(), o.caps);
        return Ok(());
    }
    let opts = o.opts;
    let env = CommandEnv {
        tenant: opts.tenant.clone(),
        session_id: opts.id.clone(),
        caller_caps: o.grant.caps,
        grant: opts
            .commands
            .stage_grant
            .clone()
            .unwrap_or_else(|| o.grant.clone()),
        dirs: opts.dirs.clone(),
        policy: opts.commands.clone(),
    };
    c.launch = cap::launch::LaunchCtx::new((o.host.launcher)(), env, o.caps)
        .with_session_input(opts.pipeline_stdin.clone())
        .with_session_output(opts.pipeline_stdout.clone());
    Ok(())
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
                "the policy word `{cap}` has no row in the cap table"
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
