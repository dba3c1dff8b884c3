//! The hot semaphore state: one dense array of atomics per device.
//!
//! Any queue reads a slot without taking a lock: its timeline value, whether it failed, and which
//! queued submission will next raise it (the *producer record*). The record is a seqlock so a
//! reader sees a consistent (value, previous value, queue, epoch, frontier) tuple; writers
//! (submissions that signal the semaphore) take the seqlock with a compare-and-swap. The frontier
//! is what the producer's queue was known to have reached when it was published
//! ([`crate::frontier`]), so a waiter that emits a barrier on the producer learns it too.
//!
//! A slot's atomics and their lock-free protocol are in [`crate::semaphore_slot`], which
//! `loom-models/` model-checks. This module holds the table; the table's behaviour (allocation,
//! the failure log, host parking) lives in `aqueduct-systems`' `sync` module.
//!
//! Every slot is allocated when the table is created, so finding one is an index into one slice.
//! Slots are recycled through a free list once a dropped semaphore is released: only after every
//! submission enqueued before its last handle dropped has settled (see `device_entities`), so a slot
//! is never reused while work can still touch it.
//!
//! **Contract.** Slot values, failures, promises and records are read and written without a lock.
//! `free` and `failures` are leaf mutexes (slot allocation and release, the failure log). A slot goes
//! back to the free list only through the device's deferred release.

use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Mutex};

/// Most semaphores one table holds (128 MiB of slots).
pub const MAX_SEMAPHORES: usize = 1 << 20;

use crate::dependency::Producer;
pub use crate::semaphore_slot::{RecordSnapshot, SemaphoreSlot};

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

pub use crate::host_waiters::HostWaiters;

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
