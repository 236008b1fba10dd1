//! The store limiter: one cap on the total of every linear memory and table
//! in a store.
//!
//! A composed component holds several core instances, each with its own
//! memory; wasmtime's stock `StoreLimits` caps each memory separately, so a
//! guest composed with two brokers could use three times its profile. This
//! limiter keeps a running total across all of them. A refused growth is
//! recorded, because a Rust guest whose allocation fails aborts with a plain
//! `unreachable` trap, and the run must still be reported as a memory error.

use super::{
    MAX_CORE_INSTANCES_PER_STORE, MAX_MEMORIES_PER_STORE, MAX_TABLES_PER_STORE, TABLE_ELEMENT_BYTES,
};

/// Caps the sum of all memories and tables in one store.
#[derive(Debug)]
pub(crate) struct MemoryLimiter {
    limit: usize,
    used: usize,
    refused: Option<usize>,
}

impl MemoryLimiter {
    /// A limiter allowing `limit` bytes in total.
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            limit,
            used: 0,
            refused: None,
        }
    }

    /// The cap, in bytes.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes currently held by all memories and tables of the store.
    pub(crate) fn used(&self) -> usize {
        self.used
    }

    /// The total a refused growth asked for, if any growth was refused
    /// since the last [`MemoryLimiter::arm`].
    pub(crate) fn refused(&self) -> Option<usize> {
        self.refused
    }

    /// Starts a new call: a refusal recorded during an earlier call (which
    /// the guest may have handled) says nothing about this one.
    pub(crate) fn arm(&mut self) {
        self.refused = None;
    }

    fn grow(&mut self, current: usize, desired: usize) -> bool {
        let delta = desired.saturating_sub(current);
        let total = self.used.saturating_add(delta);
        if total > self.limit {
            self.refused = Some(total);
            return false;
        }
        self.used = total;
        true
    }
}

impl wasmtime::ResourceLimiter for MemoryLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(self.grow(current, desired))
    }

    fn memory_grow_failed(&mut self, _error: wasmtime::Error) -> wasmtime::Result<()> {
        // The growth was counted but did not happen; the caller sees -1.
        // Wasmtime does not say by how much, so the count stays as an upper
        // bound: the total can only be over-estimated, never under.
        Ok(())
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(self.grow(
            current.saturating_mul(TABLE_ELEMENT_BYTES),
            desired.saturating_mul(TABLE_ELEMENT_BYTES),
        ))
    }

    fn instances(&self) -> usize {
        MAX_CORE_INSTANCES_PER_STORE
    }

    fn memories(&self) -> usize {
        MAX_MEMORIES_PER_STORE
    }

    fn tables(&self) -> usize {
        MAX_TABLES_PER_STORE
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasmtime::ResourceLimiter;

    #[test]
    fn growth_is_capped_on_the_total_of_all_memories() {
        let mut l = MemoryLimiter::new(100);
        assert!(l.memory_growing(0, 60, None).unwrap());
        assert!(l.memory_growing(0, 40, None).unwrap());
        assert!(!l.memory_growing(0, 1, None).unwrap());
        assert_eq!(l.refused(), Some(101));
        assert_eq!(l.used(), 100);
        l.arm();
        assert_eq!(l.refused(), None, "a new call starts with no refusal");
        assert_eq!(l.used(), 100, "arming does not forget what is held");
    }

    #[test]
    fn tables_count_toward_the_same_cap() {
        let mut l = MemoryLimiter::new(10 * TABLE_ELEMENT_BYTES);
        assert!(l.table_growing(0, 5, None).unwrap());
        assert!(l.memory_growing(0, 5 * TABLE_ELEMENT_BYTES, None).unwrap());
        assert!(!l.table_growing(5, 6, None).unwrap());
    }
}
