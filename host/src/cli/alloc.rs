//! The static musl build's allocator: a start-up arena in front of
//! mimalloc.
//!
//! A fresh process pays a page fault for the first touch of every heap
//! page (about 2 µs each on a virtual machine). mimalloc keeps each size
//! class on its own 64 KiB page, so the few hundred KiB a `run` allocates
//! while it starts were spread over some 150 pages touched one at a time.
//! Here the small allocations of a process's start come instead from one
//! contiguous arena, mapped on the first allocation (anywhere the kernel
//! chooses, so its address tells nothing of the binary's), handed out in
//! order and made present ahead of use, [`STEP`] bytes per
//! `madvise(MADV_POPULATE_WRITE)`: a fifth of the cost per page. Once the
//! arena is spent, or for any block larger than [`LARGEST`], or if the
//! arena could not be mapped, allocation is the fallback's (mimalloc).
//!
//! The arena hands out each byte once, except the tail the newest block
//! gives back when it is freed or shrunk; any other freed block stays
//! unused until the process exits, so the arena holds back at most
//! [`ARENA_BYTES`]. Populating is only a hint: a thread that runs ahead of
//! it faults as before.

#![expect(unsafe_code, reason = "a global allocator")]

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes of the arena: what start-up allocations may hold back at most.
const ARENA_BYTES: usize = 4 << 20;
/// Bytes made present per call, ahead of the allocation that reaches them.
const STEP: usize = 64 << 10;
/// The largest block the arena takes; larger ones (buffers, which are
/// often not touched whole) go to mimalloc.
const LARGEST: usize = 32 << 10;
/// `MADV_POPULATE_WRITE` (Linux 5.14); older kernels refuse it, harmlessly.
const MADV_POPULATE_WRITE: libc::c_int = 23;

/// The arena's address: [`UNMAPPED`] until the first allocation maps it,
/// [`NO_ARENA`] if that failed.
static BASE: AtomicUsize = AtomicUsize::new(UNMAPPED);
const UNMAPPED: usize = 0;
const NO_ARENA: usize = 1;
/// Offset of the arena's first byte not yet handed out.
static NEXT: AtomicUsize = AtomicUsize::new(0);
/// Offset up to which the arena has been made present.
static PRESENT: AtomicUsize = AtomicUsize::new(0);

/// The arena in front of `A`, which takes what the arena does not.
pub(crate) struct StartArena<A>(pub(crate) A);

/// The arena's address, mapping it on first use; `None` if it cannot be.
fn base() -> Option<usize> {
    match BASE.load(Ordering::Acquire) {
        NO_ARENA => None,
        UNMAPPED => map(),
        base => Some(base),
    }
}

fn map() -> Option<usize> {
    // SAFETY: a fresh private anonymous mapping, which nothing else refers
    // to until it is published below.
    let ptr = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            ARENA_BYTES,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    let mapped = if ptr == libc::MAP_FAILED {
        NO_ARENA
    } else {
        ptr as usize
    };
    match BASE.compare_exchange(UNMAPPED, mapped, Ordering::AcqRel, Ordering::Acquire) {
        Ok(_) => (mapped != NO_ARENA).then_some(mapped),
        Err(first) => {
            if mapped != NO_ARENA {
                // SAFETY: ours, never published: another thread mapped first.
                unsafe { libc::munmap(ptr, ARENA_BYTES) };
            }
            (first != NO_ARENA).then_some(first)
        }
    }
}

/// The block's offset in the arena, if it is the arena's.
fn offset_of(ptr: *mut u8) -> Option<usize> {
    match BASE.load(Ordering::Acquire) {
        UNMAPPED | NO_ARENA => None,
        base => (ptr as usize)
            .checked_sub(base)
            .filter(|&o| o < ARENA_BYTES),
    }
}

/// A block from the arena, or `None` when it is too large or does not fit.
fn bump(layout: Layout) -> Option<*mut u8> {
    if layout.size() > LARGEST {
        return None;
    }
    let base = base()?;
    let mut next = NEXT.load(Ordering::Relaxed);
    loop {
        let start = (base + next).next_multiple_of(layout.align()) - base;
        let end = start + layout.size();
        if end > ARENA_BYTES {
            return None;
        }
        match NEXT.compare_exchange_weak(next, end, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => {
                make_present(base, end);
                return Some((base + start) as *mut u8);
            }
            Err(now) => next = now,
        }
    }
}

/// Makes the arena at `base` present up to `end`, a [`STEP`] at a time.
fn make_present(base: usize, end: usize) {
    let mut present = PRESENT.load(Ordering::Relaxed);
    while end > present {
        let to = end.next_multiple_of(STEP).min(ARENA_BYTES);
        match PRESENT.compare_exchange_weak(present, to, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => {
                // SAFETY: the range lies inside the arena, page aligned (the
                // mapping is, and so is every STEP); populating changes no
                // byte of it.
                unsafe {
                    libc::madvise(
                        (base + present) as *mut libc::c_void,
                        to - present,
                        MADV_POPULATE_WRITE,
                    );
                }
                return;
            }
            Err(now) => present = now,
        }
    }
}

/// Gives back the arena's tail when `[start, end)` is its newest block,
/// keeping `keep` bytes of it; otherwise nothing.
fn trim(start: usize, end: usize, keep: usize) -> bool {
    NEXT.compare_exchange(end, start + keep, Ordering::Relaxed, Ordering::Relaxed)
        .is_ok()
}

// SAFETY: arena blocks are disjoint, aligned as asked and inside the
// arena; every other block is `A`'s, and a pointer is given back to
// whichever handed it out.
unsafe impl<A: GlobalAlloc> GlobalAlloc for StartArena<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match bump(layout) {
            Some(ptr) => ptr,
            // SAFETY: forwarded as received.
            None => unsafe { self.0.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match bump(layout) {
            Some(ptr) => {
                // SAFETY: the block is ours, `layout.size()` bytes long; it
                // may hold a trimmed block's bytes.
                unsafe { ptr.write_bytes(0, layout.size()) };
                ptr
            }
            // SAFETY: forwarded as received.
            None => unsafe { self.0.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match offset_of(ptr) {
            Some(start) => {
                trim(start, start + layout.size(), 0);
            }
            // SAFETY: `A`'s block, as received.
            None => unsafe { self.0.dealloc(ptr, layout) },
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let Some(start) = offset_of(ptr) else {
            // SAFETY: `A`'s block, as received.
            return unsafe { self.0.realloc(ptr, layout, new_size) };
        };
        let end = start + layout.size();
        if new_size <= layout.size() {
            trim(start, end, new_size);
            return ptr;
        }
        // The newest block grows in place while it fits.
        if new_size <= LARGEST && start + new_size <= ARENA_BYTES && trim(start, end, new_size) {
            make_present(ptr as usize - start, start + new_size);
            return ptr;
        }
        // SAFETY: the caller guarantees `new_size` is valid for the align.
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        // SAFETY: a fresh block of the new layout.
        let new = unsafe { self.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both blocks are live and disjoint, the old one
            // `layout.size()` bytes long.
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size());
                self.dealloc(ptr, layout);
            }
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One test, in order: what it checks last spends the arena.
    #[test]
    fn arena_blocks_are_aligned_disjoint_keep_their_bytes_and_hand_over_when_spent() {
        let a = StartArena(std::alloc::System);
        let small = Layout::from_size_align(24, 8).unwrap();
        let page = Layout::from_size_align(100, 4096).unwrap();
        unsafe {
            let x = a.alloc(small);
            let y = a.alloc(page);
            assert!(offset_of(x).is_some() && offset_of(y).is_some());
            assert_eq!(y as usize % 4096, 0);
            x.write_bytes(0xAA, 24);
            y.write_bytes(0xBB, 100);
            // x is no longer the newest block: it moves, bytes and all.
            let x2 = a.realloc(x, small, 5000);
            assert_ne!(x2, x);
            assert!((0..24).all(|i| *x2.add(i) == 0xAA));
            assert!((0..100).all(|i| *y.add(i) == 0xBB));
            // x2 is the newest: it grows in place.
            let x3 = a.realloc(x2, Layout::from_size_align(5000, 8).unwrap(), 9000);
            assert_eq!(x3, x2);
            // A zeroed block is zero even where a freed tail was written.
            x3.add(8000).write_bytes(0xCC, 1000);
            let shrunk = a.realloc(x3, Layout::from_size_align(9000, 8).unwrap(), 8000);
            let z = a.alloc_zeroed(Layout::from_size_align(1000, 8).unwrap());
            assert_eq!(z, shrunk.add(8000));
            assert!((0..1000).all(|i| *z.add(i) == 0));
            a.dealloc(y, page);
        }

        // Threads allocating at once never share a byte.
        let threads: Vec<_> = (0u8..4)
            .map(|t| {
                std::thread::spawn(move || {
                    let a = StartArena(std::alloc::System);
                    let l = Layout::from_size_align(100, 8).unwrap();
                    let blocks: Vec<usize> = (0..500)
                        .map(|_| unsafe {
                            let p = a.alloc(l);
                            p.write_bytes(t, 100);
                            p as usize
                        })
                        .collect();
                    blocks
                        .iter()
                        .all(|&p| (0..100).all(|i| unsafe { *(p as *const u8).add(i) } == t))
                })
            })
            .collect();
        for t in threads {
            assert!(
                t.join().unwrap(),
                "a block was overwritten by another thread's"
            );
        }

        // Spent, the arena hands every block to the fallback, which works.
        let l = Layout::from_size_align(LARGEST, 8).unwrap();
        let mut from_arena = 0;
        let behind = loop {
            let p = unsafe { a.alloc(l) };
            if offset_of(p).is_none() {
                break p;
            }
            from_arena += 1;
            assert!(
                from_arena <= ARENA_BYTES / LARGEST,
                "the arena gave more than it holds"
            );
        };
        unsafe {
            behind.write_bytes(1, LARGEST);
            a.dealloc(behind, l);
        }
    }

    #[test]
    fn a_block_larger_than_the_arena_takes_goes_behind_it() {
        let a = StartArena(std::alloc::System);
        let big = Layout::from_size_align(LARGEST + 1, 8).unwrap();
        unsafe {
            let p = a.alloc(big);
            assert!(offset_of(p).is_none());
            p.write_bytes(1, big.size());
            a.dealloc(p, big);
        }
    }
}
