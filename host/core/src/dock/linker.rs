//! The only place component imports are linked (core modules are linked in
//! [`super::module`]). One line per cap word: a cap is linked if and only
//! if it is granted.
//!
//! Base WASI is curated rather than wholesale: io, clocks, random and cli
//! (including `exit-with-code`), at 0.2 and at 0.3.0, with stdio wired by the store builder to
//! in-memory pipes unless the caller passes its own through. Never in the
//! base: `wasi:sockets`, `wasi:http`, `wasi:clocks/timezone`; a component
//! importing them is refused by the pre-check with the cap it would need
//! (`wasi:http` and `wasi:sockets` arrive with `net`, behind the floor; a
//! component served over HTTP gets the `wasi:http/types` values alone).
//!
//! Host primitives are linked by cap too, from the cap table
//! ([`crate::state::caps`]): a broker's primitive is there only when a cap
//! it serves is granted (`exchange` once for tcp, udp or tls).

use super::imports::Role;
use crate::cap;
use crate::flavor::Flavor;
use crate::policy::{Cap, CapSet, Stub, Stubs};
use crate::state::StoreState;
use wasmtime::component::{HasData, Linker, ResourceTable};
use wasmtime_wasi::WasiView;
use wasmtime_wasi::cli::{WasiCli, WasiCliView};
use wasmtime_wasi::clocks::{WasiClocks, WasiClocksView};
use wasmtime_wasi::random::WasiRandom;

/// The caps that have a component-lane binding in this engine: those with
/// a broker, and those a row of the cap table serves (`vfs` and `net` are
/// served in the host: bulk bytes; see their modules). A granted cap
/// outside this set links nothing (`posix` by design). Computed once.
pub(crate) fn served() -> CapSet {
    static SERVED: std::sync::OnceLock<CapSet> = std::sync::OnceLock::new();
    *SERVED.get_or_init(|| {
        crate::embedded::BROKERS
            .iter()
            .fold(crate::state::caps::all_served(), |set, (cap, _, _)| {
                set.with(*cap)
            })
    })
}

/// Builds the linker for a cap set on a role, with the values a stub
/// needs of the host.
pub(crate) fn link(
    engine: &wasmtime::Engine,
    flavor: Flavor,
    caps: CapSet,
    role: Role,
    stubs: Stubs,
) -> wasmtime::Result<Linker<StoreState>> {
    let mut linker: Linker<StoreState> = Linker::new(engine);
    let l = &mut linker;
    // WASI 0.3 only on the concurrent engine: its host functions are
    // async, which the sync engine cannot link (and a component needing
    // them is docked on the concurrent one).
    let wasi_03 = flavor == Flavor::Concurrent;
    base_wasi(l)?;
    if wasi_03 {
        base_wasi_03(l)?;
    }
    // The http values, without the handler that would send them anywhere,
    // for a served component and for the http deny broker too.
    if caps.contains(Cap::Net) || role == Role::HttpHandler || stubs.contains(Stub::Http) {
        http_types(l)?;
        if wasi_03 {
            http_types_03(l)?;
        }
    }
    if let Role::Extended(extension) = role {
        (extension.link)(l)?;
    }
    cap::session_info::add_to_linker(l, |s| &mut s.session)?;
    // Types shared by a cap's interface and its primitive, or by several
    // caps: no functions, no reach.
    for types in super::imports::types_only() {
        l.instance(&format!("workbooks:engine/{types}@0.1.0"))?;
    }
    // Each interface of the cap table a granted cap reaches, once.
    for (row, _) in crate::state::caps::granted(caps) {
        (row.link)(l)?;
        if wasi_03 {
            (row.link_03)(l)?;
        }
    }
    Ok(linker)
}

struct IoTable;

impl HasData for IoTable {
    type Data<'a> = &'a mut ResourceTable;
}

fn base_wasi<T: WasiView + 'static>(l: &mut Linker<T>) -> wasmtime::Result<()> {
    use wasmtime_wasi::p2::bindings::{cli, clocks, io, random};
    io::error::add_to_linker::<T, IoTable>(l, |t| t.ctx().table)?;
    io::poll::add_to_linker::<T, IoTable>(l, |t| t.ctx().table)?;
    io::streams::add_to_linker::<T, IoTable>(l, |t| t.ctx().table)?;
    clocks::wall_clock::add_to_linker::<T, WasiClocks>(l, T::clocks)?;
    clocks::monotonic_clock::add_to_linker::<T, WasiClocks>(l, T::clocks)?;
    random::random::add_to_linker::<T, WasiRandom>(l, |t| t.ctx().ctx.random())?;
    random::insecure::add_to_linker::<T, WasiRandom>(l, |t| t.ctx().ctx.random())?;
    random::insecure_seed::add_to_linker::<T, WasiRandom>(l, |t| t.ctx().ctx.random())?;
    cli::environment::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::exit::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stdin::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stdout::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::stderr::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_input::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_output::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stdin::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stdout::add_to_linker::<T, WasiCli>(l, T::cli)?;
    cli::terminal_stderr::add_to_linker::<T, WasiCli>(l, T::cli)?;
    Ok(())
}

/// Base WASI at 0.3.0: the same context, through the async interfaces.
fn base_wasi_03<T: WasiView + 'static>(l: &mut Linker<T>) -> wasmtime::Result<()> {
    wasmtime_wasi::p3::cli::add_to_linker(l)?;
    wasmtime_wasi::p3::clocks::add_to_linker(l)?;
    wasmtime_wasi::p3::random::add_to_linker(l)?;
    Ok(())
}

/// The `wasi:http/types` values: with `net`, or for a component served
/// over HTTP (it reads its request through them); they reach nothing by
/// themselves. The calls that grow what they hold in the host are counted
/// against the store's budget ([`cap::net::held`]).
fn http_types(l: &mut Linker<StoreState>) -> wasmtime::Result<()> {
    let options = wasmtime_wasi_http::p2::bindings::LinkOptions::default();
    wasmtime_wasi_http::p2::bindings::http::types::add_to_linker::<_, wasmtime_wasi_http::WasiHttp>(
        l,
        &(&options).into(),
        StoreState::http,
    )?;
    cap::net::held::add_to_linker_02(l, StoreState::http_held)
}

/// The same at 0.3.0.
fn http_types_03(l: &mut Linker<StoreState>) -> wasmtime::Result<()> {
    wasmtime_wasi_http::p3::bindings::http::types::add_to_linker::<_, wasmtime_wasi_http::WasiHttp>(
        l,
        StoreState::http,
    )?;
    cap::net::held::add_to_linker_03(l, StoreState::http_held)
}
