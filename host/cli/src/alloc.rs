//! The CLI's allocator on Linux: a start-up arena in front of the C
//! library's allocator, or of mimalloc in a static musl build.
//!
//! A fresh process pays a page fault for the first touch of every heap
//! page (about 2 µs each on a virtual machine). mimalloc keeps each size
//! class on its own 64 KiB page, so the few hundred KiB a `run` allocates
//! while it starts were spread over some 150 pages touched one at a time
//! (glibc's heap is denser, but still faults page by page).
//! Here the small allocations of a process's start come instead from one
//! arena, mapped on the first allocation (anywhere the kernel chooses, so
//! its address tells nothing of the binary's). Each thread takes a
//! [`CHUNK`] of it at a time, made present with one
//! `madvise(MADV_POPULATE_WRITE)` (a fifth of the cost per page), and hands
//! out its blocks in order with no atomic operation. Once the arena is
//! spent, or for any block larger than [`LARGEST`], or if the arena could
//! not be mapped, allocation is the fallback's.
//!
//! The arena hands out each byte once, except the tail the newest block of
//! a thread's current chunk gives back to that thread when it is freed or
//! shrunk there; any other freed block stays unused until the process
//! exits, so the arena holds back at most [`ARENA_BYTES`]. Populating is
//! only a hint: an older kernel refuses it and the pages fault as before.

#![expect(unsafe_code, reason = "a global allocator")]

use std::alloc::{GlobalAlloc, Layout};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes of the arena: what start-up allocations may hold back at most.
const ARENA_BYTES: usize = 4 << 20;
/// Bytes a thread takes from the arena at a time, made present at once.
const CHUNK: usize = 64 << 10;
/// The largest block the arena takes; larger ones (buffers, which are
/// often not touched whole) go to the fallback.
const LARGEST: usize = 16 << 10;
/// `MADV_POPULATE_WRITE` (Linux 5.14); older kernels refuse it, harmlessly.
const MADV_POPULATE_WRITE: libc::c_int = 23;

/// The arena's address: [`UNMAPPED`] until the first allocation maps it,
/// [`NO_ARENA`] if that failed.
static BASE: AtomicUsize = AtomicUsize::new(UNMAPPED);
const UNMAPPED: usize = 0;
const NO_ARENA: usize = 1;
/// Offset of the arena's first chunk not yet taken.
static TAKEN: AtomicUsize = AtomicUsize::new(0);

/// A thread's current chunk: `[start, end)`, handed out up to `next`
/// (addresses; all zero before its first chunk).
struct Cursor {
    start: Cell<usize>,
    next: Cell<usize>,
    end: Cell<usize>,
}

thread_local! {
    static CURSOR: Cursor = const {
        Cursor { start: Cell::new(0), next: Cell::new(0), end: Cell::new(0) }
    };
}

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

/// Whether the block is the arena's.
fn in_arena(ptr: *mut u8) -> bool {
    match BASE.load(Ordering::Acquire) {
        UNMAPPED | NO_ARENA => false,
        base => (ptr as usize).wrapping_sub(base) < ARENA_BYTES,
    }
}

/// `at` rounded up to `align`, a power of two.
fn align_up(at: usize, align: usize) -> usize {
    (at + align - 1) & !(align - 1)
}

/// A fresh chunk for this thread, present; `None` once the arena is spent.
fn take_chunk() -> Option<usize> {
    // Once the arena is spent, a load (which threads share without
    // contention) says so, rather than a write to the counter per block.
    if TAKEN.load(Ordering::Relaxed) >= ARENA_BYTES {
        return None;
    }
    let base = base()?;
    let offset = TAKEN.fetch_add(CHUNK, Ordering::Relaxed);
    if offset + CHUNK > ARENA_BYTES {
        return None;
    }
    let chunk = base + offset;
    // SAFETY: the chunk lies inside the arena and is page aligned (the
    // mapping is, and so is every CHUNK); populating changes no byte of it.
    unsafe { libc::madvise(chunk as *mut libc::c_void, CHUNK, MADV_POPULATE_WRITE) };
    Some(chunk)
}

/// A block from this thread's chunk (or a fresh one), or `None` when it is
/// too large, over-aligned, or the arena is spent.
fn bump(layout: Layout) -> Option<*mut u8> {
    if layout.size() > LARGEST || layout.align() > CHUNK - LARGEST {
        return None;
    }
    CURSOR
        .try_with(|c| {
            let start = align_up(c.next.get(), layout.align());
            if c.next.get() != 0 && start + layout.size() <= c.end.get() {
                c.next.set(start + layout.size());
                return Some(start as *mut u8);
            }
            let chunk = take_chunk()?;
            let start = align_up(chunk, layout.align());
            c.start.set(chunk);
            c.next.set(start + layout.size());
            c.end.set(chunk + CHUNK);
            Some(start as *mut u8)
        })
        .ok()
        .flatten()
}

/// Moves the end of the block at `ptr`, `old` bytes long, to `new` bytes
/// when it is the newest of this thread's current chunk and fits there;
/// otherwise nothing. Whether it moved.
fn resize_newest(ptr: *mut u8, old: usize, new: usize) -> bool {
    let at = ptr as usize;
    CURSOR
        .try_with(|c| {
            let newest = at >= c.start.get() && at + old == c.next.get();
            let fits = at + new <= c.end.get();
            if newest && fits {
                c.next.set(at + new);
            }
            newest && fits
        })
        .unwrap_or(false)
}

// SAFETY: arena blocks are disjoint (a chunk is one thread's, and a thread
// hands out each byte of it once but for its newest block's tail), aligned
// as asked and inside the arena; every other block is `A`'s, and a pointer
// is given back to whichever handed it out.
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
                // may hold a freed tail's bytes.
                unsafe { ptr.write_bytes(0, layout.size()) };
                ptr
            }
            // SAFETY: forwarded as received.
            None => unsafe { self.0.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if in_arena(ptr) {
            resize_newest(ptr, layout.size(), 0);
        } else {
            // SAFETY: `A`'s block, as received.
            unsafe { self.0.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !in_arena(ptr) {
            // SAFETY: `A`'s block, as received.
            return unsafe { self.0.realloc(ptr, layout, new_size) };
        }
        if new_size <= layout.size() {
            resize_newest(ptr, layout.size(), new_size);
            return ptr;
        }
        if new_size <= LARGEST && resize_newest(ptr, layout.size(), new_size) {
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
            assert!(in_arena(x) && in_arena(y));
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

        // Threads allocating at once never share a byte: every block is
        // written with its own pattern before any is checked, and no two
        // blocks of any thread overlap.
        let start = std::sync::Arc::new(std::sync::Barrier::new(4));
        let written = std::sync::Arc::new(std::sync::Barrier::new(4));
        let threads: Vec<_> = (0u8..4)
            .map(|t| {
                let (start, written) = (start.clone(), written.clone());
                std::thread::spawn(move || {
                    let a = StartArena(std::alloc::System);
                    let l = Layout::from_size_align(100, 8).unwrap();
                    start.wait();
                    let blocks: Vec<usize> = (0..500u32)
                        .map(|i| unsafe {
                            let p = a.alloc(l);
                            p.write_bytes(t ^ (i as u8), 100);
                            p as usize
                        })
                        .collect();
                    written.wait();
                    let intact = blocks.iter().enumerate().all(|(i, &p)| {
                        (0..100).all(|k| unsafe { *(p as *const u8).add(k) } == t ^ (i as u8))
                    });
                    (blocks, intact)
                })
            })
            .collect();
        let mut spans = Vec::new();
        for t in threads {
            let (blocks, intact) = t.join().unwrap();
            assert!(intact, "a block was overwritten by another's");
            spans.extend(blocks.into_iter().map(|p| (p, p + 100)));
        }
        spans.sort_unstable();
        assert_eq!(spans.len(), 2000);
        assert!(
            spans.windows(2).all(|w| w[0].1 <= w[1].0),
            "two blocks overlap"
        );

        // A block freed on another thread gives nothing back to either.
        let l = Layout::from_size_align(64, 8).unwrap();
        let p = unsafe { a.alloc(l) } as usize;
        let other = std::thread::spawn(move || {
            let a = StartArena(std::alloc::System);
            unsafe {
                a.dealloc(p as *mut u8, l);
                a.alloc(l) as usize
            }
        })
        .join()
        .unwrap();
        let here = unsafe { a.alloc(l) } as usize;
        assert!(
            other != p && here != p,
            "a block freed elsewhere was handed out again"
        );

        // Spent, the arena hands every block to the fallback, which works.
        let l = Layout::from_size_align(LARGEST, 8).unwrap();
        let mut from_arena = 0;
        let behind = loop {
            let p = unsafe { a.alloc(l) };
            if !in_arena(p) {
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
    fn a_block_too_large_or_too_aligned_for_the_arena_goes_behind_it() {
        let a = StartArena(std::alloc::System);
        let big = Layout::from_size_align(LARGEST + 1, 8).unwrap();
        let aligned = Layout::from_size_align(64, CHUNK).unwrap();
        for l in [big, aligned] {
            unsafe {
                let p = a.alloc(l);
                assert!(!p.is_null() && !in_arena(p), "{l:?} came from the arena");
                assert_eq!(p as usize % l.align(), 0);
                p.write_bytes(1, l.size());
                a.dealloc(p, l);
            }
        }
    }
}
