//! Type-stable `amd_queue_t` memory for soft queues, and the lock-free lookup of a client's
//! `hsa_queue_t *`.
//!
//! ROCr turns the pointer into its queue object with arithmetic and does each index operation
//! with one atomic on the `amd_queue_t` (`hsa.cpp`: `core::Queue::Convert(queue)->
//! AddWriteIndexRelaxed(value)`), and a stale or foreign pointer is undefined behaviour. The
//! soft runtime must not dereference a pointer it did not hand out, but it must not take a lock
//! either: under contention a lock costs the index operations orders of magnitude. So every
//! `amd_queue_t` lives in a slot that is never freed (a destroyed queue's goes back to a free
//! list for the next queue), and a set of every slot ever made answers "is this one of ours"
//! with a few atomic loads. A slot's `live` flag says whether its queue still exists.

use core::cell::UnsafeCell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use aqueduct_abi::AmdQueue;

use super::memory::{Allocations, Pool};

/// A soft queue's `amd_queue_t` (its first field: the slot's address is the `hsa_queue_t *`),
/// whether the queue lives, and its doorbell word: a DOORBELL signal's value points at it, so a
/// stale store through a destroyed queue's doorbell signal lands in memory that still exists.
#[repr(C, align(64))]
pub(crate) struct QueueSlot {
    amd: UnsafeCell<AmdQueue>,
    live: AtomicBool,
    doorbell: DoorbellWord,
}

/// The doorbell word sits on its own cache line: the producer stores to it, the processor polls it.
#[repr(C, align(64))]
pub(crate) struct DoorbellWord(pub AtomicU64);
const _: () = assert!(size_of::<DoorbellWord>() == 64);

/// The doorbell value before anything was rung.
pub(crate) const DOORBELL_NEVER_RUNG: u64 = u64::MAX;

// SAFETY: the `amd_queue_t` is written plainly only while the slot is not live (by the one thread
// that took it from the free list); once live it is accessed through atomics or read-only
// fields, as ROCr's is by the host and the command processor.
unsafe impl Sync for QueueSlot {}

impl QueueSlot {
    pub(crate) fn amd_ptr(&self) -> *mut AmdQueue {
        self.amd.get()
    }

    pub(crate) fn is_live(&self) -> bool {
        self.live.load(Ordering::Acquire)
    }

    pub(crate) fn doorbell(&self) -> &DoorbellWord {
        &self.doorbell
    }
}

/// Slots ever made, at most: a runtime that had more queues at once than this refuses more.
const MAX_SLOTS: usize = 4096;
/// Open addressing over twice as many entries, so a probe stays short.
const SET_ENTRIES: usize = 2 * MAX_SLOTS;

/// The address of every slot ever made (0: empty entry). Insert-only, under [`FREE`].
static SLOTS: [AtomicUsize; SET_ENTRIES] = [const { AtomicUsize::new(0) }; SET_ENTRIES];
/// Slots whose queue was destroyed, for the next queue; and how many slots exist.
static FREE: Mutex<(Vec<&'static QueueSlot>, usize)> = Mutex::new((Vec::new(), 0));

fn first_entry(address: usize) -> usize {
    // Slots are 64-byte aligned: the low bits say nothing.
    ((address >> 6).wrapping_mul(0x9E37_79B9_7F4A_7C15)) % SET_ENTRIES
}

/// A zeroed slot for a new queue (not live yet), or `None` when [`MAX_SLOTS`] are in use.
pub(crate) fn take() -> Option<&'static QueueSlot> {
    let mut free = FREE.lock().unwrap_or_else(|poison| poison.into_inner());
    if let Some(slot) = free.0.pop() {
        // SAFETY: the slot is not live and no other thread writes a free slot.
        unsafe { slot.amd_ptr().write(bytemuck::Zeroable::zeroed()) };
        slot.doorbell.0.store(DOORBELL_NEVER_RUNG, Ordering::Release);
        return Some(slot);
    }
    if free.1 == MAX_SLOTS {
        return None;
    }
    // Leaked on purpose: slot memory stays valid for the process, so a stale pointer is harmless.
    let slot: &'static QueueSlot = Box::leak(Box::new(QueueSlot {
        amd: UnsafeCell::new(bytemuck::Zeroable::zeroed()),
        live: AtomicBool::new(false),
        doorbell: DoorbellWord(AtomicU64::new(DOORBELL_NEVER_RUNG)),
    }));
    let address = slot as *const QueueSlot as usize;
    let mut entry = first_entry(address);
    while SLOTS[entry].load(Ordering::Relaxed) != 0 {
        entry = (entry + 1) % SET_ENTRIES;
    }
    SLOTS[entry].store(address, Ordering::Release);
    free.1 += 1;
    Some(slot)
}

/// Makes `slot`'s queue visible to index operations; its `amd_queue_t` is complete.
pub(crate) fn publish(slot: &QueueSlot) {
    slot.live.store(true, Ordering::Release);
}

/// The queue is gone: index operations on its pointer see nothing from now on.
pub(crate) fn retire(slot: &QueueSlot) {
    slot.live.store(false, Ordering::Release);
}

/// Gives a retired slot back for a later queue.
pub(crate) fn give_back(slot: &'static QueueSlot) {
    retire(slot);
    FREE.lock().unwrap_or_else(|poison| poison.into_inner()).0.push(slot);
}

/// The live queue's slot at `address`, without a lock; `None` for any other address.
pub(crate) fn live(address: usize) -> Option<&'static QueueSlot> {
    if address == 0 || !address.is_multiple_of(64) {
        return None;
    }
    let mut entry = first_entry(address);
    loop {
        match SLOTS[entry].load(Ordering::Acquire) {
            0 => return None,
            found if found == address => {
                // SAFETY: the address is a slot's, leaked and initialized before it was inserted.
                let slot = unsafe { &*(address as *const QueueSlot) };
                return slot.is_live().then_some(slot);
            }
            _ => entry = (entry + 1) % SET_ENTRIES,
        }
    }
}

/// A live host queue: its `amd_queue_t` slot and its ring's allocation.
pub(crate) struct HostQueue {
    slot: &'static QueueSlot,
    ring: *mut u8,
}

// SAFETY: the ring pointer is only handed back to the allocator, under the runtime's lock.
unsafe impl Send for HostQueue {}

impl HostQueue {
    pub(crate) fn new(slot: &'static QueueSlot, ring: *mut u8) -> Self {
        Self { slot, ring }
    }

    /// Retires the queue and frees its ring to `allocations`, the allocator it came from.
    pub(crate) fn destroy(self, allocations: &Allocations, pools: &[Pool]) {
        give_back(self.slot);
        // A failure means tear-down freed the ring already.
        let _ = allocations.free(pools, self.ring);
    }
}
