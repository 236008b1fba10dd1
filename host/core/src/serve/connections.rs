//! The connections a server holds open: how many in total and per client,
//! and which one goes when the total is reached.
//!
//! Threat: clients that stay under the per-client cap from many addresses
//! (32 addresses, or 32 IPv6 /64s, at 32 connections each fill the 1 024
//! slots), each connection trickling a header line and reconnecting when
//! the header timeout closes it: a server that refuses new connections at
//! its cap then refuses every legitimate client while the slots stay full.
//! So at the cap the connection that has waited longest for its headers
//! (a fresh connection, or a keep-alive between requests) is shed to make
//! room, never one whose request is being handled; only when every
//! connection is busy is the newcomer refused. Past
//! [`SERVE_PRESSURE_PERCENT`] of the cap a new connection gets the
//! shorter [`SERVE_PRESSURE_HEADER_TIMEOUT`] for its headers.

use crate::limits::{SERVE_PRESSURE_HEADER_TIMEOUT, SERVE_PRESSURE_PERCENT};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Open connections, in total and per client.
#[derive(Debug)]
pub(super) struct Connections {
    max_total: usize,
    max_per_client: usize,
    open: Mutex<Open>,
}

#[derive(Debug, Default)]
struct Open {
    total: usize,
    per_client: HashMap<String, usize>,
    /// Every admitted connection by id, to pick the one to shed.
    slots: HashMap<u64, Arc<Slot>>,
    next_id: u64,
}

impl Open {
    fn release(&mut self, client: &str) {
        self.total = self.total.saturating_sub(1);
        if let Some(n) = self.per_client.get_mut(client) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.per_client.remove(client);
            }
        }
    }
}

/// What one connection is doing, shared between its task and the cap.
#[derive(Debug)]
pub(super) struct Slot {
    client: String,
    /// Since when it has waited for a request's headers; `None` while a
    /// request is being handled.
    waiting_since: Mutex<Option<Instant>>,
    shed: tokio::sync::Notify,
}

impl Slot {
    fn waiting_since(&self) -> Option<Instant> {
        *self.waiting_since.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A request's headers arrived: the connection is not shed while its
    /// request is handled.
    pub(super) fn busy(&self) {
        *self.waiting_since.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// The request was answered: the connection waits for the next
    /// request's headers from now.
    pub(super) fn waiting(&self) {
        *self.waiting_since.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
    }

    /// Resolves when the cap sheds this connection.
    pub(super) async fn shed(&self) {
        self.shed.notified().await;
    }
}

/// One admitted connection; its slot is given back when dropped (or at
/// once, when it is shed).
pub(super) struct Admitted {
    connections: Arc<Connections>,
    id: u64,
    slot: Arc<Slot>,
    header_timeout: Duration,
}

impl Admitted {
    /// What the connection's task reports its progress to.
    pub(super) fn slot(&self) -> Arc<Slot> {
        self.slot.clone()
    }

    /// How long this connection has for its headers: the server's timeout,
    /// or the shorter one when it was admitted under pressure.
    pub(super) fn header_timeout(&self) -> Duration {
        self.header_timeout
    }
}

/// Why a connection was not admitted.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Refused {
    /// Its client holds its share already.
    ClientFull,
    /// Every connection is busy with a request.
    AllBusy,
}

/// An admitted connection, and the client of the one shed to make room.
pub(super) type Admission = (Admitted, Option<String>);

impl Connections {
    pub(super) fn new(max_total: usize, max_per_client: usize) -> Self {
        Self {
            max_total: max_total.max(1),
            max_per_client: max_per_client.max(1),
            open: Mutex::new(Open::default()),
        }
    }

    /// A slot for a connection from `client` with `header_timeout` for its
    /// headers: within the client's cap, shedding the connection that has
    /// waited longest for its headers when the total is reached.
    pub(super) fn admit(
        self: &Arc<Self>,
        client: &str,
        header_timeout: Duration,
    ) -> Result<Admission, Refused> {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let mine = open.per_client.get(client).copied().unwrap_or(0);
        if mine >= self.max_per_client {
            return Err(Refused::ClientFull);
        }
        let mut shed = None;
        if open.total >= self.max_total {
            let victim = open
                .slots
                .iter()
                .filter_map(|(id, s)| s.waiting_since().map(|t| (t, *id)))
                .min();
            let Some((_, id)) = victim else {
                return Err(Refused::AllBusy);
            };
            if let Some(slot) = open.slots.remove(&id) {
                open.release(&slot.client);
                slot.shed.notify_one();
                shed = Some(slot.client.clone());
            }
        }
        let pressured = open.total * 100 >= self.max_total * SERVE_PRESSURE_PERCENT;
        let header_timeout = if pressured {
            header_timeout.min(SERVE_PRESSURE_HEADER_TIMEOUT)
        } else {
            header_timeout
        };
        open.total += 1;
        *open.per_client.entry(client.to_string()).or_insert(0) += 1;
        let id = open.next_id;
        open.next_id += 1;
        let slot = Arc::new(Slot {
            client: client.to_string(),
            waiting_since: Mutex::new(Some(Instant::now())),
            shed: tokio::sync::Notify::new(),
        });
        open.slots.insert(id, slot.clone());
        let admitted = Admitted {
            connections: self.clone(),
            id,
            slot,
            header_timeout,
        };
        Ok((admitted, shed))
    }
}

impl Drop for Admitted {
    fn drop(&mut self) {
        let mut open = self
            .connections
            .open
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        // A shed connection gave its slot back when it was shed.
        if open.slots.remove(&self.id).is_some() {
            open.release(&self.slot.client);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(10);

    #[test]
    fn connections_are_capped_per_client_and_slots_come_back() {
        let c = Arc::new(Connections::new(3, 2));
        let (a1, _) = c.admit("a", T).unwrap();
        let _a2 = c.admit("a", T).unwrap();
        assert_eq!(c.admit("a", T).err(), Some(Refused::ClientFull));
        drop(a1);
        assert!(c.admit("a", T).is_ok());
    }

    #[test]
    fn at_the_cap_the_longest_waiting_connection_is_shed_and_a_busy_one_never() {
        let c = Arc::new(Connections::new(3, 3));
        let (oldest, _) = c.admit("a", T).unwrap();
        let (busy, _) = c.admit("b", T).unwrap();
        busy.slot().busy();
        let (_newer, _) = c.admit("c", T).unwrap();
        // Full: the newcomer takes the slot of the oldest still waiting.
        let (_d, shed) = c.admit("d", T).unwrap();
        assert_eq!(shed.as_deref(), Some("a"));
        // Its task is told, and dropping it later gives nothing back twice.
        let told = oldest.slot();
        drop(oldest);
        assert!(
            futures::FutureExt::now_or_never(told.shed()).is_some(),
            "the shed connection's task is woken"
        );
        assert_eq!(c.open.lock().unwrap().total, 3);
        // Every connection busy: the newcomer is refused.
        for s in c.open.lock().unwrap().slots.values() {
            s.busy();
        }
        assert_eq!(c.admit("e", T).err(), Some(Refused::AllBusy));
    }

    #[test]
    fn under_pressure_a_new_connection_gets_the_shorter_header_timeout() {
        let c = Arc::new(Connections::new(4, 4));
        let (first, _) = c.admit("a", T).unwrap();
        assert_eq!(first.header_timeout(), T);
        let _rest: Vec<_> = (0..2).map(|_| c.admit("a", T).unwrap()).collect();
        let (late, _) = c.admit("a", T).unwrap();
        assert_eq!(late.header_timeout(), SERVE_PRESSURE_HEADER_TIMEOUT);
    }
}
