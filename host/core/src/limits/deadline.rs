//! Wall-clock deadlines by epoch interruption.
//!
//! One ticker thread per engine advances the epoch every [`EPOCH_TICK`].
//! Each store checks its own deadline at every tick: before the deadline it
//! yields to the async executor (so one long call cannot starve the others
//! sharing a worker thread); past it, the call fails with
//! [`DeadlineExceeded`], which unwinds the guest and frees its thread. Time a
//! guest spends blocked inside a host call (a sleep, a socket read) is not
//! wasm execution and sees no epoch, so callers also bound the whole call
//! with a tokio timeout; dropping the call future unwinds the guest's fiber
//! the same way. The same tick ends a call whose output passed its cap
//! and which writes on regardless ([`OutputCapPassed`]).

use super::EPOCH_TICK;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use wasmtime::{Store, UpdateDeadline};

/// The error a call fails with when its wall-clock budget runs out.
#[derive(Debug, thiserror::Error)]
#[error("call exceeded its {} ms budget", budget.as_millis())]
pub(crate) struct DeadlineExceeded {
    /// The budget that ran out.
    pub(crate) budget: Duration,
}

/// When the current call of a store must end.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadline {
    at: Instant,
    budget: Duration,
}

impl Deadline {
    /// A deadline `budget` from now.
    pub(crate) fn after(budget: Duration) -> Self {
        Self {
            at: Instant::now() + budget,
            budget,
        }
    }

    /// The budget this deadline was armed with.
    pub(crate) fn budget(&self) -> Duration {
        self.budget
    }

    /// Time left before the deadline (zero once past it).
    pub(crate) fn remaining(&self) -> Duration {
        self.at.saturating_duration_since(Instant::now())
    }
}

/// The error a call fails with when an output it writes passed its cap
/// and the guest wrote on (a WASI 0.3 stream answers a write past the cap
/// with an error value the guest may ignore): the run is then reported
/// over its output cap.
#[derive(Debug, thiserror::Error)]
#[error("the call wrote on past its output cap")]
pub(crate) struct OutputCapPassed;

/// Stores whose calls are bounded by a [`Deadline`].
pub(crate) trait HasDeadline {
    /// The deadline of the call in progress.
    fn deadline(&self) -> Deadline;

    /// Whether the call must end now for another reason than time: an
    /// output it writes passed its cap.
    fn output_over_cap(&self) -> bool {
        false
    }
}

/// Installs the per-tick deadline check on a store. Arm it before each call
/// by setting the store's [`Deadline`].
pub(crate) fn install<T: HasDeadline + 'static>(store: &mut Store<T>) {
    install_check(store, false);
}

/// The same check for a store whose calls are synchronous (a core
/// kernel's): past the deadline the call fails; before it, the guest runs
/// on without yielding.
pub(crate) fn install_blocking<T: HasDeadline + 'static>(store: &mut Store<T>) {
    install_check(store, true);
}

fn install_check<T: HasDeadline + 'static>(store: &mut Store<T>, blocking: bool) {
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(move |ctx| {
        let deadline = ctx.data().deadline();
        if ctx.data().output_over_cap() {
            Err(OutputCapPassed.into())
        } else if deadline.remaining().is_zero() {
            Err(DeadlineExceeded {
                budget: deadline.budget(),
            }
            .into())
        } else if blocking {
            Ok(UpdateDeadline::Continue(1))
        } else {
            Ok(UpdateDeadline::Yield(1))
        }
    });
}

/// Advances an engine's epoch every [`EPOCH_TICK`] until dropped.
#[derive(Debug)]
pub(crate) struct EpochTicker {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl EpochTicker {
    /// Starts ticking `engines` (each as it is built).
    pub(crate) fn start(engines: crate::flavor::Engines) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("wb-epoch".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    // Parked rather than slept, so dropping the ticker wakes
                    // it at once instead of waiting out the tick.
                    std::thread::park_timeout(EPOCH_TICK);
                    for engine in engines.built() {
                        engine.increment_epoch();
                    }
                }
            })?;
        Ok(Self {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.thread().unpark();
            let _ = t.join();
        }
    }
}
