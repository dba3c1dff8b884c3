//! The hot semaphore state: one dense array of atomics per device.
//!
//! Any queue reads a slot without taking a lock: its timeline value, whether it failed, and which
//! queued submission will next raise it (the *producer record*). The record is a seqlock so a
//! reader sees a consistent (value, previous value, queue, epoch, frontier) tuple; writers
//! (submissions that signal the semaphore) take the seqlock with a compare-and-swap. The frontier
//! is what the producer's queue was known to have reached when it was published
//! ([`crate::frontier`]), so a waiter that emits a barrier on the producer learns it too.
//!
//! This module holds the data only. The protocol over it (allocation, the seqlock's writers and
//! readers, promises, failures) and the parking of host waiters are behaviour, and live in
//! `aqueduct-systems`' `sync` module.
//!
//! Every slot is allocated when the table is created, so finding one is an index into one slice.
//! Slots are recycled through a free list once a dropped semaphore is released: only after every
//! submission staged before its last handle dropped has settled (see `device_entities`), so a slot
//! is never reused while work can still touch it.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize};
use std::sync::{Arc, Condvar, Mutex};

use crate::frontier::FRONTIER_ENTRIES;

/// Most semaphores one table holds (128 MiB of slots).
pub const MAX_SEMAPHORES: usize = 1 << 20;

/// One semaphore's atomics: two cache lines, so two semaphores never share one. Everything a
/// wait that needs no barrier reads is in the first line (bytes 0..48); the record's frontier
/// (bytes 48..112) is read only for a wait that becomes a barrier.
#[repr(C, align(64))]
#[derive(Default)]
pub struct SemaphoreSlot {
    pub value: AtomicU64,
    /// 0 while healthy; otherwise 1 + an index into the table's failure log.
    pub failure: AtomicU32,
    /// Seqlock over the producer record: odd while a writer updates it.
    pub sequence: AtomicU32,
    /// The value the most recently queued signal will set.
    pub queued_value: AtomicU64,
    /// The highest value queued before that one: the record is the exact producer of every
    /// value in `(queued_before, queued_value]`.
    pub queued_before: AtomicU64,
    /// The queued signal's producer, packed by [`Producer::pack`]; 0 when none is recorded.
    pub producer: AtomicU64,
    /// The highest value any accepted submission, published or parked, will set. The producer
    /// record can move to a lower value (a parked submission published after a later, higher
    /// one) and a parked submission has no record yet, but a new signal must exceed them all.
    pub promised: AtomicU64,
    /// The producer's frontier (`Frontier::words`), part of the seqlocked record.
    pub frontier: [AtomicU64; FRONTIER_ENTRIES],
}

const _: () = assert!(core::mem::size_of::<SemaphoreSlot>() == 128);
const _: () = assert!(core::mem::offset_of!(SemaphoreSlot, promised) == 40);
const _: () = assert!(core::mem::offset_of!(SemaphoreSlot, frontier) == 48);

/// A queue position: the submission with `epoch` on queue `queue`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Producer {
    pub queue: u16,
    pub epoch: u64,
}

impl Producer {
    const EPOCH_BITS: u32 = 48;

    /// The record's word: `(queue + 1) << 48 | epoch`, never 0.
    #[inline]
    pub fn pack(self) -> u64 {
        (u64::from(self.queue) + 1) << Self::EPOCH_BITS | (self.epoch & ((1 << Self::EPOCH_BITS) - 1))
    }

    /// The producer a record's word names; `None` for 0 (no record).
    #[inline]
    pub fn unpack(word: u64) -> Option<Self> {
        let queue = word >> Self::EPOCH_BITS;
        (queue != 0).then(|| Self { queue: (queue - 1) as u16, epoch: word & ((1 << Self::EPOCH_BITS) - 1) })
    }
}

/// What a wait on `(semaphore, value)` depends on, as admission sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WaitSource {
    /// The timeline already holds the value.
    Satisfied,
    /// The semaphore failed; the index is into the failure log.
    Failed(u32),
    /// Exactly this queued submission raises the semaphore to at least the value.
    Queued(Producer),
    /// Nothing queued is known to reach the value: wait-before-signal, a host signal to come, or a
    /// producer older than the record. The waiter must defer.
    Unknown,
}

/// Why a semaphore failed, recorded once and shared by every semaphore the failure reaches.
#[derive(Debug, PartialEq, Eq)]
pub struct FailureRecord {
    /// The HSA status behind the failure, if one caused it.
    pub status: Option<u32>,
    pub message: String,
}

/// Where host waiters park; signallers only touch the mutex when someone is parked.
#[derive(Default)]
pub struct HostWaiters {
    /// Host threads parked, or about to park.
    pub parked: AtomicUsize,
    /// Bumped by every wake-up; the mutex the condvar waits with.
    pub generation: Mutex<u64>,
    pub condvar: Condvar,
}

/// The device's semaphores.
pub struct SemaphoreTable {
    slots: Box<[SemaphoreSlot]>,
    /// Released slots, handed out again before unused ones.
    pub free: Mutex<Vec<u32>>,
    /// Every slot below this index has been handed out at least once.
    pub next_unused: AtomicU32,
    /// Every failure recorded; a failed slot holds 1 + its index here.
    pub failures: Mutex<Vec<Arc<FailureRecord>>>,
    pub waiters: HostWaiters,
}

/// The table is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableFull {
    pub capacity: usize,
}

impl SemaphoreTable {
    /// A table with room for `capacity` live semaphores (at least 1, at most [`MAX_SEMAPHORES`]).
    pub fn new(capacity: usize) -> Self {
        Self {
            slots: (0..capacity.clamp(1, MAX_SEMAPHORES)).map(|_| SemaphoreSlot::default()).collect(),
            free: Mutex::new(Vec::new()),
            next_unused: AtomicU32::new(0),
            failures: Mutex::new(Vec::new()),
            waiters: HostWaiters::default(),
        }
    }

    #[inline]
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// The slot at `index`, which the table handed out.
    #[inline]
    pub fn slot(&self, index: u32) -> &SemaphoreSlot {
        &self.slots[index as usize]
    }
}
