//! Per-principal rate limiting: a fixed window per principal, counted with
//! atomics so concurrent calls never race past the limit by more than the
//! number of calls in flight at the window's edge.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
struct Bucket {
    window: AtomicU64,
    count: AtomicU64,
}

/// Admits at most `limit` calls per principal per `window`.
#[derive(Debug)]
pub struct RateLimiter {
    limit: u64,
    window: Duration,
    epoch: Instant,
    buckets: RwLock<HashMap<String, Arc<Bucket>>>,
}

impl RateLimiter {
    /// A limiter of `limit` calls per `window`.
    pub fn new(limit: u64, window: Duration) -> Self {
        Self {
            limit,
            window: window.max(Duration::from_millis(1)),
            epoch: Instant::now(),
            buckets: RwLock::new(HashMap::new()),
        }
    }

    fn bucket(&self, principal: &str) -> Arc<Bucket> {
        if let Some(b) = self
            .buckets
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(principal)
        {
            return b.clone();
        }
        self.buckets
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .entry(principal.to_string())
            .or_default()
            .clone()
    }

    /// Counts one call of `principal`; false when it is over the limit.
    pub fn admit(&self, principal: &str) -> bool {
        let bucket = self.bucket(principal);
        let now = (self.epoch.elapsed().as_millis() / self.window.as_millis()) as u64;
        let seen = bucket.window.load(Ordering::Acquire);
        if seen != now
            && bucket
                .window
                .compare_exchange(seen, now, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            bucket.count.store(0, Ordering::Release);
        }
        bucket.count.fetch_add(1, Ordering::AcqRel) < self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_principal_is_cut_off_at_its_limit_and_others_are_not() {
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
        let admitted: u64 = (0..8)
            .map(|_| {
                let r = r.clone();
                std::thread::spawn(move || (0..500).filter(|_| r.admit("p")).count() as u64)
            })
            .map(|t| t.join().unwrap())
            .sum();
        assert_eq!(admitted, 1000);
    }
}
