//! One semaphore slot's atomics and the lock-free protocol over them: the timeline value, the
//! sticky failure, the promise, and the seqlocked producer record.
//!
//! This file depends on nothing but `core` and the atomics below, so `loom-models/` includes it
//! by path and model-checks this very code under `--cfg loom` (the shim costs nothing otherwise).
//!
//! - **Value**: only rises ([`SemaphoreSlot::signal`] is a `fetch_max`).
//! - **Failure**: 0 while healthy; the first tag stored wins ([`SemaphoreSlot::fail`]).
//! - **Producer record**: a seqlock. A writer takes it with a compare-and-swap on `sequence` (odd
//!   while writing), stores the record and releases it with `sequence + 2`; a reader retries
//!   until it reads the same even `sequence` before and after, so it sees one writer's
//!   (value, previous value, producer, frontier), never a mix.

#[cfg(loom)]
use loom::sync::atomic::{AtomicU32, AtomicU64, Ordering};
#[cfg(not(loom))]
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Words of a producer's frontier the record holds (`frontier::FRONTIER_ENTRIES`, asserted equal
/// there).
pub const RECORD_FRONTIER_WORDS: usize = 8;

/// Waits a moment for a seqlock writer; under loom, lets the writer run (a spin would never end).
#[inline]
fn spin() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    core::hint::spin_loop();
}

/// One semaphore's atomics: two cache lines, so two semaphores never share one. Everything a
/// wait that needs no barrier reads is in the first line (bytes 0..48); the record's frontier
/// (bytes 48..112) is read only for a wait that becomes a barrier.
#[repr(C, align(64))]
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
    /// The queued signal's producer as a packed word (`Producer::pack`); 0 when none is recorded.
    pub producer: AtomicU64,
    /// The highest value any accepted submission, published or parked, will set. The producer
    /// record can move to a lower value (a parked submission published after a later, higher
    /// one) and a parked submission has no record yet, but a new signal must exceed them all.
    pub promised: AtomicU64,
    /// The producer's frontier words, part of the seqlocked record; read up to the first 0.
    pub frontier: [AtomicU64; RECORD_FRONTIER_WORDS],
    /// 0 while a handle to the semaphore lives. After the last one dropped nothing new can
    /// promise a value, so a wait past every promise can never be met:
    /// [`ORPHANED_UNRECORDED`] until such a wait first fails, then 1 + the failure-log index of
    /// the record it failed with (shared by the waits after it).
    pub orphaned: AtomicU32,
}

/// [`SemaphoreSlot::orphaned`]: the last handle dropped, and no wait has failed on it yet.
pub const ORPHANED_UNRECORDED: u32 = u32::MAX;

/// [`SemaphoreSlot::orphan_verdict`]: what becomes of a wait no producer record covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrphanVerdict {
    /// A handle lives: the wait waits.
    Live,
    /// No handle lives, and something promised the value: the wait waits for it.
    Promised,
    /// The semaphore failed (the failure tag): the wait fails with it.
    Failed(u32),
    /// No handle lives and nothing promised the value: it can never come. The `orphaned` tag.
    Unreachable(u32),
}

#[cfg(not(loom))]
const _: () = assert!(core::mem::size_of::<SemaphoreSlot>() == 128);
#[cfg(not(loom))]
const _: () = assert!(core::mem::offset_of!(SemaphoreSlot, promised) == 40);
#[cfg(not(loom))]
const _: () = assert!(core::mem::offset_of!(SemaphoreSlot, frontier) == 48);

impl Default for SemaphoreSlot {
    fn default() -> Self {
        Self {
            value: AtomicU64::new(0),
            failure: AtomicU32::new(0),
            sequence: AtomicU32::new(0),
            queued_value: AtomicU64::new(0),
            queued_before: AtomicU64::new(0),
            producer: AtomicU64::new(0),
            promised: AtomicU64::new(0),
            frontier: core::array::from_fn(|_| AtomicU64::new(0)),
            orphaned: AtomicU32::new(0),
        }
    }
}

/// A consistent snapshot of the producer record (without its frontier).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordSnapshot {
    pub queued_value: u64,
    pub queued_before: u64,
    /// The packed producer; 0 when none is recorded.
    pub producer: u64,
}

impl SemaphoreSlot {
    /// Resets a slot no one else holds: empty record, promise and failure, timeline `initial`.
    /// The release store of the value publishes the reset with the handle.
    pub fn reset(&self, initial: u64) {
        self.failure.store(0, Ordering::Relaxed);
        self.orphaned.store(0, Ordering::Relaxed);
        self.queued_value.store(initial, Ordering::Relaxed);
        self.queued_before.store(initial, Ordering::Relaxed);
        self.producer.store(0, Ordering::Relaxed);
        self.frontier.iter().for_each(|word| word.store(0, Ordering::Relaxed));
        self.promised.store(initial, Ordering::Relaxed);
        self.value.store(initial, Ordering::Release);
    }

    #[inline]
    pub fn value(&self) -> u64 {
        self.value.load(Ordering::Acquire)
    }

    /// 0 while healthy, else 1 + the failure-log index.
    #[inline]
    pub fn failure_tag(&self) -> u32 {
        self.failure.load(Ordering::Acquire)
    }

    /// Stores `tag` (non-zero) unless a failure is already recorded. Returns whether this call
    /// failed the slot.
    #[inline]
    pub fn fail(&self, tag: u32) -> bool {
        self.failure.compare_exchange(0, tag, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    /// Marks the last handle gone (see [`Self::orphaned`]).
    pub fn orphan(&self) {
        let _ = self.orphaned.compare_exchange(0, ORPHANED_UNRECORDED, Ordering::AcqRel, Ordering::Acquire);
    }

    /// What the slot says of a wait for `value` that no producer record covers, once its last
    /// handle may be gone. The failure and the promise are read *after* the orphaning: whatever
    /// a handle did (fail, signal, queue a signal) happened before the handle's drop, which the
    /// acquire load of `orphaned` orders before these reads. Read before it, a failure or a
    /// signal racing the drop was missed and the wait failed as unreachable (a soak found it).
    #[inline]
    pub fn orphan_verdict(&self, value: u64) -> OrphanVerdict {
        let tag = self.orphaned.load(Ordering::Acquire);
        if tag == 0 {
            return OrphanVerdict::Live;
        }
        match self.failure_tag() {
            0 if self.highest_promised() >= value => OrphanVerdict::Promised,
            0 => OrphanVerdict::Unreachable(tag),
            failure => OrphanVerdict::Failed(failure),
        }
    }

    /// Raises the timeline to `value` (never lowers it). Returns whether the value changed.
    #[inline]
    pub fn signal(&self, value: u64) -> bool {
        self.value.fetch_max(value, Ordering::AcqRel) < value
    }

    #[inline]
    pub fn highest_promised(&self) -> u64 {
        self.value.load(Ordering::Acquire).max(self.promised.load(Ordering::Acquire))
    }

    /// Promises that something will raise the timeline to `value`.
    #[inline]
    pub fn promise(&self, value: u64) {
        self.promised.fetch_max(value, Ordering::AcqRel);
    }

    /// Reads the record under the seqlock.
    #[inline]
    pub fn read_record(&self) -> RecordSnapshot {
        loop {
            let before = self.sequence.load(Ordering::Acquire);
            if before & 1 == 1 {
                spin();
                continue;
            }
            let queued_value = self.queued_value.load(Ordering::Acquire);
            let queued_before = self.queued_before.load(Ordering::Acquire);
            let producer = self.producer.load(Ordering::Acquire);
            if self.sequence.load(Ordering::Acquire) == before {
                return RecordSnapshot { queued_value, queued_before, producer };
            }
        }
    }

    /// The record's frontier words if the record still names `producer` (packed), read under the
    /// seqlock; zero from the first 0 on.
    #[inline]
    pub fn read_frontier(&self, producer: u64) -> Option<[u64; RECORD_FRONTIER_WORDS]> {
        loop {
            let before = self.sequence.load(Ordering::Acquire);
            if before & 1 == 1 {
                spin();
                continue;
            }
            if self.producer.load(Ordering::Acquire) != producer {
                return None;
            }
            // Up to the list's end marker; the words after it may be stale.
            let mut words = [0; RECORD_FRONTIER_WORDS];
            for (word, stored) in words.iter_mut().zip(&self.frontier) {
                *word = stored.load(Ordering::Acquire);
                if *word == 0 {
                    break;
                }
            }
            if self.sequence.load(Ordering::Acquire) == before {
                return Some(words);
            }
        }
    }

    /// Records that `producer` (packed, non-zero) will raise the timeline to `value`, with its
    /// frontier words (a 0 ends the list), and promises `value`.
    #[inline]
    pub fn write_record(&self, value: u64, producer: u64, frontier: &[u64; RECORD_FRONTIER_WORDS]) {
        loop {
            let sequence = self.sequence.load(Ordering::Relaxed);
            if sequence & 1 == 0
                && self
                    .sequence
                    .compare_exchange_weak(sequence, sequence + 1, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                let previous = self.queued_value.load(Ordering::Relaxed);
                self.queued_before.store(previous.max(self.value.load(Ordering::Relaxed)), Ordering::Release);
                self.queued_value.store(value, Ordering::Release);
                self.producer.store(producer, Ordering::Release);
                // Up to the list's end marker: readers ignore the words after the first 0.
                for (word, stored) in frontier.iter().zip(&self.frontier) {
                    stored.store(*word, Ordering::Release);
                    if *word == 0 {
                        break;
                    }
                }
                self.promised.fetch_max(value, Ordering::AcqRel);
                self.sequence.store(sequence + 2, Ordering::Release);
                return;
            }
            spin();
        }
    }
}
