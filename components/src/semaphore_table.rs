//! The hot semaphore state: one dense, chunked array of atomics per device.
//!
//! Any queue reads a slot without taking a lock: its timeline value, whether it failed, and which
//! queued submission will next raise it (the *producer record*). The record is a seqlock so a
//! reader sees a consistent (value, previous value, queue, epoch) tuple; writers (submissions that
//! signal the semaphore) take the seqlock with a compare-and-swap.
//!
//! Slots are recycled through a free list when a semaphore handle is dropped; a submission that
//! signals a semaphore retains its handle, so a slot is never reused while work can still touch it.

use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Instant;

const SLOTS_PER_CHUNK: usize = 1024;

/// One semaphore's atomics (a cache line, so two semaphores never share one).
#[repr(align(64))]
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
}

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

    /// Records that `producer` will raise the semaphore to `value`.
    pub fn record_queued_signal(&self, index: u32, value: u64, producer: Producer) {
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
