//! How many OS descriptors each tenant's stores hold together.
//!
//! Threat: a store holds at most [`MAX_SOCKETS_PER_STORE`] sockets and
//! [`MAX_FILES_PER_STORE`] files, but one tenant runs many stores at once
//! (daemon lines, served requests, instances, the stages of a line), so
//! the per-store caps alone let one tenant multiply its descriptors by its
//! stores until the process has none left for the others.
//!
//! Served here: one [`Descriptors`] ledger per engine, and a [`Holding`]
//! per store, through which the store's socket, file and request counts
//! (taken by `cap::net::socket_count`, `cap::vfs::file_count` and
//! `cap::net::hooks`) reach the ledger.
//! A call that would make a descriptor first reserves one in its store's
//! holding (counting the table and the calls still in flight) and keeps or
//! returns it when done; a descriptor dropped is released; a store's
//! descriptors leave the ledger when the store is dropped.
//!
//! Invariant: the sockets, files and request connections all stores of
//! one tenant hold stay within the engine's per-tenant cap
//! ([`tenant_descriptor_cap`] by default): the call that would pass it is
//! refused as the per-store cap refuses it. Preopens are opened by the
//! host, so they are never refused; they count from the store's first
//! open on (the first sweep).
//! Not covered: a preview 1 file closed is counted until the store's next
//! open.

use crate::limits::{
    MAX_DESCRIPTORS_PER_TENANT, MAX_FILES_PER_STORE, MAX_REQUESTS_PER_STORE, MAX_SOCKETS_PER_STORE,
    TENANT_DESCRIPTOR_SHARE,
};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// What a store holds a descriptor for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A `wasi:sockets` socket, listening, connected or accepted.
    Socket,
    /// A `wasi:filesystem` descriptor (a preopen, a file, a directory).
    File,
    /// An outgoing `wasi:http` request's connection, from its send until
    /// its response is dropped (`cap::net::hooks`).
    Request,
}

impl Kind {
    /// Every kind, in the order of a holding's counts.
    const ALL: [Kind; 3] = [Kind::Socket, Kind::File, Kind::Request];
}

impl Kind {
    /// The most one store may hold of this kind.
    fn store_cap(self) -> usize {
        match self {
            Kind::Socket => MAX_SOCKETS_PER_STORE,
            Kind::File => MAX_FILES_PER_STORE,
            Kind::Request => MAX_REQUESTS_PER_STORE,
        }
    }
}

/// The per-tenant cap when the embedder sets none: a
/// [`TENANT_DESCRIPTOR_SHARE`] of the process's descriptor soft limit (the
/// CLI raises it to the hard limit at start), at most
/// [`MAX_DESCRIPTORS_PER_TENANT`] and at least one store's sockets.
pub fn tenant_descriptor_cap() -> usize {
    use rustix::process::{Resource, getrlimit};
    let soft = getrlimit(Resource::Nofile)
        .current
        .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
    (soft / TENANT_DESCRIPTOR_SHARE).clamp(MAX_SOCKETS_PER_STORE, MAX_DESCRIPTORS_PER_TENANT)
}

/// Raises this process's descriptor soft limit to its hard limit, and
/// returns the soft limit it leaves.
///
/// A service's soft limit is often 1 024 under a hard limit hundreds of
/// times larger; the default per-tenant cap ([`tenant_descriptor_cap`]) is
/// a share of the soft limit, and the sockets and files guests make the
/// host hold come out of it. An embedder serving many tenants calls this
/// once at start, before it builds its engine, as `wbx` does; a limit that
/// cannot be raised is left as it is.
///
/// ```
/// let soft = workbooks::cadence::raise_descriptor_limit();
/// assert!(soft.is_none_or(|n| n > 0));
/// ```
pub fn raise_descriptor_limit() -> Option<u64> {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    if let (Some(soft), Some(hard)) = (limit.current, limit.maximum)
        && soft < hard
    {
        limit.current = Some(hard);
        if setrlimit(Resource::Nofile, limit).is_err() {
            limit.current = Some(soft);
        }
    }
    limit.current
}

/// The descriptors every tenant's stores hold, in one engine.
#[derive(Debug)]
pub struct Descriptors {
    cap: usize,
    tenants: Mutex<HashMap<Arc<str>, usize>>,
}

impl Descriptors {
    /// A ledger holding each tenant to `cap` descriptors.
    pub fn new(cap: usize) -> Arc<Self> {
        Arc::new(Self {
            cap,
            tenants: Mutex::new(HashMap::new()),
        })
    }

    /// The descriptors `tenant`'s stores hold now, as last counted.
    pub fn held(&self, tenant: &str) -> usize {
        self.lock().get(tenant).copied().unwrap_or(0)
    }

    /// A new store's holding for `tenant`, holding nothing yet.
    pub(crate) fn holding(self: &Arc<Self>, tenant: &str) -> Holding {
        Holding {
            ledger: self.clone(),
            tenant: tenant.into(),
            counts: Default::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<Arc<str>, usize>> {
        self.tenants.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One store's count of one kind of descriptor.
#[derive(Debug, Default)]
struct Count {
    /// Held, plus the calls in flight that may make one.
    mine: AtomicUsize,
    /// Calls in flight that took one ([`Holding::reserve`]) and have not
    /// finished.
    pending: AtomicUsize,
}

/// One store's descriptors, in its engine's ledger. Its counts change only
/// under the ledger's lock, so the ledger's sum is always theirs.
#[derive(Debug)]
pub(crate) struct Holding {
    ledger: Arc<Descriptors>,
    /// The tenant, shared with the ledger's key (a clone is a count).
    tenant: Arc<str>,
    /// Sockets, files, requests ([`Kind::ALL`]).
    counts: [Count; 3],
}

impl Holding {
    /// Runs `change` on this store's `(held, pending)` of `kind`, given the
    /// descriptors the tenant's other holdings and kinds hold, and keeps
    /// the ledger's sum in step.
    fn settle<R>(&self, kind: Kind, change: impl FnOnce(&mut usize, &mut usize, usize) -> R) -> R {
        let count = &self.counts[kind as usize];
        let mut tenants = self.ledger.lock();
        let total = tenants.entry(self.tenant.clone()).or_insert(0);
        let mut mine = count.mine.load(Ordering::Relaxed);
        let mut pending = count.pending.load(Ordering::Relaxed);
        let others = total.saturating_sub(mine);
        let answer = change(&mut mine, &mut pending, others);
        count.mine.store(mine, Ordering::Relaxed);
        count.pending.store(pending, Ordering::Relaxed);
        *total = others + mine;
        if *total == 0 {
            tenants.remove(&self.tenant);
        }
        answer
    }

    /// Whether one more of `kind` fits the store's cap and its tenant's.
    fn fits(&self, kind: Kind, mine: usize, others: usize) -> bool {
        mine < kind.store_cap() && others + mine < self.ledger.cap
    }

    /// Records that the store's table holds `n` of `kind` (a sweep's
    /// count; the calls in flight come on top).
    #[cfg(test)]
    pub(crate) fn set(&self, kind: Kind, n: usize) {
        self.settle(kind, |mine, pending, _| *mine = n + *pending);
    }

    /// Before a call that may make one of `kind`, with the store's table
    /// holding `n` (a sweep): takes one for the call if the store and its
    /// tenant have room, counting the calls still in flight, so calls made
    /// together cannot all pass on one count. The call then
    /// [`finish`](Self::finish)es.
    pub(crate) fn reserve(&self, kind: Kind, n: usize) -> bool {
        self.settle(kind, |mine, pending, others| {
            *mine = n + *pending;
            let fits = self.fits(kind, *mine, others);
            if fits {
                *mine += 1;
                *pending += 1;
            }
            fits
        })
    }

    /// A reserved call is done and `made` one or not; `now`, where the
    /// caller knows it exactly (no call of its store ran meanwhile), is
    /// what the table holds after it.
    pub(crate) fn finish(&self, kind: Kind, made: bool, now: Option<usize>) {
        self.settle(kind, |mine, pending, _| {
            *pending = pending.saturating_sub(1);
            *mine = match now {
                Some(n) => n + *pending,
                None if made => *mine,
                None => mine.saturating_sub(1),
            };
        });
    }

    /// [`reserve`](Self::reserve) for a call that may be cancelled while
    /// in flight (an async call the guest drops): the one taken is given
    /// back when the [`Reserved`] is dropped unfinished.
    pub(crate) fn reserved(self: &Arc<Self>, kind: Kind, n: usize) -> Option<Reserved> {
        self.reserve(kind, n).then(|| Reserved {
            holding: self.clone(),
            kind,
            finished: false,
        })
    }

    /// Takes one of `kind` made outside any call (a connection a listener
    /// accepted) if the store and its tenant have room, by the count as
    /// last set.
    pub(crate) fn take_one(&self, kind: Kind) -> bool {
        self.settle(kind, |mine, _, others| {
            let fits = self.fits(kind, *mine, others);
            *mine += usize::from(fits);
            fits
        })
    }

    /// One of `kind` was closed.
    pub(crate) fn release(&self, kind: Kind) {
        self.settle(kind, |mine, _, _| *mine = mine.saturating_sub(1));
    }

    /// The tenant's cap, for the refusal's text.
    pub(crate) fn tenant_cap(&self) -> usize {
        self.ledger.cap
    }
}

/// One descriptor taken for a call in flight ([`Holding::reserved`]).
#[derive(Debug)]
pub(crate) struct Reserved {
    holding: Arc<Holding>,
    kind: Kind,
    finished: bool,
}

impl Reserved {
    /// The call is done: [`Holding::finish`].
    pub(crate) fn finish(mut self, made: bool, now: Option<usize>) {
        self.finished = true;
        self.holding.finish(self.kind, made, now);
    }
}

impl Drop for Reserved {
    /// A call cancelled in flight made nothing.
    fn drop(&mut self) {
        if !self.finished {
            self.holding.finish(self.kind, false, None);
        }
    }
}

impl Drop for Holding {
    /// A store that never held a descriptor (most never make a socket or
    /// open a file) leaves without taking the ledger's lock.
    fn drop(&mut self) {
        for kind in Kind::ALL {
            let count = &self.counts[kind as usize];
            if count.mine.load(Ordering::Relaxed) + count.pending.load(Ordering::Relaxed) > 0 {
                self.settle(kind, |mine, pending, _| (*mine, *pending) = (0, 0));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tenants_stores_share_one_cap_and_another_tenant_has_its_own() {
        let ledger = Descriptors::new(300);
        let first = ledger.holding("a");
        first.set(Kind::Socket, 256);
        let second = ledger.holding("a");
        let taken = (0..100)
            .take_while(|_| second.take_one(Kind::Socket))
            .count();
        assert_eq!(taken, 44);
        assert_eq!(ledger.held("a"), 300);
        let other = ledger.holding("b");
        assert!(other.reserve(Kind::File, 10));
        assert_eq!(ledger.held("b"), 11);
        drop(first);
        assert_eq!(ledger.held("a"), 44);
        assert!(second.take_one(Kind::Socket), "room again");
        drop(second);
        drop(other);
        assert!(ledger.lock().is_empty(), "nothing left behind");
    }

    #[test]
    fn a_store_stays_within_its_own_cap_under_a_larger_tenant_cap() {
        let ledger = Descriptors::new(10_000);
        let store = ledger.holding("a");
        assert!(!store.reserve(Kind::Socket, MAX_SOCKETS_PER_STORE));
        assert!(store.reserve(Kind::Socket, MAX_SOCKETS_PER_STORE - 1));
        assert!(!store.take_one(Kind::Socket), "the last was taken");
        assert!(store.reserve(Kind::File, 0), "files are apart");
    }

    #[test]
    fn calls_in_flight_together_each_take_one_and_those_that_fail_give_it_back() {
        let ledger = Descriptors::new(10_000);
        let store = ledger.holding("a");
        let passed = (0..MAX_FILES_PER_STORE + 10)
            .filter(|_| store.reserve(Kind::File, 1))
            .count();
        assert_eq!(passed, MAX_FILES_PER_STORE - 1, "one count, many calls");
        store.finish(Kind::File, false, None);
        assert_eq!(ledger.held("a"), MAX_FILES_PER_STORE - 1);
        for _ in 1..passed {
            store.finish(Kind::File, true, None);
        }
        assert_eq!(ledger.held("a"), MAX_FILES_PER_STORE - 1);
        store.set(Kind::File, 3);
        assert_eq!(
            ledger.held("a"),
            3,
            "a sweep is the truth once none is in flight"
        );
    }

    #[test]
    fn a_reservation_dropped_unfinished_gives_its_one_back_and_a_finished_one_keeps_it() {
        let ledger = Descriptors::new(10_000);
        let store = Arc::new(ledger.holding("a"));
        let cancelled = store.reserved(Kind::File, 0).unwrap();
        let opened = store.reserved(Kind::File, 0).unwrap();
        assert_eq!(ledger.held("a"), 2);
        drop(cancelled);
        assert_eq!(
            ledger.held("a"),
            1,
            "a call cancelled in flight made nothing"
        );
        opened.finish(true, None);
        assert_eq!(ledger.held("a"), 1, "the file it opened is held");
    }

    #[test]
    fn a_call_that_knows_the_count_after_it_sets_it_and_a_release_stops_at_zero() {
        let ledger = Descriptors::new(100);
        let store = ledger.holding("a");
        assert!(store.reserve(Kind::File, 5));
        store.finish(Kind::File, false, Some(5));
        assert_eq!(ledger.held("a"), 5, "the open failed");
        store.set(Kind::File, 0);
        store.release(Kind::File);
        assert_eq!(ledger.held("a"), 0);
    }

    /// A service's soft limit under a larger hard one is taken to the hard
    /// one (lowered here first, so the raise has something to do).
    #[test]
    fn raising_the_descriptor_limit_takes_the_soft_limit_to_the_hard_one() {
        use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
        let hard = getrlimit(Resource::Nofile)
            .maximum
            .expect("Linux bounds the descriptor limit");
        let lowered = Rlimit {
            current: Some(hard.min(256)),
            maximum: Some(hard),
        };
        setrlimit(Resource::Nofile, lowered).unwrap();
        assert_eq!(raise_descriptor_limit(), Some(hard));
        assert_eq!(getrlimit(Resource::Nofile).current, Some(hard));
    }

    #[test]
    fn the_default_cap_is_a_share_of_the_soft_limit_within_its_bounds() {
        let cap = tenant_descriptor_cap();
        assert!((MAX_SOCKETS_PER_STORE..=MAX_DESCRIPTORS_PER_TENANT).contains(&cap));
    }
}
