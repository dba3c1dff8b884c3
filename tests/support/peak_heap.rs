//! The peak heap a piece of code takes, for the hostile-input tests: a global allocator that
//! counts, per thread, the bytes live and the most live at once. Included by path
//! (`#[path = ".../tests/support/peak_heap.rs"] mod peak_heap;`) from each crate's tests that
//! bound a reader's memory; the including test binary gets it as its global allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// Counts the bytes this thread holds, so tests running in parallel do not see each other.
struct PeakTrackingAllocator;

thread_local! {
    static LIVE_BYTES: Cell<usize> = const { Cell::new(0) };
    static PEAK_BYTES: Cell<usize> = const { Cell::new(0) };
}

fn track(delta: isize) {
    // try_with: a thread's locals may already be gone while it exits.
    let _ = LIVE_BYTES.try_with(|live| {
        let now = live.get().saturating_add_signed(delta);
        live.set(now);
        let _ = PEAK_BYTES.try_with(|peak| peak.set(peak.get().max(now)));
    });
}

// SAFETY: every call is forwarded unchanged to the system allocator; the bookkeeping allocates
// nothing (const-initialized thread locals of Cell<usize>).
unsafe impl GlobalAlloc for PeakTrackingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        track(layout.size() as isize);
        // SAFETY: the caller's contract for `alloc` is passed on as is.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        track(-(layout.size() as isize));
        // SAFETY: as for `alloc`.
        unsafe { System.dealloc(pointer, layout) }
    }
    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        track(new_size as isize - layout.size() as isize);
        // SAFETY: as for `alloc`.
        unsafe { System.realloc(pointer, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: PeakTrackingAllocator = PeakTrackingAllocator;

/// Runs `work` and returns its result with the peak heap it took above what was live before.
/// Calls nest: an outer measurement includes an inner one's peak.
pub fn measured<T>(work: impl FnOnce() -> T) -> (T, usize) {
    let before = LIVE_BYTES.with(Cell::get);
    PEAK_BYTES.with(|peak| peak.set(peak.get().max(before)));
    let outer_peak = PEAK_BYTES.with(|peak| peak.replace(before));
    let result = work();
    let peak = PEAK_BYTES.with(Cell::get);
    // Restore the enclosing measurement's peak, raised by this one.
    PEAK_BYTES.with(|cell| cell.set(outer_peak.max(peak)));
    (result, peak - before)
}
