//! The hot semaphore state: one dense, chunked array of atomics per device.
//!
//! Any queue reads a slot without taking a lock: its timeline value, whether it failed, and which
//! queued submission will next raise it (the *producer record*). The record is a seqlock so a
//! reader sees a consistent (value, previous value, queue, epoch, frontier) tuple; writers
//! (submissions that signal the semaphore) take the seqlock with a compare-and-swap. The frontier
//! is what the producer's queue was known to have reached when it was published
//! ([`crate::frontier`]), so a waiter that emits a barrier on the producer learns it too.
//!
//! Slots are recycled through a free list when a semaphore handle is dropped; a submission that
//! signals a semaphore retains its handle, so a slot is never reused while work can still touch it.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Instant;

use crate::frontier::{FRONTIER_ENTRIES, Frontier};

const SLOTS_PER_CHUNK: usize = 1024;

/// One semaphore's atomics: two cache lines, so two semaphores never share one. Everything a
/// wait that needs no barrier reads is in the first line (bytes 0..48); the record's frontier
/// (bytes 48..112) is read only for a wait that becomes a barrier.
#[repr(C, align(64))]
#[derive(Default)]
pub struct SemaphoreSlot {
    value: AtomicU64,
    /// 0 while healthy; otherwise 1 + an index into the table's failure log.
    failure: AtomicU32,
    /// Seqlock over the producer record: odd while a writer updates it.
    sequence: AtomicU32,
    /// The value the most recently queued signal will set.
    queued_value: AtomicU64,
    /// The highest value queued before that one: the record is the exact producer of every
    /// value in `(queued_before, queued_value]`.
    queued_before: AtomicU64,
    /// The queued signal's producer, packed by [`Producer::pack`]; 0 when none is recorded.
    producer: AtomicU64,
    /// The highest value any accepted submission, published or parked, will set. The producer
    /// record can move to a lower value (a parked submission published after a later, higher
    /// one) and a parked submission has no record yet, but a new signal must exceed them all.
    promised: AtomicU64,
    /// The producer's frontier ([`Frontier::words`]), part of the seqlocked record.
    frontier: [AtomicU64; FRONTIER_ENTRIES],
}

const _: () = assert!(core::mem::size_of::<SemaphoreSlot>() == 128);

/// A queue position: the submission with `epoch` on queue `queue`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Producer {
    pub queue: u16,
    pub epoch: u64,
}

impl Producer {
    const EPOCH_BITS: u32 = 48;

    fn pack(self) -> u64 {
        (u64::from(self.queue) + 1) << Self::EPOCH_BITS | (self.epoch & ((1 << Self::EPOCH_BITS) - 1))
    }

    fn unpack(word: u64) -> Option<Self> {
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

/// Host waiters park here; signallers only touch the mutex when someone is parked.
#[derive(Default)]
struct Notifier {
    parked: AtomicUsize,
    lock: Mutex<u64>,
    condvar: Condvar,
}

/// The device's semaphores.
pub struct SemaphoreTable {
    chunks: Box<[OnceLock<Box<[SemaphoreSlot]>>]>,
    free: Mutex<Vec<u32>>,
    next_unused: AtomicU32,
    failures: Mutex<Vec<Arc<FailureRecord>>>,
    notifier: Notifier,
}

/// The table is full.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableFull {
    pub capacity: usize,
}

impl SemaphoreTable {
    /// A table with room for `capacity` live semaphores (rounded up to a whole chunk).
    pub fn new(capacity: usize) -> Self {
        let chunks = capacity.div_ceil(SLOTS_PER_CHUNK).max(1);
        Self {
            chunks: (0..chunks).map(|_| OnceLock::new()).collect(),
            free: Mutex::new(Vec::new()),
            next_unused: AtomicU32::new(0),
            failures: Mutex::new(Vec::new()),
            notifier: Notifier::default(),
        }
    }

    pub fn capacity(&self) -> usize {
        self.chunks.len() * SLOTS_PER_CHUNK
    }

    /// Takes a slot and sets its value.
    pub fn allocate(&self, initial: u64) -> Result<u32, TableFull> {
        let index = {
            let mut free = self.free.lock().unwrap_or_else(|poison| poison.into_inner());
            match free.pop() {
                Some(index) => index,
                None => {
                    let index = self.next_unused.load(Ordering::Relaxed);
                    if index as usize >= self.capacity() {
                        return Err(TableFull { capacity: self.capacity() });
                    }
                    self.next_unused.store(index + 1, Ordering::Relaxed);
                    index
                }
            }
        };
        let slot = self.slot(index);
        slot.failure.store(0, Ordering::Relaxed);
        slot.queued_value.store(initial, Ordering::Relaxed);
        slot.queued_before.store(initial, Ordering::Relaxed);
        slot.producer.store(0, Ordering::Relaxed);
        slot.frontier.iter().for_each(|word| word.store(0, Ordering::Relaxed));
        slot.promised.store(initial, Ordering::Relaxed);
        slot.value.store(initial, Ordering::Release);
        Ok(index)
    }

    /// Returns a slot to the free list. The caller guarantees nothing references it any more.
    pub fn release(&self, index: u32) {
        self.free.lock().unwrap_or_else(|poison| poison.into_inner()).push(index);
    }

    fn slot(&self, index: u32) -> &SemaphoreSlot {
        let index = index as usize;
        let chunk = self.chunks[index / SLOTS_PER_CHUNK]
            .get_or_init(|| (0..SLOTS_PER_CHUNK).map(|_| SemaphoreSlot::default()).collect());
        &chunk[index % SLOTS_PER_CHUNK]
    }

    pub fn value(&self, index: u32) -> u64 {
        self.slot(index).value.load(Ordering::Acquire)
    }

    /// The failure-log index, if the semaphore failed.
    pub fn failure(&self, index: u32) -> Option<u32> {
        match self.slot(index).failure.load(Ordering::Acquire) {
            0 => None,
            tagged => Some(tagged - 1),
        }
    }

    pub fn failure_record(&self, failure: u32) -> Option<Arc<FailureRecord>> {
        self.failures.lock().unwrap_or_else(|poison| poison.into_inner()).get(failure as usize).cloned()
    }

    /// Records a failure once; every semaphore it reaches shares the index.
    pub fn record_failure(&self, record: FailureRecord) -> u32 {
        let mut failures = self.failures.lock().unwrap_or_else(|poison| poison.into_inner());
        failures.push(Arc::new(record));
        (failures.len() - 1) as u32
    }

    /// The highest value the semaphore holds or has been queued (published or parked) to reach;
    /// a new signal must exceed it.
    pub fn highest_promised(&self, index: u32) -> u64 {
        let slot = self.slot(index);
        slot.value.load(Ordering::Acquire).max(slot.promised.load(Ordering::Acquire))
    }

    /// Records that a parked submission will raise the semaphore to `value` once admitted.
    pub fn record_parked_signal(&self, index: u32, value: u64) {
        self.slot(index).promised.fetch_max(value, Ordering::AcqRel);
    }

    /// Classifies a wait for `value`.
    #[inline]
    pub fn wait_source(&self, index: u32, value: u64) -> WaitSource {
        let slot = self.slot(index);
        if let Some(failure) = self.failure(index) {
            return WaitSource::Failed(failure);
        }
        if slot.value.load(Ordering::Acquire) >= value {
            return WaitSource::Satisfied;
        }
        loop {
            let before = slot.sequence.load(Ordering::Acquire);
            if before & 1 == 1 {
                core::hint::spin_loop();
                continue;
            }
            let queued = slot.queued_value.load(Ordering::Acquire);
            let queued_before = slot.queued_before.load(Ordering::Acquire);
            let producer = slot.producer.load(Ordering::Acquire);
            if slot.sequence.load(Ordering::Acquire) != before {
                continue;
            }
            return match Producer::unpack(producer) {
                Some(producer) if queued >= value && queued_before < value => WaitSource::Queued(producer),
                _ => WaitSource::Unknown,
            };
        }
    }

    /// The frontier recorded with `producer`, if the record still names it (a later signal may
    /// have replaced it: then nothing is known, which only costs elision).
    #[inline]
    pub fn queued_frontier(&self, index: u32, producer: Producer) -> Option<Frontier> {
        let slot = self.slot(index);
        let expected = producer.pack();
        loop {
            let before = slot.sequence.load(Ordering::Acquire);
            if before & 1 == 1 {
                core::hint::spin_loop();
                continue;
            }
            if slot.producer.load(Ordering::Acquire) != expected {
                return None;
            }
            // Up to the list's end marker; the words after it may be stale.
            let mut words = [0; FRONTIER_ENTRIES];
            for (word, stored) in words.iter_mut().zip(&slot.frontier) {
                *word = stored.load(Ordering::Acquire);
                if *word == 0 {
                    break;
                }
            }
            if slot.sequence.load(Ordering::Acquire) == before {
                // Zero from the first 0 on, as a frontier's words are.
                return Some(Frontier::from_dense_words(words));
            }
        }
    }

    /// Records that `producer` will raise the semaphore to `value`, with no frontier.
    pub fn record_queued_signal(&self, index: u32, value: u64, producer: Producer) {
        self.record_queued_signal_with_frontier(index, value, producer, &Frontier::EMPTY);
    }

    /// Records that `producer` will raise the semaphore to `value`, and what its queue had reached
    /// before it (`frontier`).
    #[inline]
    pub fn record_queued_signal_with_frontier(&self, index: u32, value: u64, producer: Producer, frontier: &Frontier) {
        let slot = self.slot(index);
        loop {
            let sequence = slot.sequence.load(Ordering::Relaxed);
            if sequence & 1 == 0
                && slot
                    .sequence
                    .compare_exchange_weak(sequence, sequence + 1, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                let previous = slot.queued_value.load(Ordering::Relaxed);
                slot.queued_before.store(previous.max(slot.value.load(Ordering::Relaxed)), Ordering::Release);
                slot.queued_value.store(value, Ordering::Release);
                slot.producer.store(producer.pack(), Ordering::Release);
                // Up to the list's end marker: readers ignore the words after the first 0.
                for (word, stored) in frontier.words().iter().zip(&slot.frontier) {
                    stored.store(*word, Ordering::Release);
                    if *word == 0 {
                        break;
                    }
                }
                slot.promised.fetch_max(value, Ordering::AcqRel);
                slot.sequence.store(sequence + 2, Ordering::Release);
                return;
            }
            core::hint::spin_loop();
        }
    }

    /// Raises the timeline to `value` (never lowers it). Returns whether the value changed.
    /// Call [`Self::notify`] after a batch of signals.
    #[inline]
    pub fn signal(&self, index: u32, value: u64) -> bool {
        self.slot(index).value.fetch_max(value, Ordering::AcqRel) < value
    }

    /// Marks the semaphore failed (the first failure wins). Returns whether this call failed it.
    pub fn fail(&self, index: u32, failure: u32) -> bool {
        self.slot(index).failure.compare_exchange(0, failure + 1, Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    /// Wakes parked host waiters, if any.
    #[inline]
    pub fn notify(&self) {
        if self.notifier.parked.load(Ordering::SeqCst) == 0 {
            return;
        }
        let mut generation = self.notifier.lock.lock().unwrap_or_else(|poison| poison.into_inner());
        *generation = generation.wrapping_add(1);
        self.notifier.condvar.notify_all();
    }

    /// Blocks until `done()` holds or `deadline` passes; `done` is rechecked after every
    /// [`Self::notify`]. Returns whether `done()` held.
    pub fn park_until(&self, deadline: Instant, mut done: impl FnMut() -> bool) -> bool {
        self.notifier.parked.fetch_add(1, Ordering::SeqCst);
        let mut generation = self.notifier.lock.lock().unwrap_or_else(|poison| poison.into_inner());
        let result = loop {
            // Checked under the lock after registering, so a signal cannot slip between the check
            // and the wait: the signaller either sees `parked` or we see its value.
            if done() {
                break true;
            }
            let now = Instant::now();
            if now >= deadline {
                break false;
            }
            let (guard, _) = self
                .notifier
                .condvar
                .wait_timeout(generation, deadline - now)
                .unwrap_or_else(|poison| poison.into_inner());
            generation = guard;
        };
        drop(generation);
        self.notifier.parked.fetch_sub(1, Ordering::SeqCst);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn producer_record_is_exact_only_for_the_values_it_covers() {
        let table = SemaphoreTable::new(4);
        let slot = table.allocate(0).unwrap();
        assert_eq!(table.wait_source(slot, 0), WaitSource::Satisfied);
        assert_eq!(table.wait_source(slot, 1), WaitSource::Unknown);
        let first = Producer { queue: 1, epoch: 7 };
        table.record_queued_signal(slot, 2, first);
        assert_eq!(table.wait_source(slot, 1), WaitSource::Queued(first));
        assert_eq!(table.wait_source(slot, 2), WaitSource::Queued(first));
        assert_eq!(table.wait_source(slot, 3), WaitSource::Unknown);
        let second = Producer { queue: 0, epoch: 9 };
        table.record_queued_signal(slot, 5, second);
        // Value 2 now belongs to an older producer the record no longer names.
        assert_eq!(table.wait_source(slot, 2), WaitSource::Unknown);
        assert_eq!(table.wait_source(slot, 4), WaitSource::Queued(second));
        assert!(table.signal(slot, 2));
        assert!(!table.signal(slot, 1), "a timeline never goes down");
        assert_eq!(table.value(slot), 2);
        assert_eq!(table.wait_source(slot, 2), WaitSource::Satisfied);
        assert_eq!(table.highest_promised(slot), 5);
    }

    #[test]
    fn the_record_carries_its_producers_frontier() {
        let table = SemaphoreTable::new(1);
        let slot = table.allocate(0).unwrap();
        let first = Producer { queue: 1, epoch: 7 };
        let mut reached = Frontier::EMPTY;
        reached.insert(0, 3);
        reached.insert(2, 9);
        table.record_queued_signal_with_frontier(slot, 1, first, &reached);
        assert_eq!(table.queued_frontier(slot, first), Some(reached));
        // A shorter frontier replaces a longer one entirely.
        let second = Producer { queue: 2, epoch: 10 };
        let mut shorter = Frontier::EMPTY;
        shorter.insert(1, 7);
        table.record_queued_signal_with_frontier(slot, 2, second, &shorter);
        assert_eq!(table.queued_frontier(slot, second), Some(shorter));
        assert_eq!(table.queued_frontier(slot, first), None, "a replaced record tells nothing about its producer");
        table.record_queued_signal(slot, 3, first);
        assert_eq!(table.queued_frontier(slot, first), Some(Frontier::EMPTY));
        table.release(slot);
        let reused = table.allocate(0).unwrap();
        assert_eq!(table.queued_frontier(reused, first), None, "a reused slot has no record");
    }

    #[test]
    fn readers_see_a_frontier_matching_the_producer_under_concurrent_records() {
        // The writer alternates two producers, each with its own frontier; a reader asking for
        // one producer's frontier must get exactly that one or nothing, never the other's.
        let producers = [Producer { queue: 1, epoch: 5 }, Producer { queue: 3, epoch: 9 }];
        let frontiers = producers.map(|producer| {
            let mut frontier = Frontier::EMPTY;
            for queue in 0..producer.epoch as u16 - 1 {
                frontier.insert(queue + 10, producer.epoch);
            }
            frontier
        });
        let table = Arc::new(SemaphoreTable::new(1));
        let slot = table.allocate(0).unwrap();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let (table, stop) = (table.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut value = 1;
                while !stop.load(Ordering::Relaxed) {
                    let which = (value % 2) as usize;
                    table.record_queued_signal_with_frontier(slot, value, producers[which], &frontiers[which]);
                    value += 1;
                }
            })
        };
        let mut seen = [0u32; 2];
        let deadline = Instant::now() + std::time::Duration::from_secs(10);
        for round in 0.. {
            let which = round % 2;
            if let Some(frontier) = table.queued_frontier(slot, producers[which]) {
                assert_eq!(frontier, frontiers[which], "{:?}", producers[which]);
                seen[which] += 1;
            }
            if seen.iter().all(|count| *count >= 1000) || Instant::now() > deadline {
                break;
            }
        }
        stop.store(true, Ordering::Relaxed);
        writer.join().unwrap();
        assert!(seen.iter().all(|count| *count > 0), "both producers were read: {seen:?}");
    }

    #[test]
    fn parked_signals_are_promises_without_a_producer() {
        let table = SemaphoreTable::new(1);
        let slot = table.allocate(2).unwrap();
        table.record_parked_signal(slot, 6);
        assert_eq!(table.highest_promised(slot), 6);
        // No producer is known for the parked value, so waits on it still defer.
        assert_eq!(table.wait_source(slot, 3), WaitSource::Unknown);
        table.release(slot);
        let reused = table.allocate(1).unwrap();
        assert_eq!(reused, slot);
        assert_eq!(table.highest_promised(reused), 1, "a reused slot forgets old promises");
    }

    #[test]
    fn a_lower_signal_published_late_keeps_the_higher_promise() {
        let table = SemaphoreTable::new(1);
        let slot = table.allocate(0).unwrap();
        table.record_queued_signal(slot, 5, Producer { queue: 0, epoch: 1 });
        table.record_queued_signal(slot, 3, Producer { queue: 1, epoch: 1 });
        assert_eq!(table.highest_promised(slot), 5);
        table.signal(slot, 3);
        assert_eq!(table.highest_promised(slot), 5);
    }

    #[test]
    fn failure_is_sticky_and_first_wins() {
        let table = SemaphoreTable::new(1);
        let slot = table.allocate(0).unwrap();
        let first = table.record_failure(FailureRecord { status: Some(0x1016), message: "fault".into() });
        let second = table.record_failure(FailureRecord { status: None, message: "later".into() });
        assert!(table.fail(slot, first));
        assert!(!table.fail(slot, second));
        assert_eq!(table.wait_source(slot, 1), WaitSource::Failed(first));
        assert_eq!(table.failure_record(first).unwrap().message, "fault");
    }

    #[test]
    fn a_full_table_refuses_and_released_slots_are_reused() {
        let table = SemaphoreTable::new(1);
        let slots: Vec<u32> = (0..table.capacity()).map(|_| table.allocate(0).unwrap()).collect();
        assert_eq!(table.allocate(0), Err(TableFull { capacity: table.capacity() }));
        table.release(slots[3]);
        assert_eq!(table.allocate(9), Ok(slots[3]));
        assert_eq!(table.value(slots[3]), 9);
    }

    #[test]
    fn parked_waiter_wakes_on_notify() {
        let table = Arc::new(SemaphoreTable::new(1));
        let slot = table.allocate(0).unwrap();
        let waiter = {
            let table = table.clone();
            std::thread::spawn(move || {
                table.park_until(Instant::now() + std::time::Duration::from_secs(10), || table.value(slot) >= 1)
            })
        };
        std::thread::sleep(std::time::Duration::from_millis(5));
        table.signal(slot, 1);
        table.notify();
        assert!(waiter.join().unwrap());
        assert!(!table.park_until(Instant::now() + std::time::Duration::from_millis(2), || false), "times out");
    }
}
