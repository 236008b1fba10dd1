//! What a guest's `wasi:http` values make the host hold, counted in bytes
//! per store.
//!
//! Threat: the values of `wasi:http/types` live in host memory, and the
//! store's table caps how many there are, not how big. A guest that fills
//! header maps (each up to wasmtime-wasi-http's 128 KiB) or opens outgoing
//! bodies and writes into them without sending makes the host hold far
//! more than its own memory cap: 10 000 maps held 1.25 GiB for a 128 MiB
//! guest. A served handler gets these values under any profile.
//!
//! Served here: the calls that grow what the host holds
//! (`fields.from-list`, `set`, `append`, `delete` and 0.3's
//! `get-and-delete`, which copy a shared map before changing it, and 0.2's
//! `outgoing-request.body` and `outgoing-response.body`) are linked over
//! wasmtime-wasi-http's own, ask [`Held::admit`] first and then call the
//! crate's implementation unchanged.
//!
//! Invariant: what the store's table holds in header maps and unsent
//! bodies stays within [`crate::limits::http_held_bytes`] of the store's
//! memory cap, give or take one map. The count is a running estimate that
//! only grows; when it would pass the budget the table is swept and the
//! estimate becomes what is really there, so values dropped, sent or
//! consumed (moves the crate makes out of sight) stop counting without a
//! hook on each. Past the budget a 0.3 call fails with
//! `header-error.size-exceeded`, a 0.2 header call traps naming the budget
//! (0.2's `header-error` has no size case; wasmtime-wasi-http traps the
//! same way at its own per-map limit), and `outgoing-*.body` fails. Not
//! counted here: a request or response once it has left the table (sent
//! by `outgoing-handler.handle`, returned to the host), whose body may
//! still buffer two chunks; a store has at most
//! [`crate::limits::MAX_REQUESTS_PER_STORE`] requests in flight (`hooks`),
//! and a handler returns one response.

use crate::limits::HTTP_BODY_CHUNK_BYTES;
use http::{HeaderMap, HeaderName, HeaderValue};
use std::collections::HashSet;
use wasmtime::StoreContextMut;
use wasmtime::component::{Linker, Resource, ResourceTable};
use wasmtime_wasi_http::p2::bindings::http::types as p2;
use wasmtime_wasi_http::p2::body::HostOutgoingBody;
use wasmtime_wasi_http::p2::types::{
    HostIncomingResponse, HostOutgoingRequest, HostOutgoingResponse,
};
use wasmtime_wasi_http::p3::bindings::http::types as p3;
use wasmtime_wasi_http::{FieldMap, WasiHttpCtxView};

/// The `wasi:http/types` instances whose calls are counted: the exact
/// names wasmtime-wasi-http 48 links (a guest built against an earlier
/// 0.2.x patch is served by the 0.2.12 instance). The tests that fill
/// maps at 0.2 and 0.3 fail if these stop matching.
const TYPES_02: &str = "wasi:http/types@0.2.12";
const TYPES_03: &str = "wasi:http/types@0.3.0";

/// What one unsent 0.2 outgoing body may hold: the chunk being written
/// and the one buffered behind it.
const BODY_HELD: usize = 2 * HTTP_BODY_CHUNK_BYTES;

/// Refusals answered from the last sweep before the table is swept again:
/// a guest looping on a refused call at 0.3 (an error value, not a trap)
/// makes the host walk its maps once per this many calls, not on each.
const REFUSALS_PER_SWEEP: u32 = 16;

/// What the counted calls need of a store: its count and its `wasi:http`
/// view (whose table is swept).
pub(crate) struct HttpHeld<'a> {
    pub(crate) held: &'a mut Held,
    pub(crate) view: WasiHttpCtxView<'a>,
}

/// A store's count of the bytes its `wasi:http` values hold.
#[derive(Debug)]
pub(crate) struct Held {
    limit: usize,
    estimate: usize,
    /// Refusals left before the next sweep, after one that refused.
    refusals_left: u32,
}

impl Default for Held {
    fn default() -> Self {
        Self::new(crate::limits::MIN_HTTP_HELD_BYTES)
    }
}

/// Growing a value would take the store past its budget.
#[derive(Debug, thiserror::Error)]
#[error(
    "wasi:http host-memory budget exhausted: this store's header maps and unsent bodies \
     hold {held} bytes, and {need} more would pass its {limit}"
)]
pub(crate) struct Exhausted {
    held: usize,
    need: usize,
    limit: usize,
}

impl Held {
    /// A count that admits up to `limit` bytes.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            limit,
            estimate: 0,
            refusals_left: 0,
        }
    }

    /// Admits `need` more bytes, sweeping `table` when the estimate would
    /// pass the budget.
    pub(crate) fn admit(
        &mut self,
        table: &mut ResourceTable,
        need: usize,
    ) -> Result<(), Exhausted> {
        if self.estimate.saturating_add(need) > self.limit {
            if self.refusals_left > 0 {
                self.refusals_left -= 1;
                return Err(self.exhausted(need));
            }
            self.estimate = held(table);
            if self.estimate.saturating_add(need) > self.limit {
                self.refusals_left = REFUSALS_PER_SWEEP - 1;
                return Err(self.exhausted(need));
            }
        }
        self.refusals_left = 0;
        self.estimate += need;
        Ok(())
    }

    fn exhausted(&self, need: usize) -> Exhausted {
        Exhausted {
            held: self.estimate,
            need,
            limit: self.limit,
        }
    }

    /// Counts bytes a call took beyond what it was admitted for (a shared
    /// map copied before it changed).
    fn charge(&mut self, bytes: usize) {
        self.estimate = self.estimate.saturating_add(bytes);
    }
}

/// What `table` holds in header maps (each shared map once) and unsent
/// 0.2 bodies.
pub(crate) fn held(table: &mut ResourceTable) -> usize {
    let mut seen = HashSet::new();
    let mut total = 0;
    let mut map = |m: &HeaderMap| {
        if seen.insert(std::ptr::from_ref(m)) {
            map_bytes(m)
        } else {
            0
        }
    };
    for entry in table.iter_mut() {
        let entry: &(dyn std::any::Any + Send) = entry;
        total += if let Some(f) = entry.downcast_ref::<FieldMap>() {
            map(f)
        } else if let Some(r) = entry.downcast_ref::<HostOutgoingRequest>() {
            map(&r.headers) + if r.body.is_some() { BODY_HELD } else { 0 }
        } else if let Some(r) = entry.downcast_ref::<HostOutgoingResponse>() {
            map(&r.headers) + if r.body.is_some() { BODY_HELD } else { 0 }
        } else if let Some(r) = entry.downcast_ref::<HostIncomingResponse>() {
            map(&r.headers)
        } else if let Some(r) = entry.downcast_ref::<wasmtime_wasi_http::p3::Request>() {
            map(&r.headers)
        } else if let Some(r) = entry.downcast_ref::<wasmtime_wasi_http::p3::Response>() {
            map(&r.headers)
        } else {
            0
        };
    }
    total
}

/// A map's bytes as wasmtime-wasi-http counts them against its per-map
/// limit: each name and value with the struct that holds it.
fn map_bytes(map: &HeaderMap) -> usize {
    map.keys().map(|k| name_bytes(k.as_str())).sum::<usize>()
        + map.values().map(|v| value_bytes(v.len())).sum::<usize>()
}

fn name_bytes(name: &str) -> usize {
    name.len() + size_of::<HeaderName>()
}

fn value_bytes(len: usize) -> usize {
    len + size_of::<HeaderValue>()
}

/// What setting `values` under `name` may add.
fn entry_bytes<V: AsRef<[u8]>>(name: &str, values: &[V]) -> usize {
    name_bytes(name)
        + values
            .iter()
            .map(|v| value_bytes(v.as_ref().len()))
            .sum::<usize>()
}

/// The map behind a fields handle, to see whether a call copied it.
fn map_of(table: &ResourceTable, rep: u32) -> Option<*const HeaderMap> {
    let fields = Resource::<FieldMap>::new_borrow(rep);
    table
        .get(&fields)
        .ok()
        .map(|f| std::ptr::from_ref::<HeaderMap>(f))
}

/// Runs `call` on the fields `rep` after admitting `need`, and counts the
/// whole map if the call copied it out of a shared one.
fn grow<R>(
    parts: HttpHeld<'_>,
    rep: u32,
    need: usize,
    call: impl FnOnce(&mut WasiHttpCtxView<'_>) -> R,
) -> Result<R, Exhausted> {
    let HttpHeld { held, mut view } = parts;
    held.admit(view.table, need)?;
    let before = map_of(view.table, rep);
    let out = call(&mut view);
    let after = map_of(view.table, rep);
    if after.is_some() && after != before {
        let fields = Resource::<FieldMap>::new_borrow(rep);
        let bytes = view.table.get(&fields).map_or(0, |f| map_bytes(f));
        held.charge(bytes);
    }
    Ok(out)
}

type Body = Result<Resource<HostOutgoingBody>, ()>;

/// A 0.2 outgoing body, taken by `take` once the store can hold one more.
fn body_02(
    parts: HttpHeld<'_>,
    take: impl FnOnce(&mut WasiHttpCtxView<'_>) -> wasmtime::Result<Body>,
) -> wasmtime::Result<(Body,)> {
    let HttpHeld { held, mut view } = parts;
    if held.admit(view.table, BODY_HELD).is_err() {
        return Ok((Err(()),));
    }
    Ok((take(&mut view)?,))
}

/// Links the counted calls over wasmtime-wasi-http's 0.2 ones; called
/// right after those are linked.
pub(crate) fn add_to_linker_02<T: Send + 'static>(
    l: &mut Linker<T>,
    parts: fn(&mut T) -> HttpHeld<'_>,
) -> wasmtime::Result<()> {
    use p2::HostFields;
    type Header = wasmtime::Result<(Result<(), p2::HeaderError>,)>;
    fn header(r: Result<(), wasmtime_wasi_http::p2::HeaderError>) -> Header {
        match r {
            Ok(()) => Ok((Ok(()),)),
            Err(e) => Ok((Err(e.downcast()?),)),
        }
    }
    l.allow_shadowing(true);
    let mut i = l.instance(TYPES_02)?;
    i.func_wrap(
        "[static]fields.from-list",
        move |mut store: StoreContextMut<'_, T>,
              (entries,): (Vec<(String, Vec<u8>)>,)|
              -> wasmtime::Result<(Result<Resource<FieldMap>, p2::HeaderError>,)> {
            let mut p = parts(store.data_mut());
            let need = entries.iter().map(|(n, v)| entry_bytes(n, &[v])).sum();
            p.held.admit(p.view.table, need)?;
            let made = match HostFields::from_list(&mut p.view, entries) {
                Ok(fields) => Ok(fields),
                Err(e) => Err(e.downcast()?),
            };
            Ok((made,))
        },
    )?;
    i.func_wrap(
        "[method]fields.set",
        move |mut store: StoreContextMut<'_, T>,
              (fields, name, values): (Resource<FieldMap>, String, Vec<Vec<u8>>)|
              -> Header {
            let need = entry_bytes(&name, &values);
            let rep = fields.rep();
            let r = grow(parts(store.data_mut()), rep, need, |v| {
                HostFields::set(v, fields, name, values)
            })?;
            header(r)
        },
    )?;
    i.func_wrap(
        "[method]fields.append",
        move |mut store: StoreContextMut<'_, T>,
              (fields, name, value): (Resource<FieldMap>, String, Vec<u8>)|
              -> Header {
            let need = entry_bytes(&name, &[&value]);
            let rep = fields.rep();
            let r = grow(parts(store.data_mut()), rep, need, |v| {
                HostFields::append(v, fields, name, value)
            })?;
            header(r)
        },
    )?;
    i.func_wrap(
        "[method]fields.delete",
        move |mut store: StoreContextMut<'_, T>,
              (fields, name): (Resource<FieldMap>, String)|
              -> Header {
            let rep = fields.rep();
            let r = grow(parts(store.data_mut()), rep, 0, |v| {
                HostFields::delete(v, fields, name)
            })?;
            header(r)
        },
    )?;
    i.func_wrap(
        "[method]outgoing-request.body",
        move |mut store: StoreContextMut<'_, T>,
              (request,): (Resource<HostOutgoingRequest>,)|
              -> wasmtime::Result<(Body,)> {
            body_02(parts(store.data_mut()), |v| {
                p2::HostOutgoingRequest::body(v, request)
            })
        },
    )?;
    i.func_wrap(
        "[method]outgoing-response.body",
        move |mut store: StoreContextMut<'_, T>,
              (response,): (Resource<HostOutgoingResponse>,)|
              -> wasmtime::Result<(Body,)> {
            body_02(parts(store.data_mut()), |v| {
                p2::HostOutgoingResponse::body(v, response)
            })
        },
    )?;
    l.allow_shadowing(false);
    Ok(())
}

/// The same over the 0.3 calls; past the budget they fail with
/// `size-exceeded`.
pub(crate) fn add_to_linker_03<T: Send + 'static>(
    l: &mut Linker<T>,
    parts: fn(&mut T) -> HttpHeld<'_>,
) -> wasmtime::Result<()> {
    use p3::HostFields;
    type Header<T> = wasmtime::Result<(Result<T, p3::HeaderError>,)>;
    type Crate<T> = Result<T, wasmtime_wasi::TrappableError<p3::HeaderError>>;
    fn header<T>(r: Result<Crate<T>, Exhausted>) -> Header<T> {
        match r {
            Ok(answer) => crate::cap::shadow::answered(answer),
            Err(_) => Ok((Err(p3::HeaderError::SizeExceeded),)),
        }
    }
    l.allow_shadowing(true);
    let mut i = l.instance(TYPES_03)?;
    i.func_wrap(
        "[static]fields.from-list",
        move |mut store: StoreContextMut<'_, T>,
              (entries,): (Vec<(String, Vec<u8>)>,)|
              -> Header<Resource<FieldMap>> {
            let mut p = parts(store.data_mut());
            let need = entries.iter().map(|(n, v)| entry_bytes(n, &[v])).sum();
            let r = match p.held.admit(p.view.table, need) {
                Ok(()) => Ok(HostFields::from_list(&mut p.view, entries)),
                Err(e) => Err(e),
            };
            header(r)
        },
    )?;
    i.func_wrap(
        "[method]fields.set",
        move |mut store: StoreContextMut<'_, T>,
              (fields, name, values): (Resource<FieldMap>, String, Vec<Vec<u8>>)|
              -> Header<()> {
            let need = entry_bytes(&name, &values);
            let rep = fields.rep();
            let r = grow(parts(store.data_mut()), rep, need, |v| {
                HostFields::set(v, fields, name, values)
            });
            header(r)
        },
    )?;
    i.func_wrap(
        "[method]fields.append",
        move |mut store: StoreContextMut<'_, T>,
              (fields, name, value): (Resource<FieldMap>, String, Vec<u8>)|
              -> Header<()> {
            let need = entry_bytes(&name, &[&value]);
            let rep = fields.rep();
            let r = grow(parts(store.data_mut()), rep, need, |v| {
                HostFields::append(v, fields, name, value)
            });
            header(r)
        },
    )?;
    i.func_wrap(
        "[method]fields.delete",
        move |mut store: StoreContextMut<'_, T>,
              (fields, name): (Resource<FieldMap>, String)|
              -> Header<()> {
            let rep = fields.rep();
            let r = grow(parts(store.data_mut()), rep, 0, |v| {
                HostFields::delete(v, fields, name)
            });
            header(r)
        },
    )?;
    i.func_wrap(
        "[method]fields.get-and-delete",
        move |mut store: StoreContextMut<'_, T>,
              (fields, name): (Resource<FieldMap>, String)|
              -> Header<Vec<Vec<u8>>> {
            let rep = fields.rep();
            let r = grow(parts(store.data_mut()), rep, 0, |v| {
                HostFields::get_and_delete(v, fields, name)
            });
            header(r)
        },
    )?;
    l.allow_shadowing(false);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map_with(values: usize, len: usize) -> FieldMap {
        let mut m = http::HeaderMap::new();
        for i in 0..values {
            m.append(
                HeaderName::from_bytes(format!("x-{i}").as_bytes()).expect("name"),
                HeaderValue::from_bytes(&vec![b'a'; len]).expect("value"),
            );
        }
        FieldMap::new_immutable(&mut super::super::hooks::GuardedHooks::default(), m)
    }

    #[test]
    fn a_sweep_counts_each_map_once_however_many_handles_share_it() {
        let mut table = ResourceTable::new();
        let map = map_with(4, 1000);
        let one = map_bytes(&map);
        assert!(one > 4000, "a map of 4 000 value bytes counts {one}");
        table.push(map.clone()).expect("push");
        table.push(map).expect("push");
        assert_eq!(held(&mut table), one);
        table.push(map_with(4, 1000)).expect("push");
        assert_eq!(held(&mut table), 2 * one);
    }

    #[test]
    fn past_the_budget_admission_sweeps_and_then_refuses() {
        let mut table = ResourceTable::new();
        let map = map_with(8, 1000);
        let bytes = map_bytes(&map);
        let mut count = Held::new(bytes + 100);
        count.admit(&mut table, bytes).expect("the map fits");
        let kept = table.push(map).expect("push");
        let refused = count
            .admit(&mut table, 200)
            .expect_err("200 more pass the budget");
        assert_eq!((refused.held, refused.need), (bytes, 200));
        assert!(refused.to_string().contains("host-memory budget exhausted"));
        // Dropped, the map stops counting at the next sweep, which comes
        // after the refusals answered from the last one.
        table.delete(kept).expect("delete");
        for _ in 1..REFUSALS_PER_SWEEP {
            count
                .admit(&mut table, 200)
                .expect_err("answered from the last sweep");
        }
        count
            .admit(&mut table, 200)
            .expect("room again once the map is gone");
    }

    #[test]
    fn a_change_that_copies_a_shared_map_counts_the_copy_whole() {
        let mut table = ResourceTable::new();
        let mut ctx = wasmtime_wasi_http::WasiHttpCtx::new();
        let mut hooks = super::super::hooks::GuardedHooks::default();
        let mut count = Held::new(usize::MAX);
        let original = map_with(8, 1000);
        let mut copy = original.clone();
        copy.set_mutable(1 << 20);
        table.push(original).expect("push");
        let rep = table.push(copy).expect("push").rep();
        let parts = HttpHeld {
            held: &mut count,
            view: WasiHttpCtxView {
                ctx: &mut ctx,
                table: &mut table,
                hooks: &mut hooks,
            },
        };
        // Deleting one name admits nothing, but copies the shared map.
        let deleted = grow(parts, rep, 0, |v| {
            p3::HostFields::delete(v, Resource::new_borrow(rep), "x-0".into())
        });
        assert!(matches!(deleted, Ok(Ok(()))));
        let after = table
            .get(&Resource::<FieldMap>::new_borrow(rep))
            .map(|f| map_bytes(f))
            .expect("the copy");
        assert!(after > 7000, "seven values of 1 000 bytes count {after}");
        assert_eq!(count.estimate, after);
    }
}
