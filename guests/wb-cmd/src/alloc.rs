//! A size-class allocator for command guests that build and drop many small
//! values (jq's JSON trees: an `Rc` per value, a map per object).
//!
//! Rust hands `dealloc` the layout it allocated with, so a small block needs
//! no header: its size class is known from the layout alone. A block of up
//! to [`SMALL_MAX`] bytes (and alignment up to [`CLASS_STEP`]) comes from a
//! free list per class, refilled by carving [`CHUNK`]-byte chunks taken from
//! the system allocator; freeing pushes it back on its class's list. Both
//! are a handful of instructions, where the system allocator (dlmalloc on
//! wasm32) keeps boundary tags and coalesces neighbours on every call.
//! Anything larger or more aligned goes to the system allocator as before.
//!
//! What it gives up: a freed small block is reused only for its own class
//! and never returned to the system allocator. A command is one short run
//! and the host caps its memory, so a pathological mix (gigabytes of one
//! size freed, then gigabytes of another) ends with the memory cap's named
//! error, not an unbounded host.
//!
//! It is for single-threaded guests only: wasm32-wasip2 without the
//! `atomics` feature. [`SizeClasses`] is `Sync` only there, so it cannot be
//! made a `#[global_allocator]` anywhere it could be shared between threads.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::UnsafeCell;
use std::ptr;

/// Class width, and the largest alignment a small block honours.
pub const CLASS_STEP: usize = 16;
/// The largest block served from a class: beyond it, blocks are few and
/// the system allocator's bookkeeping is cheap relative to their use.
pub const SMALL_MAX: usize = 1024;
/// Bytes taken from the system allocator whenever a class runs dry.
pub const CHUNK: usize = 256 << 10;

const CLASSES: usize = SMALL_MAX / CLASS_STEP;

/// The allocator; see the module documentation.
pub struct SizeClasses {
    state: UnsafeCell<State>,
}

struct State {
    /// Head of each class's list of freed blocks; a freed block's first
    /// word points at the next.
    free: [*mut u8; CLASSES],
    /// The unused tail of the current chunk.
    next: *mut u8,
    end: *mut u8,
}

// SAFETY: the state is only reached through `&self` methods that never
// re-enter one another, and on wasm32 without atomics there is one thread.
#[cfg(all(target_family = "wasm", not(target_feature = "atomics")))]
unsafe impl Sync for SizeClasses {}

impl Default for SizeClasses {
    fn default() -> Self {
        Self::new()
    }
}

impl SizeClasses {
    /// An allocator with no chunk taken yet.
    pub const fn new() -> Self {
        Self {
            state: UnsafeCell::new(State {
                free: [ptr::null_mut(); CLASSES],
                next: ptr::null_mut(),
                end: ptr::null_mut(),
            }),
        }
    }

    /// The class serving `size` bytes at `align`, or `None` when the block
    /// goes to the system allocator.
    fn class(size: usize, align: usize) -> Option<usize> {
        (size <= SMALL_MAX && align <= CLASS_STEP).then(|| size.max(1).div_ceil(CLASS_STEP) - 1)
    }

    /// A block of class `class`: a freed one, else the next slice of the
    /// current chunk, else a slice of a new chunk. Null when the system
    /// allocator has no chunk to give.
    ///
    /// # Safety
    /// The caller holds the only access to the state (see `Sync`).
    unsafe fn take(&self, class: usize) -> *mut u8 {
        // SAFETY: exclusive by the caller's contract.
        let state = unsafe { &mut *self.state.get() };
        let head = state.free[class];
        if !head.is_null() {
            // SAFETY: a freed block is at least one word, and its first
            // word was written by `give`.
            state.free[class] = unsafe { head.cast::<*mut u8>().read() };
            return head;
        }
        let size = (class + 1) * CLASS_STEP;
        if (state.end as usize) - (state.next as usize) < size {
            // The chunk's tail is smaller than this class: it is left
            // unused (at most `SMALL_MAX` bytes per chunk).
            // SAFETY: a valid, non-zero layout.
            let chunk =
                unsafe { System.alloc(Layout::from_size_align_unchecked(CHUNK, CLASS_STEP)) };
            if chunk.is_null() {
                return chunk;
            }
            state.next = chunk;
            // SAFETY: within the chunk just taken.
            state.end = unsafe { chunk.add(CHUNK) };
        }
        let block = state.next;
        // SAFETY: `size` bytes remain before `end`.
        state.next = unsafe { block.add(size) };
        block
    }

    /// Returns a block of class `class` to its list.
    ///
    /// # Safety
    /// `block` came from `take(class)` and is no longer used; the caller
    /// holds the only access to the state.
    unsafe fn give(&self, block: *mut u8, class: usize) {
        // SAFETY: exclusive by the caller's contract.
        let state = unsafe { &mut *self.state.get() };
        // SAFETY: the block is at least one word and aligned to 16.
        unsafe { block.cast::<*mut u8>().write(state.free[class]) };
        state.free[class] = block;
    }
}

// SAFETY: small blocks are disjoint slices of chunks the system allocator
// handed out and never reclaims, aligned to 16 and at least the requested
// size; every other layout is the system allocator's own.
unsafe impl GlobalAlloc for SizeClasses {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match Self::class(layout.size(), layout.align()) {
            // SAFETY: the single-thread contract of `Sync`.
            Some(class) => unsafe { self.take(class) },
            // SAFETY: forwarded with the caller's layout.
            None => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match Self::class(layout.size(), layout.align()) {
            Some(class) => {
                // SAFETY: the single-thread contract of `Sync`.
                let block = unsafe { self.take(class) };
                if !block.is_null() {
                    // SAFETY: the block holds at least `layout.size()` bytes.
                    unsafe { block.write_bytes(0, layout.size()) };
                }
                block
            }
            // SAFETY: forwarded; fresh system memory is known zero there.
            None => unsafe { System.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, block: *mut u8, layout: Layout) {
        match Self::class(layout.size(), layout.align()) {
            // SAFETY: `layout` is the one the block was allocated with, so
            // it names the same class.
            Some(class) => unsafe { self.give(block, class) },
            // SAFETY: likewise the system allocator's own block.
            None => unsafe { System.dealloc(block, layout) },
        }
    }

    unsafe fn realloc(&self, block: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = Self::class(layout.size(), layout.align());
        let new = Self::class(new_size, layout.align());
        match (old, new) {
            // The block already has room: a class is a size range.
            (Some(a), Some(b)) if a == b => block,
            // SAFETY: the system allocator's block, resized in place where
            // it can be.
            (None, None) => unsafe { System.realloc(block, layout, new_size) },
            _ => {
                // SAFETY: `new_size` is non-zero and, rounded to the
                // alignment, fits `isize` by `realloc`'s own contract.
                let to = unsafe {
                    self.alloc(Layout::from_size_align_unchecked(new_size, layout.align()))
                };
                if !to.is_null() {
                    // SAFETY: both blocks hold the smaller size; distinct.
                    unsafe {
                        ptr::copy_nonoverlapping(block, to, layout.size().min(new_size));
                        self.dealloc(block, layout);
                    }
                }
                to
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(size: usize, align: usize) -> Layout {
        Layout::from_size_align(size, align).expect("layout")
    }

    #[test]
    fn a_freed_block_is_handed_out_again_to_the_next_request_of_its_class() {
        let a = SizeClasses::new();
        unsafe {
            let first = a.alloc(layout(24, 8));
            a.dealloc(first, layout(24, 8));
            // 30 bytes rounds to the same 32-byte class.
            assert_eq!(a.alloc(layout(30, 4)), first);
            // Another class does not take it.
            assert_ne!(a.alloc(layout(24, 8)), first);
        }
    }

    #[test]
    fn live_blocks_never_overlap_and_keep_their_bytes_across_chunks() {
        let a = SizeClasses::new();
        let sizes = [1, 8, 16, 17, 100, 512, 1000, SMALL_MAX];
        let mut live = Vec::new();
        // Enough of the largest class to need several chunks.
        for n in 0..(3 * CHUNK / SMALL_MAX) {
            let size = sizes[n % sizes.len()];
            let block = unsafe { a.alloc(layout(size, 1)) };
            assert!(!block.is_null());
            assert_eq!(block as usize % CLASS_STEP, 0, "every block is 16-aligned");
            unsafe { block.write_bytes(n as u8, size) };
            live.push((block, size, n as u8));
        }
        let mut spans: Vec<(usize, usize)> = live
            .iter()
            .map(|&(b, s, _)| (b as usize, b as usize + s))
            .collect();
        spans.sort_unstable();
        for pair in spans.windows(2) {
            assert!(pair[0].1 <= pair[1].0, "blocks {pair:x?} overlap");
        }
        for (block, size, fill) in live {
            let bytes = unsafe { std::slice::from_raw_parts(block, size) };
            assert_eq!(bytes, &vec![fill; size][..], "a block was overwritten");
            unsafe { a.dealloc(block, layout(size, 1)) };
        }
    }

    #[test]
    fn realloc_keeps_the_bytes_within_a_class_across_classes_and_past_the_small_limit() {
        let a = SizeClasses::new();
        let text: Vec<u8> = (0..=255u8).cycle().take(8 * SMALL_MAX).collect();
        let mut guards = Vec::new();
        unsafe {
            let mut block = a.alloc(layout(5, 1));
            block.copy_from_nonoverlapping(text.as_ptr(), 5);
            let mut size = 5;
            for next in [12, 100, SMALL_MAX, SMALL_MAX + 1, 8 * SMALL_MAX, 40, 3] {
                let grown = a.realloc(block, layout(size, 1), next);
                assert!(!grown.is_null());
                let kept = size.min(next);
                assert_eq!(std::slice::from_raw_parts(grown, kept), &text[..kept]);
                if next > size {
                    grown
                        .add(size)
                        .copy_from_nonoverlapping(text[size..].as_ptr(), next - size);
                }
                if next == 12 {
                    assert_eq!(grown, block, "5 and 12 bytes share a class");
                }
                // A neighbour taken and filled now would overwrite the
                // block's tail were the block smaller than asked.
                let neighbour = a.alloc(layout(next, 1));
                neighbour.write_bytes(0xaa, next);
                guards.push((neighbour, next));
                (block, size) = (grown, next);
            }
            a.dealloc(block, layout(size, 1));
            for (neighbour, size) in guards {
                a.dealloc(neighbour, layout(size, 1));
            }
        }
    }

    #[test]
    fn a_zeroed_block_is_zero_even_when_it_is_a_reused_one() {
        let a = SizeClasses::new();
        unsafe {
            let dirty = a.alloc(layout(64, 8));
            dirty.write_bytes(0xff, 64);
            a.dealloc(dirty, layout(64, 8));
            let zeroed = a.alloc_zeroed(layout(64, 8));
            assert_eq!(zeroed, dirty);
            assert_eq!(std::slice::from_raw_parts(zeroed, 64), &[0u8; 64][..]);
        }
    }

    #[test]
    fn a_block_aligned_past_the_class_step_is_the_system_allocators_and_aligned() {
        assert_eq!(SizeClasses::class(32, 64), None);
        assert_eq!(SizeClasses::class(SMALL_MAX + 1, 1), None);
        assert_eq!(SizeClasses::class(0, 1), Some(0));
        let a = SizeClasses::new();
        unsafe {
            let block = a.alloc(layout(32, 64));
            assert_eq!(block as usize % 64, 0);
            a.dealloc(block, layout(32, 64));
        }
    }
}
