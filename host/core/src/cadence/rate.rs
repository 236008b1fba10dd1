//! Per-tenant rate limiting: a fixed window per tenant.
//!
//! Each tenant's bucket is one atomic word holding its window and its
//! count together, changed only by compare-and-swap, so a call can neither
//! slip past the limit nor lose a count when the window turns over (a reset
//! stored apart from the count would wipe increments made in between).
//! Buckets whose window is over are evicted, and the number of tenants
//! tracked at once is capped ([`RATE_MAX_TENANTS`]): past it, tenants
//! not yet tracked share one overflow bucket, so a flood of new names (a
//! server's clients, say) costs bounded memory and is still limited.

use crate::limits::RATE_MAX_TENANTS;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// Tracked tenants past which a new one triggers a sweep of idle ones.
const SWEEP_AT: usize = 1024;

/// The name of the shared bucket (not a valid tenant name).
const OVERFLOW: &str = "\u{0}overflow";

/// `[window u32][count u32]` in one word.
#[derive(Debug, Default)]
struct Bucket(AtomicU64);

impl Bucket {
    fn window(&self) -> u32 {
        (self.0.load(Ordering::Acquire) >> 32) as u32
    }

    /// Counts one call in `window` if fewer than `limit` were counted. A
    /// caller that read the clock before another call moved the bucket to a
    /// newer window counts in that newer window, never turning it back.
    fn admit(&self, window: u32, limit: u32) -> bool {
        let mut seen = self.0.load(Ordering::Acquire);
        loop {
            let stored = (seen >> 32) as u32;
            let newer = (stored.wrapping_sub(window) as i32) > 0;
            let window = if newer { stored } else { window };
            let count = if stored == window { seen as u32 } else { 0 };
            if count >= limit {
                return false;
            }
            let next = (u64::from(window) << 32) | u64::from(count + 1);
            match self
                .0
                .compare_exchange_weak(seen, next, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => return true,
                Err(actual) => seen = actual,
            }
        }
    }
}

/// The tracked tenants, and the window of the last sweep.
#[derive(Debug, Default)]
struct Buckets {
    map: HashMap<String, Arc<Bucket>>,
    swept: Option<u32>,
}

/// Admits at most `limit` calls per tenant per `window`.
#[derive(Debug)]
pub struct RateLimiter {
    limit: u32,
    window: Duration,
    epoch: Instant,
    buckets: RwLock<Buckets>,
}

impl RateLimiter {
    /// A limiter of `limit` calls per `window` (at most `u32::MAX`).
    pub fn new(limit: u64, window: Duration) -> Self {
        Self {
            limit: u32::try_from(limit).unwrap_or(u32::MAX),
            window: window.max(Duration::from_millis(1)),
            epoch: Instant::now(),
            buckets: RwLock::new(Buckets::default()),
        }
    }

    fn current_window(&self) -> u32 {
        (self.epoch.elapsed().as_millis() / self.window.as_millis()) as u32
    }

    /// Counts one call of `tenant`; false when it is over the limit.
    pub fn admit(&self, tenant: &str) -> bool {
        self.admit_in(tenant, self.current_window())
    }

    /// Counts one call of `tenant` in `window`. The bucket is used under
    /// the map's read lock, so a sweep cannot evict it mid-count.
    fn admit_in(&self, tenant: &str, window: u32) -> bool {
        {
            let buckets = self.buckets.read().unwrap_or_else(|p| p.into_inner());
            if let Some(b) = buckets.map.get(tenant) {
                return b.admit(window, self.limit);
            }
        }
        let mut buckets = self.buckets.write().unwrap_or_else(|p| p.into_inner());
        let Buckets { map, swept } = &mut *buckets;
        if map.len() >= SWEEP_AT && !map.contains_key(tenant) && *swept != Some(window) {
            // A bucket whose window is over counts nothing any more. At
            // most one sweep per window: a flood inside one window fills
            // the map to the cap and then shares the overflow bucket.
            map.retain(|name, b| name == OVERFLOW || b.window() >= window);
            *swept = Some(window);
        }
        let name = if map.len() >= RATE_MAX_TENANTS && !map.contains_key(tenant) {
            OVERFLOW
        } else {
            tenant
        };
        map.entry(name.to_string())
            .or_default()
            .admit(window, self.limit)
    }

    /// Tenants (and the overflow bucket) tracked now.
    pub fn tracked(&self) -> usize {
        self.buckets
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .map
            .len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tenant_is_cut_off_at_its_limit_and_others_are_not() {
        let r = RateLimiter::new(3, Duration::from_secs(3600));
        assert!((0..3).all(|_| r.admit("a")));
        assert!(!r.admit("a"));
        assert!(r.admit("b"));
    }

    #[test]
    fn the_limit_resets_with_the_window() {
        let r = RateLimiter::new(1, Duration::from_millis(20));
        assert!(r.admit("a"));
        assert!(!r.admit("a"));
        std::thread::sleep(Duration::from_millis(45));
        assert!(r.admit("a"));
    }

    #[test]
    fn concurrent_calls_cannot_exceed_the_limit() {
        let r = Arc::new(RateLimiter::new(1000, Duration::from_secs(3600)));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let r = r.clone();
                std::thread::spawn(move || (0..500).filter(|_| r.admit("p")).count() as u64)
            })
            .collect();
        let admitted: u64 = threads.into_iter().map(|t| t.join().unwrap()).sum();
        assert_eq!(admitted, 1000);
    }

    #[test]
    fn racing_threads_across_window_turnovers_never_admit_more_than_the_limit() {
        // Every thread walks the same windows in step, hammering each; a
        // reset kept apart from the count would let extra calls through at
        // each turnover.
        const WINDOWS: u32 = 2000;
        const LIMIT: u64 = 5;
        let r = Arc::new(RateLimiter::new(LIMIT, Duration::from_secs(1)));
        let barrier = Arc::new(std::sync::Barrier::new(4));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (r, barrier) = (r.clone(), barrier.clone());
                std::thread::spawn(move || {
                    (0..WINDOWS)
                        .map(|w| {
                            barrier.wait();
                            (0..8).filter(|_| r.admit_in("p", w)).count() as u64
                        })
                        .collect::<Vec<u64>>()
                })
            })
            .collect();
        let per_thread: Vec<Vec<u64>> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        for w in 0..WINDOWS as usize {
            let admitted: u64 = per_thread.iter().map(|t| t[w]).sum();
            assert_eq!(admitted, LIMIT, "window {w}");
        }
    }

    #[test]
    fn a_caller_with_a_stale_window_never_turns_the_bucket_back() {
        let r = RateLimiter::new(2, Duration::from_secs(3600));
        assert!(r.admit_in("p", 5));
        assert!(r.admit_in("p", 5));
        // A call that read the clock before window 5 began still counts in
        // window 5, and cannot reset it.
        assert!(!r.admit_in("p", 4));
        assert!(!r.admit_in("p", 5));
        assert!(r.admit_in("p", 6));
    }

    #[test]
    fn idle_buckets_are_evicted_and_a_flood_of_names_stays_bounded() {
        let r = RateLimiter::new(10, Duration::from_secs(3600));
        for i in 0..(SWEEP_AT * 3) {
            assert!(r.admit_in(&format!("client-{i}"), 0));
        }
        assert_eq!(r.tracked(), SWEEP_AT * 3);
        // In a later window every earlier bucket is idle.
        assert!(r.admit_in("newcomer", 2));
        assert_eq!(r.tracked(), 1);
    }

    #[test]
    fn past_the_tenant_cap_newcomers_share_one_limited_bucket() {
        let r = RateLimiter::new(3, Duration::from_secs(3600));
        for i in 0..RATE_MAX_TENANTS {
            assert!(r.admit_in(&format!("c{i}"), 0));
        }
        let admitted = (0..10)
            .filter(|i| r.admit_in(&format!("late-{i}"), 0))
            .count();
        assert_eq!(admitted, 3, "the newcomers share the overflow bucket");
        assert_eq!(r.tracked(), RATE_MAX_TENANTS + 1);
    }
}
